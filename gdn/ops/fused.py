"""The chunked kernel on a GPU as three Triton kernels (gdn.ops.fused_kernels): the WY form of
gdn.ops.chunk, with every [B, T, H, D] tensor read where it lies (no permuted copies) and the state
walked through the chunks in registers.

    prep    for every chunk and head at once: the in-chunk decays, L = I + strict_lower(diag(beta) K K^T
            * Gamma) solved by forward substitution, U = L^-1 diag(beta) V, W = L^-1 diag(beta e^gamma) K,
            e^gamma_C, and each key's row factor r (its normalisation times its decay to the chunk end:
            the keys decayed to the end are Kd = diag(r) K_raw)
    walk    per head, the only sequential part: S_i (the state entering chunk i) is stored, then
            N_i = U_i - W_i S_i and S_{i+1} = e^gamma_C S_i + Kd_i^T N_i, formed as K_raw^T (diag(r) N_i)
    output  for every chunk and head at once: O_i = diag(e^gamma) Q_i S_i + (Q_i K_i^T * Gamma) N_i

This is the split fla's chunk kernel makes too: the walk holds two of a chunk's four [C, *] x [*, V]
products and everything else runs with the whole GPU busy. The price is the stored states
([BH, n, K, V] float32: 537 MB at T = 32768 and 16 heads of 128 x 128), written once and read once.
With one tensor-core pass per product (bfloat16 inputs, or float32 with fp32_precision="tf32") the walk
writes the outputs itself instead (OUTPUT_IN_WALK: the prep stores each chunk's scores Q K^T * Gamma, and
no state or new value is stored): at B = 8 that took bfloat16 from 2.24x fla's time to 1.44x (T 32768).

Precision (Recipe, below). float32 inputs: every product in TF32X3 (three tensor-core passes of the
factors' high and low parts) but the UT solve's, which are TF32 and then refined by one Newton step in
TF32X3: 4.8e-7 from float64 on the benchmark's inputs (fla: 1.5e-3). bfloat16 / float16 inputs: W is
stored in half (as gdn.ops.chunk's "Half precision" reads it), the state, the new values, U and the row
factors stay float32, the walk reads the raw keys (exact in their own dtype), and every product is one
TF32 pass of factors rounded to nearest first: 1.76e-3 from float64 on an H200 (with Kd stored in half;
the emulation below gives 1.72e-3 with the raw keys), where rounding the exact output to bfloat16 gives
1.66e-3 (fla: 4.2e-3; the torch path 1.8e-3).
Plain TF32 passes gave 2.47e-3: the H200 truncates the factors, and bench/fused_precision.py (a CPU
emulation of these kernels, product by product) showed that bias to be most of the error, and the
rounding to remove it with no extra pass. TF32X3 for bfloat16 reached 1.7e-3 but took 2.9x as long at
T = 32768. bfloat16 tensor-core products (the factors split in two bfloat16 halves) compiled but ended in
an illegal memory access on the H200 (Triton 3.6).
Slow gates (~250 tokens of memory, bench_kernels.py --decay-shift 6): errors carried by the state add up
over the chunks it lives, and a Kd stored in bfloat16 was the largest of them (the emulation: 2.41e-3,
1.76e-3 with fast gates). Raw keys and row factors give 1.83e-3 there (1.72e-3 fast); W in float32 as
well (Recipe.half_w False) 1.74e-3, for twice W's bytes in the walk. Not yet timed on the GPU: the walk
reads the keys where it read a Kd of the same dtype (rows HK x K apart instead of one block), plus C
floats a chunk, and the prep writes C floats instead of a [C, K] Kd: fewer bytes in all. The timings and
the launch shapes below are the stored Kd's.

Measured on an H200 (B = 1, H = 16, K = V = 128, T = 32768, triton.testing.do_bench medians, fla 0.6.0
4.2 ms in float32 and 1.4 ms in bfloat16 the same way): float32 7.8 ms, of which the prep 2.3 (it was
4.2 with the solve row by row); bfloat16 3.2 ms, the prep 1.3. bench/bench_kernels.py --table times
the whole call (input checks included) against fla in alternating rounds. The launch shapes below are
what Triton's autotuning chose (walk: 16 columns, 2 stages) or what was timed against the alternatives
(prep: 4 warps; output: 128 columns, 8 warps, see OUTPUT_SHAPE); fixed, so the first call compiles three kernels instead
of timing a dozen. The walk's width alone depends on the batch: at B = 8 (T 4096 / 32768, float32) 32
columns per program took 2.13x / 2.58x fla's time where 16 took 2.41x / 2.97x (64: 2.2x / 2.6-2.7x, 128:
2.2x / 2.7x), while at B = 1 16 columns stay best (1.58x at T 32768; 32: 1.84x): walk_launch picks the
widest block that still launches WALK_MIN_PROGRAMS programs. At B = 8 every kernel is throughput-bound
and each costs ~3x fla's counterpart in TF32X3 (three passes; bench/README.md has the profile): the default
float32 stays at ~2x fla there (1.94-2.11x on an H100, 2026-12-05), and fp32_precision="tf32" (fla's own
precision, 5e-4 from float64 against fla's 1.5e-3) takes 0.85-0.87x fla's time.

Batches and packed sequences: B sequences of T tokens and N sequences packed by cu_seqlens (gdn.ops.varlen)
are one case to the kernels, rows of [B*T] tokens cut into chunks that never cross a sequence's end. Equal
lengths need no table (chunk i is chunk i % n of sequence i // n); packed ones read each chunk's first row
and its sequence's end from a chunk table (chunk_table), built on the host from the offsets.

Where it runs: on CUDA with Triton (or Triton's CPU interpreter, for the tests) without autograd, for one
beta per head, chunk lengths of 16 to 64 and K, V of 16 to 128 (powers of two: tl.arange and tl.dot need
them). Otherwise gdn.ops.chunk computes in torch. tests/test_fused.py runs the kernels here through the
interpreter against a float64 chunk recurrence and the recurrent kernel.
"""
from __future__ import annotations

