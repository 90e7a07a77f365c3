"""The chunked kernel's Triton path (gdn/ops/fused.py), run on this CPU through Triton's interpreter
(TRITON_INTERPRET=1, which must be set before Triton is imported: so in a child process), against the
recurrent kernel in float64. Two recipes run on float32 inputs (the interpreter computes every
product in float32 whichever precision is asked, so the Newton step and the rounding to TF32 are also
checked alone), on inputs
that stress the chunk algebra: a ragged last chunk, two value heads per key head, an initial state, a
gate of -inf, and one key written 80 times over with beta = 1 and no decay; bfloat16 inputs of two
sequences with fast and slow gates; four packed sequences (cu_seqlens), one of them empty."""
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
import itertools, json, torch
from gdn.ops import chunk, fused
from gdn.ops.naive import recurrent_gated_delta_rule
torch.manual_seed(0)
B, T, HK, HV, K, V = 1, 100, 1, 2, 32, 16
q, k = torch.randn(B, T, HK, K), torch.randn(B, T, HK, K)
v, g, beta = torch.randn(B, T, HV, V), -torch.rand(B, T, HV) * 0.5, torch.rand(B, T, HV)
k[:, 10:90] = k[:, 10:11]
g[:, 10:90], beta[:, 10:90] = 0.0, 1.0
g[0, 95, 0] = float("-inf")
S0 = torch.randn(B, HV, K, V) * 0.3
report = {}
RECIPES = {"float32's": fused.Recipe(products=1, refine=True, half_w=False),   # TF32X3, the TF32 solve refined
           "unrefined": fused.Recipe(products=2, refine=False, half_w=False)}  # TF32 (exact here), the solve as it is

def rel(a, b):
    return float((a.double() - b).norm() / b.norm())

def reference(q, k, v, l2norm):
    return recurrent_gated_delta_rule(q.double(), k.double(), v.double(), g=g.double(), beta=beta.double(),
                                      initial_state=S0.double(), output_final_state=True,
                                      use_qk_l2norm_in_kernel=l2norm)

unit_k = k / k.norm(dim=-1, keepdim=True)        # without the kernel's normalisation, keys of norm 1 keep
for l2norm, k_in in ((True, k), (False, unit_k)):   # 80 writes with beta = 1 stable (norm^2 beta <= 2)
    o_ref, S_ref = reference(q, k_in, v, l2norm)
    for name, recipe in RECIPES.items():
        for C in (16, 64):
            for in_walk in (False, True):      # the outputs by their own kernel, or written by the walk
                fused.OUTPUT_IN_WALK = in_walk
                o, S = fused.fused_chunk_forward(q, k_in, v, g, beta, S0.reshape(B * HV, K, V).clone(),
                                                 chunk_size=C, scale=K ** -0.5, l2norm=l2norm, recipe=recipe)
                report[f"l2norm={l2norm} {name} C={C} in_walk={in_walk}"] = [
                    rel(o, o_ref), rel(S.view_as(S_ref), S_ref), str(o.dtype)]
fused.OUTPUT_IN_WALK = "auto"

# fla's precision for float32 (fp32_precision="tf32": one pass of factors rounded to TF32, the solve unrefined),
# through the public call; and a precision that does not exist
o_ref, S_ref = reference(q, k, v, True)
report["tf32"] = {}
for precision in ("tf32x3", "tf32"):
    o, S = chunk.chunk_gated_delta_rule(q, k, v, g, beta, initial_state=S0, output_final_state=True,
                                        use_qk_l2norm_in_kernel=True, fp32_precision=precision)
    report["tf32"][precision] = [rel(o, o_ref), rel(S, S_ref)]
try:
    chunk.chunk_gated_delta_rule(q, k, v, g, beta, fp32_precision="fp16")
except ValueError as err:
    report["tf32"]["unknown"] = str(err)

# the Newton step of the refined solve, alone: from an inverse off by 1e-3 to one off by ~1e-6
import triton, triton.language as tl
from gdn.ops import fused_kernels

@triton.jit
def newton_kernel(a_ptr, x_ptr, out_ptr, C: tl.constexpr):
    at = tl.arange(0, C)[:, None] * C + tl.arange(0, C)[None, :]
    tl.store(out_ptr + at, fused_kernels._newton_step(tl.load(a_ptr + at), tl.load(x_ptr + at), C))

A = torch.randn(64, 64).tril(-1) * 0.15
exact = torch.linalg.inv(torch.eye(64, dtype=torch.float64) + A.double())
rough = (exact * (1 + 1e-3 * torch.randn(64, 64).double())).float().tril()
better = torch.empty(64, 64)
newton_kernel[(1,)](A, rough, better, C=64)
report["newton"] = [rel(rough, exact), rel(better, exact)]

