"""bench/fla_grid.py on a CPU: a stand-in fla package whose chunk kernel must never run, and a test file in
fla's style, so the swap, fla's signature and each verdict (pass, fail, unsupported, not ours, skip) are
checked without a GPU or fla itself."""
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

FAKE_FLA = '''
def chunk_gated_delta_rule(*args, **kwargs):
    raise AssertionError("fla's own chunk kernel ran: the swap did not happen")
chunk_gdn = chunk_gated_delta_rule
'''

FLA_STYLE_TESTS = '''
import pytest
import torch
from fla.ops.gated_delta_rule import chunk_gated_delta_rule


def inputs(T, N=1):
    torch.manual_seed(0)
    q, k = torch.randn(1, T, 2, 8), torch.nn.functional.normalize(torch.randn(1, T, 2, 8), dim=-1)
    v, g = torch.randn(1, T, 2, 8), torch.nn.functional.logsigmoid(torch.rand(1, T, 2))
    return q, k, v, g, torch.rand(1, T, 2), torch.randn(N, 2, 8, 8)


def test_varlen_positional_and_hints():
    q, k, v, g, beta, h0 = inputs(50, N=2)
    cu = torch.LongTensor([0, 20, 50])
    o, ht = chunk_gated_delta_rule(q, k, v, g, beta, 0.3, h0, True, cu_seqlens=cu, cu_seqlens_cpu=cu,
                                   chunk_indices=None, chunk_size=16)
    o1, h1 = chunk_gated_delta_rule(q[:, 20:], k[:, 20:], v[:, 20:], g[:, 20:], beta[:, 20:], scale=0.3,
                                    initial_state=h0[1:], output_final_state=True)
    assert torch.allclose(o[:, 20:], o1, atol=1e-6) and torch.allclose(ht[1:], h1, atol=1e-6)


def test_options_by_keyword():
    q, k, v, g, beta, h0 = inputs(30)
    o, ht = chunk_gated_delta_rule(q=q, k=k, v=v, g=torch.randn(1, 30, 2), beta=torch.randn(1, 30, 2),
                                   initial_state=h0.transpose(-1, -2), output_final_state=True, state_v_first=True,
                                   use_gate_in_kernel=True, A_log=torch.zeros(2), dt_bias=torch.zeros(2),
                                   use_beta_sigmoid_in_kernel=True, allow_neg_eigval=True)
    assert ht.shape == (1, 2, 8, 8) and torch.isfinite(o).all()


def test_context_parallel():
    q, k, v, g, beta, _ = inputs(10)
    chunk_gated_delta_rule(q, k, v, g, beta, cp_context=object())


def test_a_wrong_expectation():
    q, k, v, g, beta, _ = inputs(10)
    o, _ = chunk_gated_delta_rule(q, k, v, g, beta)
    assert o.abs().sum() == 0


def test_another_kernel():
    assert True


def test_skipped_here():
    pytest.skip("not on this hardware")
'''


def test_the_grid_swaps_ours_in_and_sorts_every_case(tmp_path):
    package = tmp_path / "fla" / "ops" / "gated_delta_rule"
    package.mkdir(parents=True)
    for folder in (tmp_path / "fla", tmp_path / "fla" / "ops"):
        (folder / "__init__.py").write_text("")
    (package / "__init__.py").write_text(FAKE_FLA)
    tests = tmp_path / "cases" / "test_fla_style.py"
    tests.parent.mkdir()
    tests.write_text(FLA_STYLE_TESTS)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)])}
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "fla_grid.py"), str(tests), "--out", str(tmp_path)],
                          env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    grid = json.loads((tmp_path / "grid.json").read_text())
    rows = {node.split("::")[-1]: row for node, row in grid["cases"].items()}
    assert rows == {"test_varlen_positional_and_hints": "pass", "test_options_by_keyword": "pass",
                    "test_context_parallel": "unsupported", "test_a_wrong_expectation": "fail",
                    "test_another_kernel": "not ours", "test_skipped_here": "skip"}, done.stdout[-3000:]
    assert "2 pass, 1 fail, 1 unsupported; skipped 1, fla's other kernels 1" in done.stdout
    assert done.returncode == 1                      # a fail or an unsupported case fails the run
