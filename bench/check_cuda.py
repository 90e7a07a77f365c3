"""On a CUDA machine: the GPU code paths against the float64 recurrence on the same device.

CI has no GPU, so this is run by hand on the device machine (python bench/check_cuda.py). It prints one
line per check and exits non-zero if any fails: the chunked kernel's all-chunks-batched path (per-head
and per-channel beta, ragged T, grouped heads, alpha = 0 runs), the state-norm scan, and one trace of
the shipped trained model, all on the GPU.
"""
from __future__ import annotations

import math
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gdn.ops import chunk_gated_delta_rule, recurrent_gated_delta_rule, state_norm_scan


def inputs(B, T, HK, HV, K, V, *, per_channel=False, seed=0, device="cuda"):
    gen = torch.Generator().manual_seed(seed)
    rand = lambda *s: torch.randn(*s, generator=gen, dtype=torch.float64)
    q, k, v, S0 = rand(B, T, HK, K), rand(B, T, HK, K), rand(B, T, HV, V), rand(B, HV, K, V)
    g = -3 * torch.rand(B, T, HV, generator=gen, dtype=torch.float64)
    beta = torch.rand(*((B, T, HV, V) if per_channel else (B, T, HV)), generator=gen, dtype=torch.float64)
    return [x.to(device) for x in (q, k, v, g, beta, S0)]


def rel(x, ref):
    return float((x.double() - ref.double()).norm() / ref.double().norm())


def main() -> int:
    if not torch.cuda.is_available():
        print("no CUDA device")
        return 1
    failures = 0

    def check(name, err, tol):
        nonlocal failures
        ok = err < tol
        failures += not ok
        print(f"{'ok  ' if ok else 'FAIL'} {name}: rel. error {err:.1e} (limit {tol:.0e})")

    kw = dict(output_final_state=True, use_qk_l2norm_in_kernel=True)
    for name, shape, per_channel, alpha_zero in [("ragged grouped heads", (2, 333, 2, 4, 64, 64), False, False),
                                                 ("per-channel beta", (1, 200, 2, 4, 16, 32), True, False),
                                                 ("alpha = 0 runs", (1, 300, 1, 2, 64, 64), False, True),
                                                 ("long, CUDA-graph scan", (1, 2100, 2, 4, 64, 64), False, True)]:
        q, k, v, g, beta, S0 = inputs(*shape, per_channel=per_channel)
        if alpha_zero:
            g[:, 10:80] = -math.inf
        o_ref, S_ref = recurrent_gated_delta_rule(q, k, v, g=g, beta=beta, initial_state=S0, **kw)
        o, S = chunk_gated_delta_rule(q, k, v, g=g, beta=beta, initial_state=S0, **kw)
        check(f"chunk float64 {name}", max(rel(o, o_ref), rel(S, S_ref)), 1e-10)
        f32 = [x.float() for x in (q, k, v, g, beta, S0)]
        o, S = chunk_gated_delta_rule(*f32[:3], g=f32[3], beta=f32[4], initial_state=f32[5], **kw)
        check(f"chunk float32 {name}", max(rel(o, o_ref), rel(S, S_ref)), 1e-6)
    # the cached graph replays with new inputs of the same shape (its static buffers are refilled)
    from gdn.ops import scan
    for seed in (1, 2):
        q, k, v, g, beta, S0 = [x.float() for x in inputs(1, 2100, 2, 4, 64, 64, seed=seed)]
        o, S = chunk_gated_delta_rule(q, k, v, g=g, beta=beta, initial_state=S0, **kw)
        saved, scan.MIN_GRAPH_CHUNKS = scan.MIN_GRAPH_CHUNKS, float("inf")
        o_e, S_e = chunk_gated_delta_rule(q, k, v, g=g, beta=beta, initial_state=S0, **kw)
        scan.MIN_GRAPH_CHUNKS = saved
        check(f"chunk float32 graph replay vs eager, seed {seed}", max(rel(o, o_e), rel(S, S_e)), 1e-6)
    print(f"     graphs cached: {len(scan._graphs)}")
    q, k, v, g, beta, S0 = inputs(1, 500, 2, 4, 32, 32)
    norms, S = state_norm_scan(k, v, g, beta, S0)
    _, S_ref = recurrent_gated_delta_rule(q, k, v, g=g, beta=beta, initial_state=S0, **kw)
    check("state_norm_scan final state", rel(S, S_ref), 1e-10)
    check("state_norm_scan last norm", abs(float(norms[0, -1].norm() / S_ref[0].flatten(1).norm(dim=-1).norm()) - 1), 1e-10)
    check_packed_and_options(check)
    from gdn.qwen35 import load_model
    from gdn.qwen35.sources import TRAINED_PATH
    model = load_model(TRAINED_PATH)
    ids = list(range(3, 120))
    cpu = model.trace(ids)
    model.to("cuda")
    gpu = model.trace(torch.tensor(ids, device="cuda"))
    check("trained model logits, GPU vs CPU", rel(gpu.logits.cpu(), cpu.logits), 1e-4)
    return 1 if failures else 0