# rounding to TF32: against frexp's mantissa rounded half away from zero at 11 significant bits
@triton.jit
def nearest_kernel(x_ptr, out_ptr, N: tl.constexpr):
    at = tl.arange(0, N)
    tl.store(out_ptr + at, fused_kernels._tf32_nearest(tl.load(x_ptr + at)))

x = torch.randn(1024) * torch.logspace(-30, 30, 1024)
x[:5] = torch.tensor([1 + 2 ** -11, 1 + 2 ** -11 - 2 ** -20, -(1 + 2 ** -11), 2 - 2 ** -12, 0.0])  # ties, a carry
nearest = torch.empty_like(x)
nearest_kernel[(1,)](x, nearest, N=1024)
mantissa, exponent = torch.frexp(x.double())
expected = torch.sign(mantissa) * torch.floor(mantissa.abs() * 2 ** 11 + 0.5) / 2 ** 11 * 2.0 ** exponent
report["nearest"] = [float((nearest.double() - expected).abs().max()), nearest[:5].tolist()]

# bfloat16 inputs: the [C, K] factors stored in half; against float64 on the same (rounded) inputs
qb, kb, vb = (x.bfloat16() for x in (q, k, v))
o_ref, _ = reference(qb, kb, vb, True)
o, _ = fused.fused_chunk_forward(qb, kb, vb, g, beta, S0.reshape(B * HV, K, V).clone(), chunk_size=64,
                                 scale=K ** -0.5, l2norm=True)
report["bfloat16"] = [rel(o, o_ref), rel(o_ref.bfloat16(), o_ref), str(o.dtype)]

# bfloat16 with gates that forget in ~5 tokens and in ~250 (g = -softplus(x - shift)): errors carried by the
# state add up over the chunks it lives, so what the walk reads (the keys decayed to the chunk end) must not
# be rounded to bfloat16 on the way (stored so, the slow gates' error was 1.42x the fast gates' here; now
# 1.07x). Two sequences, two key heads of two value heads each and a ragged last chunk: the walk must read
# its own sequence's rows of its own key head.
report["long memory"] = {}
for shift in (2.0, 6.0):
    gen = torch.Generator().manual_seed(1)
    ql, kl = (torch.randn(2, 300, 2, 32, generator=gen).bfloat16() for _ in range(2))
    vl = torch.randn(2, 300, 4, 32, generator=gen).bfloat16()
    gl = -torch.nn.functional.softplus(torch.randn(2, 300, 4, generator=gen) - shift)
    bl = torch.sigmoid(torch.randn(2, 300, 4, generator=gen))
    ref = chunk.chunk_gated_delta_rule(ql.double(), kl.double(), vl.double(), gl.double(), bl.double(),
                                       use_qk_l2norm_in_kernel=True)[0]
    for in_walk in (False, True):
        fused.OUTPUT_IN_WALK = in_walk
        o, _ = fused.fused_chunk_forward(ql, kl, vl, gl, bl, torch.zeros(8, 32, 32), chunk_size=64,
                                         scale=32 ** -0.5, l2norm=True)
        report["long memory"][f"{shift} in_walk={in_walk}"] = {
            "errors": [rel(o[b, :, h], ref[b, :, h]) for b in range(2) for h in range(4)],
            "floor": rel(ref.bfloat16(), ref), "dtype": str(o.dtype)}
fused.OUTPUT_IN_WALK = "auto"

# packed sequences (cu_seqlens): no chunk crosses a sequence's end and each walk starts from its sequence's own
# state: an empty sequence, one shorter than a chunk, ragged ones; the walk launched narrowest (16 state columns
# per program) and, with WALK_MIN_PROGRAMS = 0, widest
bounds = [0, 20, 20, 100, 170]
gen = torch.Generator().manual_seed(2)
qp, kp = (torch.randn(1, 170, 1, 32, generator=gen) for _ in range(2))
vp = torch.randn(1, 170, 2, 64, generator=gen)
gp, bp = -torch.rand(1, 170, 2, generator=gen), torch.rand(1, 170, 2, generator=gen)
S0p = torch.randn(4, 2, 32, 64, generator=gen) * 0.3
report["packed"] = {}
for in_walk, min_programs in itertools.product((False, True), (10 ** 6, 0)):
    fused.WALK_MIN_PROGRAMS, fused.OUTPUT_IN_WALK = min_programs, in_walk
    o, S = chunk.chunk_gated_delta_rule(qp, kp, vp, gp, bp, initial_state=S0p, output_final_state=True, chunk_size=16,
                                        cu_seqlens=torch.tensor(bounds), use_qk_l2norm_in_kernel=True)
    errors = []
    for n, (a, b) in enumerate(zip(bounds, bounds[1:])):
        o1, S1 = recurrent_gated_delta_rule(*(x[:, a:b].double() for x in (qp, kp, vp)), g=gp[:, a:b].double(),
                                            beta=bp[:, a:b].double(), initial_state=S0p[n:n + 1].double(),
                                            output_final_state=True, use_qk_l2norm_in_kernel=True)
        errors.append([rel(o[:, a:b], o1) if b > a else 0.0, rel(S[n:n + 1], S1)])
    shapes = fused.WALK_SHAPES_WITH_OUTPUT if in_walk else fused.WALK_SHAPES
    report["packed"][f"{fused.walk_launch(8, 64, shapes)[0]} in_walk={in_walk}"] = errors
