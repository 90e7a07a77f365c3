"""Which products of gdn.ops.fused's bfloat16 path need more than one TF32 pass: a CPU emulation.

(Its findings are in the kernels now: bfloat16 inputs use TF32_NEAREST, "all rna" below, measured on the
H200 at 1.76e-3, as emulated; and the walk reads the raw keys and row factors, "Kd scaled, all rna": 1.72e-3,
1.83e-3 with long memory, not yet timed on the GPU. "The kernels today" below means plain TF32 with Kd
stored, as they were when it was written.)

The three Triton kernels of gdn/ops/fused_kernels.py (prep, walk, output), redone in torch with the same
algorithm and order (the chunk decays, the blocked 16-row solve PREC 2 uses, U, W, Kd, the walk, the
output), elementwise work in float32 and every product through `product(a, b, how)`:

    tf32   one TF32 pass: both factors cut to 10 mantissa bits by the hardware (see below), the sum
           exact, rounded to float32
    rna    one TF32 pass of factors first rounded to nearest (cvt.rna.tf32.f32 on each element, as
           tf32x3 does for its high parts): no extra tensor-core pass; rna_a, rna_b: only the first or
           the second factor so, the other cut as in tf32
    x3     Triton's tf32x3 (its F32DotTC pass): hi = cvt.rna(a), lo = a - hi, lo hi + hi lo + hi hi,
           each pass fed to the tensor core as tf32 (so lo is cut too), accumulated in float32
    fp32   the exact product rounded to float32 (what float32 FMAs on the CUDA cores give)
    bf16   both factors rounded to bfloat16 (a bfloat16 tensor-core product)

How a plain TF32 pass cuts a float32 factor: Triton lowers input_precision="tf32" with no conversion
(the float32 registers go straight to wgmma as .tf32; only tf32x3 converts, with cvt.rna), and NVIDIA
leaves the hardware's use of the low 13 bits unspecified ("10 or more bits"). Truncation is what the
H200 numbers say it does (below); --tf32 rna emulates round-to-nearest instead. Products are summed in
float64 and rounded once to float32: the tensor cores' own accumulation error (~1e-7) is not modelled.

    python bench/fused_precision.py                      # every table row below: T 4096, 16 heads, ~15 min
    python bench/fused_precision.py --heads 4 --T 1024   # seconds; the four validation errors hold to 1e-5
    python bench/fused_precision.py --decay-shift 6      # long memory (see below)
    python bench/fused_precision.py --configs validate --tf32 rna
    python bench/fused_precision.py --doubling           # the UT solve's diagonal blocks by squarings

The doubling solve (fused.DOUBLING_SOLVE: 6 [C,C] products for the diagonal blocks instead of forward
substitution's 15, prep 14.2 -> 9.5 MFLOP per chunk and head) leaves every error as it was: "Kd scaled, all
rna" (the bfloat16 kernels) 1.72e-3 / 1.82e-3 with fast / slow gates and "all x3" 1.66e-3 / 1.76e-3, with
or without it (T 1024, 4 heads, truncating TF32; 2026-12-03).

Errors are relative Frobenius distances of the bfloat16 output from gdn.ops.chunk run in float64 on
the same (rounded) inputs: bench/bench_kernels.py's make_inputs with q, k, v in bfloat16 (g, beta
float32), use_qk_l2norm_in_kernel, C = 64, K = V = 128, as the H200 table. Floor (the float64 output
rounded to bfloat16): 1.66e-3. Errors add roughly in quadrature: 1.80e-3 means 0.7e-3 of arithmetic.

Faithfulness (T 4096, 16 heads; the same to 1e-5 at T 32768 with 4 heads, and with seed 1):

    configuration                     emulated   H200      emulated if the hardware rounded to nearest
    all TF32 (the kernels today)      2.47e-3    2.5e-3    1.76e-3
    all TF32X3                        1.69e-3    1.7e-3    1.69e-3
    TF32X3 in the prep only           2.24e-3    2.2e-3    1.74e-3
    TF32X3 in the walk only           2.46e-3    2.5e-3
    torch path ([C,C] fp32, [K,*] bf16) 1.79e-3  1.8e-3
    float64 emulation vs gdn.ops.chunk float64: 6e-16 (same algorithm)

So the H200 truncates, and the error above the floor is mostly truncation's bias (every factor cut
towards zero), not the 10-bit mantissa: rounding the factors to nearest first (`rna`, one cvt per
element, no extra tensor-core pass) gives all-TF32 1.76e-3.

FLOP per chunk and head (C 64, K = V 128, as the kernels execute them; x3 adds 2 passes of each):
kk 1.05 M, solve_diag 7.86 M (15 full [C,C] products), solve_above 1.57, solve_apply 1.57, u 1.05,
w 1.05 (prep 14.2 M); walk_ws 2.10, walk_kn 2.10 (walk 4.2 M); out_qs 2.10, out_qk 1.05, out_sn 1.05
(output 4.2 M); 22.5 M in all. "extra" below: x3's added passes over all of them.

One product changed, the rest as today (bench inputs):

    product            x3        rna       | all x3 but it tf32 | all rna but it x3 | all rna but it bf16
    kk                 2.47e-3   2.47e-3   | 1.69e-3            | 1.76e-3           | 1.76e-3
    solve (each step)  2.47e-3   2.47e-3   | 1.69e-3            | 1.75-1.76e-3      | 1.76e-3
    u  (L^-1 beta V)   2.23e-3   2.24e-3   | 1.74e-3            | 1.74e-3           | 2.39e-3
    w                  2.47e-3   2.47e-3   | 1.69e-3            | 1.76e-3           | 1.76e-3
    walk_ws (W S)      2.47e-3   2.47e-3   | 1.69e-3            | 1.76e-3           | 1.76e-3
    walk_kn (Kd^T N)   2.46e-3   2.46e-3   | 1.70e-3            | 1.75e-3           | 1.79e-3
    out_qs (Q S)       2.46e-3   2.46e-3   | 1.70e-3            | 1.75e-3           | 1.82e-3
    out_qk (Q K^T)     2.03e-3   2.06e-3   | 1.85e-3            | 1.73e-3           | 2.88e-3
    out_sn (scores N)  2.03e-3   2.06e-3   | 1.85e-3            | 1.73e-3           | 2.89e-3

On these inputs three products carry the error: U and the output's two [C,C] products (their results
stay float32 and go straight into the output; W and Kd are rounded to bfloat16 when stored anyway,
and the state's products hardly count when the gates forget in ~5 tokens). Rounding both factors
matters: rna on the first factor only of u, out_qk, out_sn gives 1.90e-3, on the second only 1.90e-3.

But make_inputs' gates (g = -softplus(randn - 2), mean -0.18) forget fast. With --decay-shift 6 (mean
g -4e-3, ~250 tokens of memory, as a trained model's slow heads may have) the state path matters, and
the bfloat16 storage of Kd (k * decay to the chunk end) most. "Kd scaled": the raw bfloat16 keys
(exact; the walk could read them from k itself, no Kd copy) and a float32 factor per row (the l2
normalisation times the decay to the chunk end), which the walk multiplies into N ([C, BV],
elementwise) before Kd^T N. "W float32" doubles W's bytes in the walk.

    configuration (W, Kd stored bf16 unless said)      bench inputs  long memory  extra passes
    all tf32 (today)                                   2.47e-3       2.85e-3      0
    u, out_qk, out_sn rna                              1.77e-3       2.57e-3      0
    all rna                                            1.76e-3       2.41e-3      0
    Kd scaled, all rna                                 1.72e-3       1.83e-3      0
    W float32, Kd scaled, all rna                      1.72e-3       1.74e-3      0
    W float32, Kd scaled; rna but kk, solve, w tf32    1.72e-3       1.78e-3      0
    W float32, Kd scaled; rna; walk, out_qs bf16       1.82e-3       3.15e-3      0
    u, out_qk, out_sn x3                               1.71e-3       2.54e-3      28% (prep 15%, output 100%)
    rna; u, out_qk, out_sn x3                          1.69e-3       2.39e-3      28%
    Kd scaled; rna; u, out_qk, out_sn x3               1.66e-3       1.80e-3      28%
    W float32, Kd scaled; rna; u, out_qk, out_sn x3    1.66e-3       1.70e-3      28%
    Kd float32, all x3                                 1.66e-3       1.76e-3      200%
    W, Kd float32, all x3                              1.66e-3       1.66e-3      200%
    all x3                                             1.69e-3       2.36e-3      200%
    solve x3 / solve fp32                              2.47e-3 both  (not run)    98% / 0 (CUDA cores)

The cheapest configuration at the floor on the bench inputs: rna (cvt.rna.tf32.f32 on both factors)
for u, out_qk and out_sn only, 1.77e-3, no extra pass (v in u is bfloat16, exact in TF32: only
L^-1 diag(beta) needs the cvt). Robust to long memory as well: rna on every product's factors that are
not bfloat16 already, Kd scaled, W float32: 1.72e-3 / 1.74e-3, still no extra pass. X3 is nowhere
needed; the solve, K K^T and W can stay one truncated TF32 pass on the bench inputs. Not measured
here: what the cvts and W's float32 bytes cost on the GPU. In Triton, rna can be written as integer
ops (bitcast to int32, + 0x1000, & -0x2000, bitcast back: cvt.rna for every finite value), which the
CPU interpreter runs too; inline PTX it cannot. Where one factor is bfloat16 (v in u), tf32x3's
hi x lo pass multiplies zeros: two passes would do.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from anywhere without installing
from gdn.ops.chunk import chunk_gated_delta_rule
from bench.bench_kernels import make_inputs, rel_err

C, BLOCK, FLUSH = 64, 16, -80.0
# The products, in launch order, with their tensor-core FLOP per chunk and head as the kernels execute
# them (C = 64, K = V = 128; the solve's 21 products are full [C, C] x [C, C] ones, mostly zeros).
PRODUCTS = {                                   # name: (kernel, FLOP per chunk and head, what it is)
    "kk": ("prep", 2 * C * C * 128, "K K^T"),
    "solve_diag": ("prep", 15 * 2 * C ** 3, "15 steps: row r of every diagonal 16-block"),
    "solve_above": ("prep", 3 * 2 * C ** 3, "A_b,<b X_<b,<b (3 block rows)"),
    "solve_apply": ("prep", 3 * 2 * C ** 3, "X_bb times that (3 block rows)"),
    "u": ("prep", 2 * C * C * 128, "U = L^-1 beta V"),
    "w": ("prep", 2 * C * C * 128, "W = L^-1 beta e^gamma K"),
    "walk_ws": ("walk", 2 * C * 128 * 128, "W S"),
    "walk_kn": ("walk", 2 * 128 * C * 128, "Kd^T N"),
    "out_qs": ("output", 2 * C * 128 * 128, "Q S"),
    "out_qk": ("output", 2 * C * C * 128, "Q K^T"),
    "out_sn": ("output", 2 * C * C * 128, "scores N"),
}
PREP = ("kk", "solve_diag", "solve_above", "solve_apply", "u", "w")
SOLVE = ("solve_diag", "solve_above", "solve_apply")
WALK, OUTPUT = ("walk_ws", "walk_kn"), ("out_qs", "out_qk", "out_sn")


# ---- rounding

def tf32_cut(x: torch.Tensor, rna: bool) -> torch.Tensor:
    """float32 -> the nearest (rna: ties away, as cvt.rna) or truncated value with 10 mantissa bits."""
    bits = x.contiguous().view(torch.int32)
    if rna:
        bits = bits + 0x1000                                       # half an ulp of tf32 on the magnitude
    return (bits & -0x2000).view(torch.float32)                   # -0x2000 = 0xFFFFE000: low 13 bits off


def product(a: torch.Tensor, b: torch.Tensor, how: str, rna: bool) -> torch.Tensor:
    """a @ b for float32 a, b (batched) the way `how` computes it; float32 out (float64 in: exact).
    rna: whether the hardware's own cut of a float32 factor (in tf32 and x3's low parts) is to nearest."""
    if a.dtype == torch.float64:
        return a @ b
    exact = lambda x, y: x.double() @ y.double()
    if how in ("tf32", "rna", "rna_a", "rna_b"):
        return exact(tf32_cut(a, rna or how in ("rna", "rna_a")), tf32_cut(b, rna or how in ("rna", "rna_b"))).float()
    if how == "bf16":
        return exact(a.bfloat16().float(), b.bfloat16().float()).float()
    if how == "fp32":
        return exact(a, b).float()
    if how == "x3":                                               # F32DotTC's three passes, in its order
        a_hi, b_hi = tf32_cut(a, True), tf32_cut(b, True)
        a_lo, b_lo = tf32_cut(a - a_hi, rna), tf32_cut(b - b_hi, rna)
        acc = exact(a_lo, b_hi).float()
        acc = (exact(a_hi, b_lo) + acc.double()).float()
        return (exact(a_hi, b_hi) + acc.double()).float()
    raise ValueError(how)


# ---- the kernels' arithmetic

def chunk_decays(g: torch.Tensor):
    """g [.., C] -> Gamma [.., C, C], decay [.., C], to_end [.., C] (fused_kernels._chunk_decays)."""
    ri, rj = torch.arange(C)[:, None], torch.arange(C)[None, :]
    D = torch.where(rj < ri, g[..., :, None], 0.0).cumsum(-2)
    flushed = lambda x: torch.where(x < FLUSH, 0.0, x.exp()) if x.dtype == torch.float32 else x.exp()
    Gamma = torch.where(rj <= ri, flushed(D), 0.0)
    return Gamma, flushed(g.cumsum(-1)), flushed(D[..., C - 1, :])


# The UT solve's diagonal blocks as fused.DOUBLING_SOLVE computes them (--doubling): a product of squarings
DOUBLING = [False]


def unit_lower_inverse(A: torch.Tensor, how: dict, rna: bool) -> torch.Tensor:
    """(I + strict_lower(A))^-1 in PREC 2's blocked order (fused_kernels._unit_lower_inverse)."""
    ri, rj = torch.arange(C)[:, None], torch.arange(C)[None, :]
    X = torch.eye(C, dtype=A.dtype).expand(A.shape).clone()
    same_block = ri // BLOCK == rj // BLOCK
    A_diag = torch.where(same_block, A, 0.0)
    mm = lambda a, b: product(a, b, how["solve_diag"], rna)
    if DOUBLING[0]:                                  # (I + A)^-1 = (I - A)(I + A^2)(I + A^4)(I + A^8), A^16 = 0
        A2 = mm(A_diag, A_diag)
        A4 = mm(A2, A2)
        X = X - A_diag
        for power in (A2, A4, mm(A4, A4)):
            X = X + mm(X, power)
    else:                                            # forward substitution, a row of each block at a time
        for r in range(1, BLOCK):
            step = ri % BLOCK == r
            X = torch.where(step, X - mm(torch.where(step, A_diag, 0.0), X), X)
    for b in range(1, C // BLOCK):
        in_b = ri // BLOCK == b
        above = product(torch.where(in_b & (rj < b * BLOCK), A, 0.0), X, how["solve_above"], rna)
        X = X - product(torch.where(in_b & same_block, X, 0.0), above, how["solve_apply"], rna)
    return X


def normalised(x: torch.Tensor) -> torch.Tensor:
    return x * torch.rsqrt((x * x).sum(-1, keepdim=True) + 1e-6)


def emulate(q, k, v, g, beta, how: dict, rna: bool, stored=("bf16", "bf16"), dtype=torch.float32):
    """The three kernels on [B=1, T, H, D] inputs (T a multiple of C); `how`: product name -> tf32 / x3 /
    fp32 / bf16. stored: how W and Kd are stored, "bf16" or "fp32"; Kd also "scaled": the raw bfloat16
    keys (exact) and a float32 factor per row (normalisation times decay to the chunk end), which the
    walk applies to N before Kd^T N. Returns o [T, H, V] in `dtype` (the kernel rounds it to bfloat16)."""
    T, H, K = q.shape[1:]
    n = T // C
    chunks = lambda x: x[0].to(dtype).reshape(n, C, H, -1).permute(2, 0, 1, 3)   # [H, n, C, D]
    q, k, v = chunks(q), chunks(k), chunks(v)
    k_raw, k_factor = k, torch.rsqrt((k * k).sum(-1) + 1e-6)                     # [H, n, C, K], [H, n, C]
    g, beta = chunks(g[..., None])[..., 0], chunks(beta[..., None])[..., 0]      # [H, n, C]
    mm = lambda a, b, name: product(a, b, how[name], rna)
    # prep
    k = normalised(k)
    Gamma, decay, to_end = chunk_decays(g)
    strict = torch.arange(C)[None, :] < torch.arange(C)[:, None]
    A = torch.where(strict, mm(k, k.transpose(-1, -2), "kk") * Gamma * beta[..., :, None], 0.0)
    inv_L_beta = unit_lower_inverse(A, how, rna) * beta[..., None, :]
    U = mm(inv_L_beta, v, "u")
    keep = lambda x, how: x.bfloat16().to(dtype) if how == "bf16" and dtype == torch.float32 else x
    W = keep(mm(inv_L_beta * decay[..., None, :], k, "w"), stored[0])
    scaled = stored[1] == "scaled"
    Kd = k_raw if scaled else keep(k * to_end[..., :, None], stored[1])
    row_factor = k_factor * to_end                                                # [H, n, C], used if scaled
    chunk_decay = decay[..., C - 1, None, None]                                   # [H, n, 1, 1]
    # walk
    S = torch.zeros(H, K, v.shape[-1], dtype=dtype)
    states, new_v = [], []
    for i in range(n):
        states.append(S)
        N = U[:, i] - mm(W[:, i], S, "walk_ws")
        N_rows = N * row_factor[:, i, :, None] if scaled else N
        S = S * chunk_decay[:, i] + mm(Kd[:, i].transpose(-1, -2), N_rows, "walk_kn")
        new_v.append(N)
    states, new_v = torch.stack(states, 1), torch.stack(new_v, 1)                 # [H, n, K, V], [H, n, C, V]
    # output (q's normalisation and scale as the kernel: normalised, then times K^-0.5)
    qs = normalised(q) * K ** -0.5
    scores = mm(qs, k.transpose(-1, -2), "out_qk") * Gamma
    o = mm(qs * decay[..., None], states, "out_qs") + mm(scores, new_v, "out_sn")
    return o.permute(1, 2, 0, 3).reshape(T, H, -1)                                # unrounded: the caller rounds


# ---- configurations

def config(default="tf32", **over) -> dict:
    how = dict.fromkeys(PRODUCTS, default)
    for names, mode in over.items():
        for name in GROUPS.get(names, (names,)):
            how[name] = mode
    return how


GROUPS = {"prep": PREP, "solve": SOLVE, "walk": WALK, "output": OUTPUT,
          "cc_out": ("out_qk", "out_sn"), "ut": ("u", "w"), "key": ("u", "out_qk", "out_sn"),
          "state": ("walk_ws", "walk_kn", "out_qs")}


def configurations(which: str):
    """(label, how, stored) triples: the measured four first, then one product at a time, then groups."""
    bf, f32 = ("bf16", "bf16"), ("fp32", "fp32")
    measured = [("all tf32 (the kernels today)", config(), bf),
                ("all x3", config("x3"), bf),
                ("prep x3", config(prep="x3"), bf),
                ("walk x3", config(walk="x3"), bf)]
    if which == "validate":
        return measured
    each = lambda label, base, mode: [(label.format(name), config(base, **{name: mode}), bf) for name in PRODUCTS]
    singles = (each("{} x3", "tf32", "x3") + each("{} rna", "tf32", "rna")
               + each("all x3 but {} tf32", "x3", "tf32") + [("all rna", config("rna"), bf)]
               + each("all rna but {} x3", "rna", "x3") + each("all rna but {} bf16", "rna", "bf16"))
    groups = [
        ("W, Kd stored float32, all tf32", config(), f32),
        ("W, Kd stored float32, all rna", config("rna"), f32),
        ("W, Kd stored float32, all x3", config("x3"), f32),
        ("W stored float32, all x3", config("x3"), ("fp32", "bf16")),
        ("Kd stored float32, all x3", config("x3"), ("bf16", "fp32")),
        ("Kd scaled, all x3", config("x3"), ("bf16", "scaled")),
        ("W float32, Kd scaled, all x3", config("x3"), ("fp32", "scaled")),
        ("W stored float32, all rna", config("rna"), ("fp32", "bf16")),
        ("Kd stored float32, all rna", config("rna"), ("bf16", "fp32")),
        ("Kd scaled, all rna", config("rna"), ("bf16", "scaled")),
        ("W float32, Kd scaled, all rna", config("rna"), ("fp32", "scaled")),
        ("W float32, Kd scaled, all tf32", config(), ("fp32", "scaled")),
        ("W float32, Kd scaled; u, out_qk, out_sn rna", config(key="rna"), ("fp32", "scaled")),
        ("W float32, Kd scaled; u, out_qk, out_sn x3", config(key="x3"), ("fp32", "scaled")),
        ("W float32, Kd scaled; rna; u, out_qk, out_sn x3", config("rna", key="x3"), ("fp32", "scaled")),
        ("W, Kd float32; u, out_qk, out_sn rna", config(key="rna"), f32),
        ("Kd scaled; rna; u, out_qk, out_sn x3", config("rna", key="x3"), ("bf16", "scaled")),
        ("Kd scaled; rna; walk x3", config("rna", walk="x3"), ("bf16", "scaled")),
        ("W float32, Kd scaled; rna; walk, out_qs bf16", config("rna", state="bf16"), ("fp32", "scaled")),
        ("W float32, Kd scaled; rna; walk_ws bf16", config("rna", walk_ws="bf16"), ("fp32", "scaled")),
        ("W float32, Kd scaled; rna but kk, solve, w tf32", config("rna", kk="tf32", solve="tf32", w="tf32"),
         ("fp32", "scaled")),
        ("W, Kd float32; rna; u, out_qk, out_sn x3", config("rna", key="x3"), f32),
        ("solve x3", config(solve="x3"), bf),
        ("solve fp32", config(solve="fp32"), bf),
        ("output x3", config(output="x3"), bf),
        ("out_qk, out_sn x3", config(cc_out="x3"), bf),
        ("prep + output x3", config(prep="x3", output="x3"), bf),
        ("prep + out_qk, out_sn x3", config(prep="x3", cc_out="x3"), bf),
        ("prep + out_qk, out_sn x3; walk, out_qs bf16", config(prep="x3", cc_out="x3", walk="bf16",
                                                                out_qs="bf16"), bf),
        ("torch path's split: [C,C] fp32, [K,*] bf16", config(prep="fp32", cc_out="fp32", walk="bf16",
                                                               out_qs="bf16"), bf),
        ("rna; walk, out_qs bf16", config("rna", walk="bf16", out_qs="bf16"), bf),
        ("rna; solve fp32", config("rna", solve="fp32"), bf),
        ("rna; prep x3", config("rna", prep="x3"), bf),
        ("rna; kk, solve x3", config("rna", kk="x3", solve="x3"), bf),
        ("rna; kk, solve x3; walk, out_qs bf16", config("rna", kk="x3", solve="x3", walk="bf16", out_qs="bf16"), bf),
        ("rna in prep only", config(prep="rna"), bf),
        ("rna in prep + out_qk, out_sn", config(prep="rna", cc_out="rna"), bf),
        ("u, out_qk, out_sn x3", config(key="x3"), bf),
        ("u, out_qk, out_sn fp32", config(key="fp32"), bf),
        ("u, out_qk, out_sn rna", config(key="rna"), bf),
        ("u, out_qk, out_sn x3; walk, out_qs bf16", config(key="x3", state="bf16"), bf),
        ("u, out_qk, out_sn rna; walk, out_qs bf16", config(key="rna", state="bf16"), bf),
        ("u x3; out_qk, out_sn rna", config(u="x3", cc_out="rna"), bf),
        ("rna; u, out_qk, out_sn x3", config("rna", key="x3"), bf),
        ("rna; u, out_qk, out_sn x3; walk, out_qs bf16", config("rna", key="x3", state="bf16"), bf),
        ("rna; out_qk, out_sn x3", config("rna", cc_out="x3"), bf),
        ("u rna; out_qk, out_sn x3", config(u="rna", cc_out="x3"), bf),
        ("u, out_qk, out_sn rna on the first factor only", config(key="rna_a"), bf),
        ("u rna; out_qk, out_sn rna on the second factor only", config(u="rna", cc_out="rna_b"), bf),
        ("u rna; out_qk rna_a (q); out_sn rna", config(u="rna", out_qk="rna_a", out_sn="rna"), bf),
        ("u rna; out_qk rna; out_sn rna_a (scores)", config(u="rna", out_qk="rna", out_sn="rna_a"), bf),
        ("u rna; out_qk rna; out_sn rna_b (N)", config(u="rna", out_qk="rna", out_sn="rna_b"), bf),
    ]
    return measured + singles + groups


def extra_cost(how: dict) -> tuple[float, dict]:
    """Extra tensor-core passes of x3 (2 per product) over all-tf32, as a share of the kernels' tf32 FLOP
    per chunk and head; and the same per kernel."""
    total = {kern: 0 for kern in ("prep", "walk", "output")}
    extra = dict(total)
    for name, (kern, flop, _) in PRODUCTS.items():
        total[kern] += flop
        extra[kern] += 2 * flop if how[name] == "x3" else 0
    return sum(extra.values()) / sum(total.values()), {kern: extra[kern] / total[kern] for kern in total}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--T", type=int, default=4096)
    p.add_argument("--heads", type=int, default=16)
    p.add_argument("--tf32", choices=("trunc", "rna"), default="trunc", help="how one TF32 pass cuts a factor")
    p.add_argument("--configs", choices=("validate", "all"), default="all", help="validate: the four measured")
    p.add_argument("--only", nargs="*", default=(), help="just the configurations of these labels (exactly)")
    p.add_argument("--seed", type=int, default=0, help="make_inputs' seed")
    p.add_argument("--decay-shift", type=float, default=2.0,
                   help="g = -softplus(randn - shift): 2 keeps ~5 tokens in memory, 6 ~250 (make_inputs)")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--doubling", action="store_true", help="the UT solve's diagonal blocks as fused.DOUBLING_SOLVE")
    args = p.parse_args(argv)
    torch.set_num_threads(args.threads)
    DOUBLING[0] = args.doubling
    q, k, v, g, beta = make_inputs(1, args.T, args.heads, 128, "cpu", seed=args.seed, decay_shift=args.decay_shift)
    q, k, v = (x.to(torch.bfloat16) for x in (q, k, v))
    ref = chunk_gated_delta_rule(*(x.double() for x in (q, k, v, g, beta)), chunk_size=C,
                                 use_qk_l2norm_in_kernel=True)[0][0]                  # [T, H, V]
    print(f"T {args.T}, heads {args.heads}, tf32 {args.tf32}, seed {args.seed}, decay shift {args.decay_shift}: "
          f"mean g {g.mean().item():.2e}; floor (float64 output rounded to bfloat16) "
          f"{rel_err(ref.to(torch.bfloat16).double(), ref):.2e}")
    o64 = emulate(q, k, v, g, beta, config("exact"), False, dtype=torch.float64)
    print(f"emulation in float64 vs gdn.ops.chunk in float64: {((o64 - ref).norm() / ref.norm()).item():.1e}")
    print("\n| configuration | error | extra TF32 passes, all kernels | prep | walk | output |\n|---|---|---|---|---|---|")
    for label, how, stored in configurations(args.configs):
        if args.only and label not in args.only:
            continue
        start = time.perf_counter()
        o = emulate(q, k, v, g, beta, how, args.tf32 == "rna", stored)
        share, per_kernel = extra_cost(how)
        print(f"| {label} | {rel_err(o.to(torch.bfloat16).double(), ref):.2e} | {share:.0%} | {per_kernel['prep']:.0%} "
              f"| {per_kernel['walk']:.0%} | {per_kernel['output']:.0%} |   ({time.perf_counter() - start:.0f} s)",
              flush=True)


if __name__ == "__main__":
    main()
