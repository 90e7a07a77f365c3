"""The Triton state pass of the chunked kernel's GPU path (gdn/ops/state_pass.py), run on this CPU through
Triton's interpreter (TRITON_INTERPRET=1, which must be set before Triton is imported: so in a child
process). It is checked against a float64 loop written here from the chunk recurrence, and through the
chunked kernel against the recurrent reference kernel."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

pytest.importorskip("triton")
ROOT = Path(__file__).resolve().parent.parent

CHILD = r'''
import json, torch
from gdn.ops import chunk
from gdn.ops.naive import recurrent_gated_delta_rule
from gdn.ops.state_pass import state_pass, state_pass_available
torch.manual_seed(0)
report = {}

# 1. The pass alone, against the chunk recurrence in float64 with the [c, K] factors rounded to md (the
#    kernel reads them in md and never rounds the state).
n, BH, c, K, V = 5, 3, 16, 32, 32
qd, kd, W = torch.randn(n * BH, c, K), torch.randn(n * BH, c, K) * 0.2, torch.randn(n * BH, c, K) * 0.1
P, U = torch.randn(n * BH, c, c).tril(), torch.randn(n * BH, c, V)
decay, S0 = torch.rand(n * BH, 1, 1), torch.randn(BH, K, V)
for md in (torch.float32, torch.bfloat16):
    out, S_end = state_pass(qd, P, kd, decay, U, W, S0.clone(), md)
    r = lambda x: x.to(md).double()
    S, expected = S0.double(), []
    for i in range(n):
        rows = slice(i * BH, (i + 1) * BH)
        new_v = U[rows].double() - r(W[rows]) @ S
        expected.append(r(qd[rows]) @ S + P[rows].double() @ new_v)
        S = S * decay[rows].double() + r(kd[rows]).transpose(1, 2) @ new_v
    rel = lambda a, b: float((a.double() - b).norm() / b.norm())
    report[str(md)] = [rel(out, torch.stack(expected)), rel(S_end, S), list(out.shape)]

# 2. The chunked kernel's GPU path (every block of full chunks through the pass) against the token loop:
#    a ragged tail, two value heads per key head, an initial state, normalised q and k.
B, T, HK, HV, K, V = 2, 77, 1, 2, 32, 16
q, k = torch.randn(B, T, HK, K), torch.randn(B, T, HK, K)
v, g, beta = torch.randn(B, T, HV, V), -torch.rand(B, T, HV) * 0.5, torch.rand(B, T, HV)
S0 = torch.randn(B, HV, K, V) * 0.3
calls = []
real_pass = chunk.state_pass
chunk.state_pass = lambda *a: calls.append(a[0].shape[0]) or real_pass(*a)
o, S = chunk.chunk_scan(q, k, v, g, beta, S0.reshape(B * HV, K, V).clone(), chunk_size=16, scale=K ** -0.5,
                        l2norm=True, chunks_per_block=None)
o_ref, S_ref = recurrent_gated_delta_rule(q, k, v, g=g, beta=beta, initial_state=S0, output_final_state=True,
                                          use_qk_l2norm_in_kernel=True)
report["kernel"] = [float((o - o_ref).abs().max()), float((S.view_as(S_ref) - S_ref).abs().max()),
                    float(o_ref.abs().max()), calls]
report["available"] = {"float32": state_pass_available(torch.zeros(4, 32, 32), 16),
                       "float64": state_pass_available(torch.zeros(4, 32, 32, dtype=torch.float64), 16),
                       "chunk 24": state_pass_available(torch.zeros(4, 32, 32), 24),
                       "K 8": state_pass_available(torch.zeros(4, 8, 32), 16),
                       "128 heads": state_pass_available(torch.zeros(128, 32, 32), 16)}
import triton
from gdn.ops.state_pass_kernel import _fitting
blocks = [triton.Config({"BV": bv}) for bv in (16, 32, 64)]
report["blocks for V"] = {V: [c.kwargs["BV"] for c in _fitting(blocks, {"V": V})] for V in (16, 32, 128)}
print(json.dumps(report))
'''


@pytest.fixture(scope="module")
def report():
    env = {**os.environ, "TRITON_INTERPRET": "1", "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", CHILD], env=env, cwd=ROOT, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("md", ["torch.float32", "torch.bfloat16"])
def test_the_pass_is_the_chunk_recurrence(report, md):
    out_err, state_err, shape = report[md]
    assert shape == [5, 3, 16, 32]
    assert out_err < 1e-6 and state_err < 1e-6, (out_err, state_err)   # float32 arithmetic, no half rounding


def test_the_chunked_kernel_through_the_pass_matches_the_token_loop(report):
    out_diff, state_diff, scale, calls = report["kernel"]
    assert calls == [4 * 2 * 2], calls          # one pass: 4 full chunks of 16 x (B=2 x HV=2 heads); the tail 13 in torch
    assert out_diff < 1e-5 * max(scale, 1) and state_diff < 1e-5, (out_diff, state_diff)


def test_the_pass_is_used_only_where_it_can_run(report):
    assert report["available"] == {"float32": True, "float64": False, "chunk 24": False, "K 8": False,
                                   "128 heads": False}


def test_autotuning_tries_only_blocks_that_tile_the_state_columns(report):
    assert report["blocks for V"] == {"16": [16], "32": [16, 32], "128": [16, 32, 64]}


def test_without_the_interpreter_a_cpu_tensor_stays_in_torch():
    from gdn.ops.state_pass import state_pass_available
    assert os.environ.get("TRITON_INTERPRET") != "1"
    assert not state_pass_available(torch.zeros(4, 32, 32), 16)