fused.WALK_MIN_PROGRAMS, fused.OUTPUT_IN_WALK = 128, "auto"
fused.DOUBLING_SOLVE = True
o, S = fused.fused_chunk_forward(q, k, v, g, beta, S0.reshape(B * HV, K, V).clone(), chunk_size=64, scale=K ** -0.5, l2norm=True)
o_ref, S_ref = reference(q, k, v, True)
report["doubling"] = [rel(o, o_ref), rel(S.view_as(S_ref), S_ref)]
fused.DOUBLING_SOLVE = False

# chunk_gated_delta_rule takes this path without autograd, and the torch path under it
calls = []
real = chunk.fused_chunk_forward
chunk.fused_chunk_forward = lambda *a, **kw: calls.append(a[0].shape) or real(*a, **kw)
o_ref, S_ref = reference(q, k, v, True)
o, S = chunk.chunk_gated_delta_rule(q, k, v, g, beta, initial_state=S0, output_final_state=True,
                                    use_qk_l2norm_in_kernel=True)
report["dispatch"] = [len(calls), rel(o, o_ref), rel(S, S_ref)]
vg = v.clone().requires_grad_()
o, _ = chunk.chunk_gated_delta_rule(q, k, vg, g, beta, initial_state=S0, use_qk_l2norm_in_kernel=True)
o.square().sum().backward()
report["autograd"] = [len(calls), rel(o.detach(), o_ref), bool(torch.isfinite(vg.grad).all())]
z = lambda *shape, dtype=torch.float32: torch.zeros(*shape, dtype=dtype)
q1, v1, b1, S1 = z(1, 8, 1, 32), z(1, 8, 1, 32), z(1, 8, 1), z(1, 32, 32)
report["available"] = {
    "yes": fused.fused_available(q1, v1, b1, S1, 64),
    "float64 state": fused.fused_available(q1, v1, b1, z(1, 32, 32, dtype=torch.float64), 64),
    "beta per channel": fused.fused_available(q1, v1, z(1, 8, 1, 32), S1, 64),
    "chunk 24": fused.fused_available(q1, v1, b1, S1, 24),
    "chunk 128": fused.fused_available(q1, v1, b1, S1, 128),
    "K 8": fused.fused_available(z(1, 8, 1, 8), v1, b1, S1, 64),
    "V 256": fused.fused_available(q1, z(1, 8, 1, 256), b1, S1, 64),
    "no tokens": fused.fused_available(z(1, 0, 1, 32), z(1, 0, 1, 32), z(1, 0, 1), S1, 64)}