import functools
import importlib.util
import os
from dataclasses import dataclass

import torch

# Triton's CPU interpreter (set before Triton is imported): kernels run in Python, for the tests only.
INTERPRETED = os.environ.get("TRITON_INTERPRET") == "1"


@dataclass(frozen=True)
class Recipe:
    """How the kernels compute, by the inputs' dtype (see "Precision")."""
    products: int          # a PREC of gdn.ops.fused_kernels (1 TF32X3, 2 TF32, 3 TF32_NEAREST): all but the solve's
    refine: bool           # the UT solve (always TF32) refined by one Newton step in TF32X3
    half_w: bool           # W stored in the inputs' half dtype, for half inputs (float32 when False)


RECIPES = {torch.float32: Recipe(products=1, refine=True, half_w=False),
           torch.bfloat16: Recipe(products=3, refine=False, half_w=True)}
RECIPES[torch.float16] = RECIPES[torch.bfloat16]
# float32 inputs with fp32_precision="tf32": fla's precision (one TF32 pass per product, the UT solve as it
# comes, ~1e-3), for those who want its speed; the factors rounded to nearest first, as bfloat16's are
# (no extra pass, and without the H200's truncation bias). Opt-in: the default stays TF32X3 (~5e-7).
FP32_PRECISIONS = {"tf32x3": RECIPES[torch.float32], "tf32": Recipe(products=3, refine=False, half_w=False)}
# The walk's launch shapes, widest first: (state columns per program, warps). It has few programs at B = 1
# (heads x V / 16 = 128 on 132 multiprocessors, see "Measured"); with more sequences, fewer and fuller
# programs (see walk_launch). The output has one program per chunk and 128 state columns, so a head's
# scores Q K^T are formed once, not once per 64 columns: on the H200 in float32 (fla 0.6.0 in the same
# rounds) (128, 8) took 0.91-0.93x the time of (64, 4) at B = 1 and 8, T 4096 and 32768 (fp32 at B = 8:
# 2.08x and 2.39x fla, from 2.24x and 2.61x); bfloat16 was not timed before the device time ran out.
WALK_SHAPES = ((32, 4), (16, 4))
WALK_MIN_PROGRAMS = 128
OUTPUT_SHAPE = (128, 8)    # (state columns per program, warps)
# The UT solve's diagonal blocks by a product of 3 squarings (6 products) instead of forward substitution (15)
DOUBLING_SOLVE = False
# The outputs written by the walk itself, chunk by chunk, instead of by a third kernel from stored states:
# the states entering each chunk and the new values ([HV, n, K, V] and [HV, n, C, V] float32, written once
# and read once: 12.8 GB at B = 8, T = 32768, 16 heads of 128) are never stored; the prep stores each
# chunk's scores [C, C] and query factors [C] instead, and the walk does two more products per chunk that
# the next state does not wait on. Measured on an H100 (bench_kernels.py --table --variant, fla 0.6.0 in
# the same rounds), ours / fla, outputs by the walk against by their own kernel:
#   bfloat16        B = 8: 1.14x / 1.59x (T 4096), 1.44x / 2.24x (T 32768); B = 1, T 32768: 1.47x / 1.62x
#   float32 "tf32"  B = 8: 0.83x / 1.03x, 0.87x / 1.10x; B = 1, T 32768: 0.88x / 0.92x
#   float32 TF32X3  B = 8: 2.42x / 1.95x, 2.67x / 2.10x; B = 1, T 32768: 2.43x / 1.63x
# With one pass per product the walk has time to spare for the outputs; with three (TF32X3) the extra
# products lengthen the only sequential kernel more than the stored bytes cost. So "auto" writes them in
# the walk for one-pass recipes, with its own launch shapes (64 columns once 128 programs fill the GPU:
# 0.86-0.92x the time of 32; 128 columns asked for 279 KB of shared memory, over the H100's 227 KB).
# True / False force it (the tests run both ways).
OUTPUT_IN_WALK = "auto"
WALK_SHAPES_WITH_OUTPUT = ((64, 4), (16, 4))
PREP_WARPS = 4             # 8 took 8 % longer in bfloat16, 8 % in float32 (T = 32768)