def check_packed_and_options(check) -> None:
    """cu_seqlens and fla's input forms on the GPU (the Triton path): three packed sequences against three
    separate calls in float32 and against the float64 recurrence, B equal sequences against their packing,
    every launch shape of the walk, the in-kernel gate and beta, and V-first states."""
    from gdn.ops import fused
    from gdn.ops.options import gdn_gate
    bounds = [0, 300, 301, 1000]
    q, k, v, g, beta, _ = inputs(1, 1000, 2, 4, 128, 128)
    S0 = torch.randn(3, 4, 128, 128, dtype=torch.float64, device="cuda")
    kw = dict(output_final_state=True, use_qk_l2norm_in_kernel=True)
    f32 = [x.float() for x in (q, k, v, g, beta, S0)]
    cu = torch.tensor(bounds, device="cuda")
    launches = [(shape, False) for shape in fused.WALK_SHAPES] + [(shape, True) for shape in fused.WALK_SHAPES_WITH_OUTPUT]
    for (columns, warps), in_walk in launches:
        saved = fused.WALK_SHAPES, fused.WALK_SHAPES_WITH_OUTPUT
        fused.WALK_SHAPES = fused.WALK_SHAPES_WITH_OUTPUT = ((columns, warps),)
        fused.OUTPUT_IN_WALK = in_walk
        o, S = chunk_gated_delta_rule(*f32[:3], g=f32[3], beta=f32[4], initial_state=f32[5], cu_seqlens=cu, **kw)
        (fused.WALK_SHAPES, fused.WALK_SHAPES_WITH_OUTPUT), fused.OUTPUT_IN_WALK = saved, "auto"
        columns = f"{columns} columns, outputs by {'the walk' if in_walk else 'their own kernel'}"
        parts = [chunk_gated_delta_rule(*(x[:, a:b] for x in f32[:3]), g=f32[3][:, a:b], beta=f32[4][:, a:b],
                                        initial_state=f32[5][n:n + 1], **kw) for n, (a, b) in enumerate(zip(bounds, bounds[1:]))]
        o_sep, S_sep = torch.cat([p[0] for p in parts], 1), torch.cat([p[1] for p in parts])
        same = max(float((o - o_sep).abs().max()), float((S - S_sep).abs().max()))
        check(f"packed float32 (walk {columns}, {warps} warps) vs separate float32 calls, max abs", same, 1e-6)
        ref = [recurrent_gated_delta_rule(*(x[:, a:b] for x in (q, k, v)), g=g[:, a:b], beta=beta[:, a:b],
                                          initial_state=S0[n:n + 1], **kw) for n, (a, b) in enumerate(zip(bounds, bounds[1:]))]
        o_ref, S_ref = torch.cat([r[0] for r in ref], 1), torch.cat([r[1] for r in ref])
        check(f"packed float32 (walk {columns}) vs float64 recurrence", max(rel(o, o_ref), rel(S, S_ref)), 1e-6)
    # fla's precision, opt-in: one TF32 pass per product (~1e-3), and bfloat16 inputs near their rounding floor,
    # each with the outputs written by the walk and by their own kernel
    for in_walk in (False, True):
        fused.OUTPUT_IN_WALK = in_walk
        o, S = chunk_gated_delta_rule(*f32[:3], g=f32[3], beta=f32[4], initial_state=f32[5], cu_seqlens=cu,
                                      fp32_precision="tf32", **kw)
        check(f"packed float32, fp32_precision='tf32', in walk {in_walk}, vs float64", max(rel(o, o_ref), rel(S, S_ref)),
              5e-3)
        half = [x.bfloat16() for x in (q, k, v)]
        o_half, _ = chunk_gated_delta_rule(*half, g=f32[3], beta=f32[4], initial_state=f32[5], cu_seqlens=cu, **kw)
        exact = [recurrent_gated_delta_rule(*(x[:, a:b].double() for x in half), g=g[:, a:b], beta=beta[:, a:b],
                                            initial_state=S0[n:n + 1], **kw)[0] for n, (a, b) in enumerate(zip(bounds, bounds[1:]))]
        exact = torch.cat(exact, 1)
        floor = rel(exact.bfloat16(), exact)
        check(f"packed bfloat16, in walk {in_walk}, vs float64, in floors ({floor:.1e})", rel(o_half, exact) / floor, 3.0)
    fused.OUTPUT_IN_WALK = "auto"
    o64, S64 = chunk_gated_delta_rule(q, k, v, g=g, beta=beta, initial_state=S0, cu_seqlens=cu.cpu(), **kw)
    check("packed float64 (torch path) vs float64 recurrence", max(rel(o64, o_ref), rel(S64, S_ref)), 1e-10)
    # B = 4 equal sequences and the same tokens packed: one function
    qb, kb, vb, gb, bb, Sb = [x.float() for x in inputs(4, 250, 2, 4, 128, 128, seed=3)]
    o, S = chunk_gated_delta_rule(qb, kb, vb, g=gb, beta=bb, initial_state=Sb, **kw)
    flat = lambda x: x.reshape(1, -1, *x.shape[2:])
    o_p, S_p = chunk_gated_delta_rule(*map(flat, (qb, kb, vb)), g=flat(gb), beta=flat(bb), initial_state=Sb,
                                      cu_seqlens=torch.arange(5, device="cuda") * 250, **kw)
    check("B = 4 vs the same 4 sequences packed, max abs", max(float((o.reshape(o_p.shape) - o_p).abs().max()),
                                                               float((S - S_p).abs().max())), 1e-6)
    # fla's input forms, against the plain call with the forms applied by hand
    a, logits = torch.randn_like(f32[3]), torch.randn_like(f32[4])
    A_log, dt_bias = torch.randn(4, device="cuda"), torch.randn(4, device="cuda")
    o, S = chunk_gated_delta_rule(*f32[:3], g=a, beta=logits, initial_state=f32[5].transpose(-1, -2), cu_seqlens=cu,
                                  use_gate_in_kernel=True, A_log=A_log, dt_bias=dt_bias, use_beta_sigmoid_in_kernel=True,
                                  state_v_first=True, **kw)
    o_ref, S_ref = chunk_gated_delta_rule(*f32[:3], g=gdn_gate(a, A_log, dt_bias), beta=torch.sigmoid(logits),
                                          initial_state=f32[5], cu_seqlens=cu, **kw)
    check("gate, beta sigmoid and V-first in the kernel vs by hand, max abs",
          max(float((o - o_ref).abs().max()), float((S.transpose(-1, -2) - S_ref).abs().max())), 1e-6)


if __name__ == "__main__":
    sys.exit(main())