print(json.dumps(report))
'''


@pytest.fixture(scope="module")
def report():
    env = {**os.environ, "TRITON_INTERPRET": "1", "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", CHILD], env=env, cwd=ROOT, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("l2norm", [True, False])
@pytest.mark.parametrize("recipe", ["float32's", "unrefined"])
@pytest.mark.parametrize("C", [16, 64])
@pytest.mark.parametrize("in_walk", [False, True])
def test_the_kernels_match_the_recurrence_in_float64(report, l2norm, recipe, C, in_walk):
    out_err, state_err, dtype = report[f"l2norm={l2norm} {recipe} C={C} in_walk={in_walk}"]
    assert out_err < 1e-5 and state_err < 1e-5
    assert dtype == "torch.float32"


def test_fp32_precision_tf32_is_flas_precision_and_opt_in(report):
    """fp32_precision="tf32": ~1e-3 from float64 like fla's one TF32 pass (the interpreter rounds the
    factors as the GPU would, so the error is real here), the default stays ~5e-7; a wrong name is refused
    with the names that exist."""
    exact, tf32 = report["tf32"]["tf32x3"], report["tf32"]["tf32"]
    assert max(exact) < 1e-5
    assert 1e-4 < tf32[0] < 5e-3 and tf32[1] < 5e-3
    assert "'tf32'" in report["tf32"]["unknown"] and "'tf32x3'" in report["tf32"]["unknown"]


def test_the_newton_step_squares_the_error_of_a_rough_inverse(report):
    rough, refined = report["newton"]
    assert 5e-4 < rough < 2e-3 and refined < 1e-5


def test_tf32_rounding_is_to_nearest_with_ties_away_from_zero(report):
    worst, firsts = report["nearest"]
    assert worst == 0.0
    assert firsts == [1 + 2 ** -10, 1.0, -(1 + 2 ** -10), 2.0, 0.0]


def test_bfloat16_inputs_stay_near_the_rounding_floor(report):
    err, floor, dtype = report["bfloat16"]
    assert dtype == "torch.bfloat16"
    # the output's own rounding sets the floor; the interpreter truncates to bfloat16 where a GPU rounds
    # (about twice the error: 2.4x the floor here, 1.5x measured on an H200)
    assert floor < err < 3 * floor


@pytest.mark.parametrize("in_walk", [False, True])
def test_bfloat16_error_does_not_grow_with_the_memory_of_the_gates(report, in_walk):
    fast, slow = report["long memory"][f"2.0 in_walk={in_walk}"], report["long memory"][f"6.0 in_walk={in_walk}"]
    # every (sequence, value head) near the floor: the walk read its own keys (and, writing the outputs
    # itself, its own queries and wrote its own rows)
    assert max(fast["errors"]) < 3 * fast["floor"] and max(slow["errors"]) < 3 * slow["floor"]
    assert sum(slow["errors"]) < 1.15 * sum(fast["errors"])
    assert fast["dtype"] == slow["dtype"] == "torch.bfloat16"


def test_chunked_kernel_uses_it_without_autograd_only(report):
    calls, out_err, state_err = report["dispatch"]
    assert calls == 1 and out_err < 1e-5 and state_err < 1e-5
    calls_after, out_err, grads_finite = report["autograd"]
    assert calls_after == 1                      # the torch path ran: the kernels have no backward
    assert out_err < 1e-5 and grads_finite


def test_packed_sequences_match_separate_recurrences(report):
    from gdn.ops import fused
    packed = report["packed"]
    launched = [f"{columns} in_walk=False" for columns, _ in fused.WALK_SHAPES]
    launched += [f"{columns} in_walk=True" for columns, _ in fused.WALK_SHAPES_WITH_OUTPUT]
    assert sorted(packed) == sorted(launched)              # every launch shape of both walks ran
    for errors in packed.values():
        assert len(errors) == 4 and errors[1][0] == 0.0    # the empty sequence: no output, its state passed on
        assert max(max(pair) for pair in errors) < 1e-5


def test_the_doubling_solve_is_the_same_inverse(report):
    """The UT solve's diagonal blocks as a product of squarings (fused.DOUBLING_SOLVE) instead of
    forward substitution: the same function (the interpreter computes in float32 throughout)."""
    assert max(report["doubling"]) < 1e-5


def test_where_it_runs(report):
    assert report["available"] == {"yes": True, "float64 state": False, "beta per channel": False,
                                   "chunk 24": False, "chunk 128": False, "K 8": False, "V 256": False,
                                   "no tokens": False}


def test_not_on_a_cpu_without_the_interpreter():
    from gdn.ops import fused
    if fused.INTERPRETED:
        pytest.skip("this process runs Triton's interpreter")
    z = torch.zeros
    assert not fused.fused_available(z(1, 8, 1, 32), z(1, 8, 1, 32), z(1, 8, 1), z(1, 32, 32), 64)


def test_the_walk_is_widest_that_still_fills_the_gpu():
    """B = 1, 16 heads of V = 128: 16 columns (128 programs, the H200 sweep's best at B = 1); B = 8: 32 columns
    (512 programs; 2.58x fla at T 32768 where 16 columns took 2.97x); a narrow V never gets a block wider
    than itself."""
    from gdn.ops.fused import WALK_SHAPES_WITH_OUTPUT, walk_launch
    assert walk_launch(16, 128) == (16, 4)
    assert walk_launch(8 * 16, 128) == (32, 4)
    assert walk_launch(2, 8)[0] == 8
    # writing the outputs too: 64 columns at B = 8 (256 programs; 0.86-0.92x the time of 32 on an H100)
    assert walk_launch(8 * 16, 128, WALK_SHAPES_WITH_OUTPUT) == (64, 4)
    assert walk_launch(16, 128, WALK_SHAPES_WITH_OUTPUT) == (16, 4)


def test_the_walk_writes_the_outputs_for_one_pass_recipes_only():
    """bfloat16 and float32 "tf32" (one tensor-core pass per product): the walk writes the outputs (1.44x
    fla against 2.24x at B = 8, T 32768 in bfloat16, H100); TF32X3: their own kernel (2.10x against 2.67x)."""
    from gdn.ops import fused
    assert fused.OUTPUT_IN_WALK == "auto"
    assert fused.output_in_walk(fused.recipe_for(torch.bfloat16))
    assert fused.output_in_walk(fused.recipe_for(torch.float32, "tf32"))
    assert not fused.output_in_walk(fused.recipe_for(torch.float32))