def _sized(x: int, most: int) -> bool:
    return 16 <= x <= most and x & (x - 1) == 0


def fused_available(q: torch.Tensor, v: torch.Tensor, beta: torch.Tensor, S: torch.Tensor, chunk_size: int) -> bool:
    """Whether gdn.ops.chunk should run these inputs through the Triton kernels (see "Where it runs"); S is
    the float32 (or float64) state they would start from, q at least one token long."""
    if S.dtype != torch.float32 or beta.dim() != 3 or q.shape[1] == 0 or not _sized(chunk_size, 64):
        return False
    if not (_sized(q.shape[-1], 128) and _sized(v.shape[-1], 128)):
        return False
    return (v.device.type == "cuda" or INTERPRETED) and _triton_installed()


@functools.cache
def _triton_installed() -> bool:
    """Looked up, not imported: importing Triton costs ~0.4 s, paid only when a kernel first runs."""
    return importlib.util.find_spec("triton") is not None


def chunk_table(bounds: list[int], C: int, device) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, int]:
    """For packed sequences (cu_seqlens as a host list, gdn.ops.varlen): every chunk's first row [chunks]
    and its sequence's end row [chunks], and each sequence's first chunk [N + 1] (its chunks are
    first[s] .. first[s + 1] - 1), int32 on `device` in one copy; and the number of chunks."""
    starts, stops, first = [], [], [0]
    for bos, eos in zip(bounds, bounds[1:]):
        starts += range(bos, eos, C)
        stops += [eos] * (len(starts) - first[-1])
        first.append(len(starts))
    table = torch.tensor(starts + stops + first, dtype=torch.int32).to(device, non_blocking=True)
    n = len(starts)
    return table[:n], table[n:2 * n], table[2 * n:], n


def walk_launch(walks: int, V: int, shapes: tuple[tuple[int, int], ...] | None = None) -> tuple[int, int]:
    """(state columns per walk program, warps) for `walks` = sequences x value heads: the widest block of
    `shapes` (WALK_SHAPES by default) that still launches WALK_MIN_PROGRAMS programs, else the narrowest
    (see "Measured")."""
    shapes = WALK_SHAPES if shapes is None else shapes
    for columns, warps in shapes:
        if columns <= V and walks * (V // columns) >= WALK_MIN_PROGRAMS:
            return columns, warps
    columns, warps = shapes[-1]
    return min(columns, V), warps


def recipe_for(dtype: torch.dtype, fp32_precision: str = "tf32x3") -> Recipe:
    """The recipe for inputs of `dtype`; fp32_precision ("tf32x3" or "tf32", see FP32_PRECISIONS) picks
    float32's. A half dtype has one recipe."""
    if fp32_precision not in FP32_PRECISIONS:
        raise ValueError(f"fp32_precision must be one of {sorted(FP32_PRECISIONS)}, got {fp32_precision!r}")
    return FP32_PRECISIONS[fp32_precision] if dtype == torch.float32 else RECIPES[dtype]


def output_in_walk(recipe: Recipe) -> bool:
    """Whether the walk writes the outputs itself (see OUTPUT_IN_WALK): for recipes of one pass per product."""
    if OUTPUT_IN_WALK != "auto":
        return bool(OUTPUT_IN_WALK)
    return recipe.products != 1                     # 1: TF32X3 (gdn.ops.fused_kernels)


def fused_chunk_forward(q, k, v, g, beta, S, *, chunk_size: int, scale: float, l2norm: bool,
                        recipe: Recipe | None = None, bounds: list[int] | None = None, fp32_precision: str = "tf32x3"):
    """q, k: [B, T, HK, K]; v: [B, T, HV, V]; g, beta: [B, T, HV]; S: [N*HV, K, V] float32, each
    sequence's state before its first token. bounds: cu_seqlens as a host list (N sequences packed in a
    batch of one, gdn.ops.varlen), or None for B sequences of T tokens (N = B). Returns o [B, T, HV, V] in
    v's dtype and the final states [N*HV, K, V].
    recipe: None for the recipe of v's dtype (and fp32_precision, see recipe_for); the tests run each recipe
    on float32 inputs too."""
    from gdn.ops import fused_kernels as kernels
    B, T, HK, K = q.shape
    HV, V = v.shape[2], v.shape[3]
    C = chunk_size
    half = v.dtype in (torch.bfloat16, torch.float16)
    recipe = recipe_for(v.dtype, fp32_precision) if recipe is None else recipe
    prec = recipe.products
    q, k, v, g, beta = (x.contiguous() for x in (q, k, v, g, beta))
    varlen = bounds is not None
    if varlen:
        starts, stops, seq_chunks, n = chunk_table(bounds, C, v.device)
        N, n_per = len(bounds) - 1, 0
    else:
        N, n_per = B, -(-T // C)
        n = B * n_per
        starts = stops = seq_chunks = S                   # not read: any pointer will do
    rows = dict(T=T, HK=HK, HV=HV, n_per=n_per, n_chunks=n)
    fused_output = output_in_walk(recipe)
    f32 = dict(dtype=torch.float32, device=v.device)
    W = torch.empty(HV, n, C, K, dtype=v.dtype if half and recipe.half_w else torch.float32, device=v.device)
    U = torch.empty(HV, n, C, V, **f32)
    key_rows = torch.empty(HV, n, C, **f32)                                    # Kd = diag(key_rows) K_raw
    chunk_decay = torch.empty(HV, n, **f32)
    # what only one of the two ways needs; the other's pointers are never read (any tensor will do)
    scores = torch.empty(HV, n, C, C, **f32) if fused_output else U            # Q K^T * Gamma per chunk
    query_rows = torch.empty(HV, n, C, **f32) if fused_output else U           # Q = diag(query_rows) Q_raw
    states = U if fused_output else torch.empty(HV, n, K, V, **f32)            # S_i, entering chunk i
    new_v = U if fused_output else torch.empty_like(U)                         # N_i
    if n:
        kernels.prep_kernel[(n, HV)](q, k, v, g, beta, W, U, key_rows, chunk_decay, scores, query_rows, starts, stops,
                                     scale, **rows, C=C, K=K, V=V, GROUP=HV // HK, VARLEN=varlen, L2NORM=l2norm,
                                     PREC=prec, REFINE=recipe.refine, DOUBLING=DOUBLING_SOLVE,
                                     OUTPUT_IN_WALK=fused_output, num_warps=PREP_WARPS)
    o = torch.empty(v.shape, dtype=v.dtype, device=v.device)
    S_end = torch.empty_like(S)
    columns, warps = walk_launch(N * HV, V, WALK_SHAPES_WITH_OUTPUT if fused_output else WALK_SHAPES)
    kernels.walk_kernel[(N * HV, V // columns)](q, k, W, U, key_rows, chunk_decay, scores, query_rows, S.contiguous(),
                                                states, new_v, o, S_end, starts, stops, seq_chunks, **rows, C=C, K=K,
                                                V=V, BV=columns, GROUP=HV // HK, VARLEN=varlen, PREC=prec,
                                                OUTPUT_IN_WALK=fused_output, INTERPRET=INTERPRETED, num_warps=warps,
                                                num_stages=2)
    out_columns, out_warps = min(OUTPUT_SHAPE[0], V), OUTPUT_SHAPE[1]
    if n and not fused_output:
        kernels.output_kernel[(n, HV, V // out_columns)](q, k, g, states, new_v, o, starts, stops, scale, **rows,
                                                         C=C, K=K, V=V, BV=out_columns, GROUP=HV // HK,
                                                         VARLEN=varlen, L2NORM=l2norm, PREC=prec,
                                                         num_warps=out_warps, num_stages=3)
    return o, S_end
