"""The gated delta rule in chunked (WY / UT) form: the same function as gdn.ops.naive, as matrix multiplies.

Each token is an affine map of the state, S_t = A_t S_{t-1} + beta_t k_t v_t^T with
A_t = alpha_t (I - beta_t k_t k_t^T). Inside a chunk of C tokens that starts from the state S0, the
"new values" N (what each token really writes after correcting for the tokens before it in the chunk)
satisfy a unit lower-triangular system (Yang et al. 2024, the UT transform):

    L N = diag(beta) (V - diag(e^gamma) K S0),     L = I + strict_lower(diag(beta) K K^T * Gamma)

with gamma the in-chunk cumulative log decay and Gamma_ij = exp(g_{j+1} + ... + g_i) for j <= i (the
decay from token j to token i, e^{gamma_i - gamma_j}). Its solution splits into a state-free part and
a part linear in S0 (the WY form, Yang et al.'s u and w):

    N   = U - M K S0,  U = L^-1 diag(beta) V,  M = L^-1 diag(beta e^gamma)   (W = M K)
    O   = diag(e^gamma) Q S0 + (Q K^T * Gamma) N                  every token's output
    S_C = e^gamma_C S0 + (diag(e^(gamma_C - gamma)) K)^T N         the state after the chunk

A per-channel beta [.., V] gives every value channel its own L (one triangular solve per channel);
q, k and the score matrix are shared by all channels, so they are never copied per channel.

Precision. Gamma is summed over its own range of tokens, never taken as the difference of two
cumulative sums: after a run of alpha = 0 tokens gamma is -inf (or, clamped, a huge number), and a
float32 difference of two such numbers would lose the ordinary decays in between. In float32, decays
below e^FLUSH are set to exactly 0 (see FLUSH); float64 keeps every decay exactly.

Speed. transformers computes the state-free part for all chunks at once, then scans. On a CPU its big
[B, H, N, C, C] and [B, H, N, C, K] temporaries each cost a fresh page-faulted allocation and a full
pass over memory, which took longer than the matrix multiplies themselves. So on a CPU we go one chunk
at a time: every temporary stays small (the allocator reuses it), the caller's [B, T, H, K] tensors are
read through strided views without transposed copies, and the last chunk is simply shorter (no
padding). One chunk at a time, the new values need no U and W: N = L^-1 diag(beta) (V - diag(e^gamma)
K S0) is one [c, K] x [K, V] and one [c, c] x [c, V] product, where U and W cost two [c, c] x [c, *]
products more (2 c^2 V FLOP per chunk and head, ~9% of the chunk's).

On a GPU memory is cheap and kernel launches are not, so there the state-free part is batched
over all chunks, as in transformers, and so is everything that only needs the state before each chunk:
the chunk's state update, written as one affine map of the state,

    S_C = A S0 + B,    A = e^gamma_C I - (diag(e^(gamma_C - gamma)) K)^T W,    B = (...)^T U

is precomputed for every chunk, the states are scanned with one matmul per chunk (gdn.ops.scan,
replayed from a CUDA graph), and the new values and outputs are then batched again. The FLOP count
of the scan is the same (2 K^2 V per chunk and head, as 4 c K V with c = K / 2). With Triton on
CUDA (and without autograd) none of this torch path runs: gdn.ops.fused computes the same WY form in
three Triton kernels, with the state walked through the chunks in registers (on an H200, 1.4-1.7x faster
than this torch path for float32 inputs and 2.7-4.0x for bfloat16, T 4096 and 32768, B 1 and 8).

Half precision. For bfloat16 (or float16) inputs off the CPU, one product with a [K, *] side, the
state read W S (2 of the 13 MFLOP per chunk and head at c = 64, K = V = 128), reads half factors and
accumulates in float32 inside the GEMM. Everything else stays in float32: the [c, c] products (Q K^T,
K K^T, L^-1 V, L^-1 K, the scores times the new values), the decays, the UT solve, the scan, and the
chunk maps K~^T W, K~^T U and the read Q S. Measured against float64 (bench/bench_kernels.py's inputs,
emulated on a CPU), the maps and Q S in half were harmless for gates that forget in ~5 tokens (1.8e-3,
floor 1.7e-3) but gave 4.0e-3 for gates that remember ~250 (--decay-shift 6): a rounded map carries its
error into every later state, and Q S reads a state slow gates let grow. In float32 they give 1.78e-3
there (1.07x the floor set by rounding the output itself to bfloat16; tests/test_kernels.py checks both).
On a CPU half matmuls are slower than float32 ones on most processors, so half inputs are computed in
float32 there.
"""
from __future__ import annotations

import torch

from gdn.ops.fused import fused_available, fused_chunk_forward, recipe_for
from gdn.ops.inputs import check_inputs, l2_normalize, working_dtype
from gdn.ops.matmul import matmul_dtype, mm, mm_add, mm_add_
from gdn.ops.options import Options, apply_options, final_state_layout
from gdn.ops.scan import scan_block
from gdn.ops.varlen import per_sequence, sequence_bounds

# The chunk length every caller uses unless it has a measured reason not to (the Qwen3.5 model and
# the demo training included): 64 is what fla and transformers use.
CHUNK_SIZE = 64
# In float32, exp(x) for x < -80 (below 2e-35) is flushed to exactly 0. Left alone, float32 turns
# exp(-87) .. exp(-103) into subnormal numbers, and CPU arithmetic on those is 15-80x slower (a real
# head with alpha ~ e^-7 reaches them inside one chunk). float64 has no such range to avoid.
FLUSH = -80.0
# Per-channel beta batches at most this many elements of [chunks, heads, V, c, c] matrices per block.
PER_CHANNEL_BLOCK_ELEMENTS = 1 << 26


def chunk_gated_delta_rule(q, k, v, g, beta, *, chunk_size=CHUNK_SIZE, scale=None, initial_state=None,
                           output_final_state=False, use_qk_l2norm_in_kernel=False, validate=True,
                           cu_seqlens=None, use_gate_in_kernel=False, A_log=None, dt_bias=None,
                           use_beta_sigmoid_in_kernel=False, allow_neg_eigval=False, state_v_first=False,
                           fp32_precision="tf32x3"):
    """Gated delta rule in chunks of `chunk_size` tokens (any T, any chunk size >= 1).

    q, k: [B, T, HK, K] queries and keys; v: [B, T, HV, V] values, HV a multiple of HK.
    g: [B, T, HV] log decay (<= 0; -inf allowed), alpha = exp(g).
    beta: [B, T, HV] write strength in [0, 1], or [B, T, HV, V] per value channel.
    scale: multiplies q; None means K ** -0.5.
    initial_state: [B, HV, K, V] or None (zeros).
    validate: raise ValueError on NaN/Inf inputs, g > 0 or beta outside [0, 1] (False skips the check).
    cu_seqlens: LongTensor [N + 1], N sequences packed in a batch of one (gdn.ops.varlen); then
    initial_state and the final state are [N, HV, K, V], one per sequence.
    use_gate_in_kernel (g is the raw gate input a, with A_log and dt_bias [HV]), use_beta_sigmoid_in_kernel
    (beta as logits; allow_neg_eigval doubles the sigmoid), state_v_first (states [.., V, K]): fla's input
    forms, gdn.ops.options.
    fp32_precision: float32 inputs on the Triton path compute every product in "tf32x3" (~5e-7 from float64,
    the default) or, opt-in, "tf32": fla's precision (~1e-3) for its speed (gdn.ops.fused.FP32_PRECISIONS).
    The torch path computes float32 in full precision either way.
    Returns o: [B, T, HV, V] in v's dtype, and the final state [B, HV, K, V] (float32, or float64
    for float64 inputs; never downcast) when output_final_state, else None.
    """
    if int(chunk_size) < 1:
        raise ValueError(f"chunk_size must be a positive integer, got {chunk_size}")
    chunk_size = int(chunk_size)
    recipe = recipe_for(torch.float32, fp32_precision)          # a ValueError naming the choices, on any path
    opts = Options(use_gate_in_kernel, A_log, dt_bias, use_beta_sigmoid_in_kernel, allow_neg_eigval, state_v_first)
    g, beta, initial_state = apply_options(g, beta, initial_state, opts)
    bounds = None if cu_seqlens is None else sequence_bounds(cu_seqlens, q.shape[0], q.shape[1])
    n_states = q.shape[0] if bounds is None else len(bounds) - 1
    verdict = check_inputs(q, k, v, g, beta, initial_state, validate, beta_max=opts.beta_max,
                           n_states=n_states)                                # on a GPU: read after the work is queued
    dtype = working_dtype(q, k, v, g, beta, initial_state)
    B, T, HK, K = q.shape
    HV, V = v.shape[2], v.shape[3]
    if initial_state is None:
        S = torch.zeros(n_states, HV, K, V, dtype=dtype, device=v.device)
    else:
        S = initial_state.to(dtype).clone(memory_format=torch.contiguous_format)   # a V-first state arrives transposed
    scale = K ** -0.5 if scale is None else scale
    if fused_available(q, v, beta, S, chunk_size) and not grads_needed(q, k, v, g, beta, S):
        o, S = fused_chunk_forward(q, k, v, g, beta, S.view(n_states * HV, K, V), chunk_size=chunk_size,
                                   scale=scale, l2norm=use_qk_l2norm_in_kernel, bounds=bounds,   # Triton
                                   recipe=recipe if v.dtype == torch.float32 else None)
        S = S.view(n_states, HV, K, V)
    elif bounds is not None:                      # the torch path: one sequence at a time, each as its own call
        o, S = per_sequence(chunk_gated_delta_rule, q, k, v, g, beta, bounds, S, chunk_size=chunk_size,
                            scale=scale, use_qk_l2norm_in_kernel=use_qk_l2norm_in_kernel)
    else:
        on_cpu = q.device.type == "cpu"
        o, S = chunk_scan(q, k, v, g, beta, S, chunk_size=chunk_size, scale=scale,
                          l2norm=use_qk_l2norm_in_kernel, chunks_per_block=1 if on_cpu else None,
                          scan_maps=not on_cpu,
                          matmul_dtype=dtype if on_cpu else matmul_dtype(v, dtype))
    verdict()
    return o, final_state_layout(S if output_final_state else None, opts)


def chunk_scan(q, k, v, g, beta, S, *, chunk_size: int, scale: float, l2norm: bool, chunks_per_block: int | None,
               scan_maps: bool = True,
               matmul_dtype: torch.dtype | None = None):
    """The kernel after validation. q, k: [B, T, HK, K]; v: [B, T, HV, V]; g: [B, T, HV];
    beta: [B, T, HV] or [B, T, HV, V]; S: [B, HV, K, V] in the working dtype, the kernel's own copy
    (without autograd it is updated in place: pass a clone of anything you keep).
    Returns o: [B, T, HV, V] in v's dtype and the final state.

    Tokens go in blocks of chunks_per_block equal chunks (None: all full chunks, the GPU choice; 1: the
    CPU choice, see the module docstring): the state-free work of a block is batched over its chunks,
    then a short loop carries the state through them. A ragged tail is a last block of one shorter
    chunk: no padding anywhere. matmul_dtype: what the GEMMs read (None: S's dtype; see Half precision).
    scan_maps (per-head beta): True, the GPU choice, forms U and W and scans the chunks' affine state
    maps when a block holds >= 2 chunks; False, the CPU choice, carries the state chunk by chunk and
    takes the new values straight from the UT system (see Speed). Tests pass chunks_per_block,
    scan_maps and matmul_dtype explicitly to run the GPU path on a CPU."""
    B, T, HK, K = q.shape
    HV, V = v.shape[2], v.shape[3]
    per_channel = beta.dim() == 4
    md = matmul_dtype or S.dtype
    S = S.reshape(B * HV, K, V)                                        # [B*HV, K, V]  heads as one batch dim
    o = torch.empty(v.shape, dtype=v.dtype, device=v.device)          # [B, T, HV, V]
    start = 0
    while start < T:
        c = min(chunk_size, T - start)                                 # chunk length in this block
        n = min(chunks_per_block or T, (T - start) // c)               # chunks in this block
        if per_channel:          # one [c, c] solve per value channel: bound a block's [n*BH, V, c, c] temporaries
            n = max(1, min(n, PER_CHANNEL_BLOCK_ELEMENTS // (B * HV * V * c * c)))
        block = slice(start, start + n * c)
        qb, kb = _load_queries_keys(q[:, block], k[:, block], S.dtype, scale, l2norm, HV // HK)
        chunks = lambda x: _by_chunk(x.to(S.dtype), n)
        beta_b = chunks(beta[:, block]) if per_channel else chunks(beta[:, block, :, None])[..., 0]
        o_block, S = _block(chunks(qb), chunks(kb), chunks(v[:, block]), chunks(g[:, block, :, None])[..., 0],
                            beta_b, S, md, scan_maps)
        o[:, block].view(B, n, c, HV, V).copy_(o_block.view(n, B, HV, c, V).permute(1, 0, 3, 2, 4))
        start += n * c
    return o, S.view(B, HV, K, V)


def _by_chunk(x, n):
    """[B, n*c, H, D] -> [n*B*H, c, D]: chunk-major, then heads; one batch dim for torch.bmm.
    A strided view (no copy) when n = B = 1, the CPU case."""
    B, L, H, D = x.shape
    return x.reshape(B, n, L // n, H, D).permute(1, 0, 3, 2, 4).reshape(n * B * H, L // n, D)


def _load_queries_keys(q, k, dtype, scale, l2norm, group):
    """q, k: [B, c, HK, K] raw slices -> [B, c, HV, K]: normalised (if asked), q scaled, each key head
    serving `group` consecutive value heads (repeat_interleave, as in transformers and fla)."""
    q, k = q.to(dtype), k.to(dtype)
    if l2norm:                                                         # per vector: before or after the repeat
        q, k = l2_normalize(q, scale=scale), l2_normalize(k)           # the scale rides in q's norm factor
    else:
        q = q * scale
    if group > 1:
        q, k = q.repeat_interleave(group, dim=2), k.repeat_interleave(group, dim=2)  # [B, c, HV, K]
    return q, k


# ---- the in-chunk decays and the UT system: shared by this kernel, the state-norm scan and the lessons

def segment_sums(g: torch.Tensor) -> torch.Tensor:
    """g: [N, c] -> [N, c, c], D_ij = g_{j+1} + ... + g_i for j < i: row i's g_i copied below the
    diagonal (tril of a broadcast view: one pass) and summed down the columns; 0 on and above the
    diagonal (an empty sum)."""
    c = g.shape[-1]
    return g[:, :, None].expand(-1, c, c).tril(-1).cumsum(1)


def log_decays(g: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """g: [N, c] log decays of N chunks -> gamma [N, c], the log decay from the chunk start through
    token i, and D [N, c, c], D_ij = g_{j+1} + ... + g_i for j <= i (log decay from token j to token i;
    0 on the diagonal) and -inf above it. D is summed over its own range (see Precision above)."""
    c = g.shape[-1]
    above = torch.ones(c, c, dtype=torch.bool, device=g.device).triu(1)   # [c, c]  column j > row i
    return g.cumsum(-1), segment_sums(g).masked_fill_(above, float("-inf"))


def needs_flush(gamma: torch.Tensor) -> bool:
    """Whether any decay of these chunks can reach float32's subnormal range. Every decay exponent is
    >= the chunk's total log decay gamma_c (g <= 0), so most chunks need no flushing. Off the CPU the
    answer is yes for every float32 input, decided without reading gamma: looking would stop the GPU
    until gamma is known (and break CUDA-graph capture), and flushing there costs one masked fill."""
    if gamma.dtype != torch.float32 or gamma.numel() == 0:
        return False
    return gamma.device.type != "cpu" or bool(gamma[..., -1].min() < FLUSH)


def exp_flushed_(x: torch.Tensor, flush: bool) -> torch.Tensor:
    """exp(x) in place; with flush, arguments below FLUSH give exactly 0 (see FLUSH)."""
    return (x.masked_fill_(x < FLUSH, float("-inf")) if flush else x).exp_()


def ut_system(k: torch.Tensor, beta: torch.Tensor, Gamma: torch.Tensor) -> torch.Tensor:
    """diag(beta) K K^T * Gamma, whose strictly-lower part makes L = I + strict_lower(...).
    k: [N, c, K]; Gamma: [N, c, c]; beta: [N, c] -> [N, c, c], or per channel [N, c, V] -> [N, V, c, c].
    The diagonal and upper triangle are left unmasked: ut_inverse never reads them."""
    KKG = torch.bmm(k, k.transpose(-1, -2)).mul_(Gamma)                 # [N, c, c]
    if beta.dim() == 2:
        return KKG.mul_(beta[:, :, None])                               # row i scaled by beta_i
    return KKG[:, None] * beta.transpose(1, 2)[..., None]               # [N, V, c, c]


def decays(g: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """g: [N, c] -> Gamma [N, c, c] (decay from token j to token i, 0 above the diagonal) and decay [N, c]
    (e^gamma_i, from the chunk start), flushed in float32 where they would be subnormal."""
    gamma = g.cumsum(-1)
    flush = needs_flush(gamma)
    Gamma = exp_flushed_(segment_sums(g), flush)                       # e^0 = 1 above the diagonal: zeroed next
    # (in place unless autograd holds exp's output for its backward; half the cost of masking before exp)
    return Gamma.tril() if Gamma.requires_grad else Gamma.tril_(), exp_flushed_(gamma, flush)


def wy_per_head(k, v, beta, Gamma, decay) -> tuple[torch.Tensor, torch.Tensor]:
    """The state-free part of the WY form for one beta per head: U = L^-1 diag(beta) V [N, c, V] and
    W = L^-1 diag(beta e^gamma) K [N, c, K], so that the new values are U - W S0."""
    inv_L_beta = ut_inverse(ut_system(k, beta, Gamma)) * beta[:, None, :]  # [N, c, c]  L^-1 diag(beta)
    return torch.bmm(inv_L_beta, v), torch.bmm(inv_L_beta * decay[:, None, :], k)


def ut_inverse(A: torch.Tensor) -> torch.Tensor:
    """L^-1 for L = I + strict_lower(A): [..., c, c], unit lower-triangular. solve_triangular with
    unitriangular=True reads neither A's diagonal nor its upper triangle. On a CPU it is solved from the
    right (X L = I, the same X): ~30% faster there than L X = I (MKL, 1 thread, [16, 64, 64]), with the
    same error (~2e-8 in float32); elsewhere as L X = I, the form the GPU timings were measured with."""
    eye = torch.eye(A.shape[-1], dtype=A.dtype, device=A.device)
    return torch.linalg.solve_triangular(A, eye.expand_as(A), upper=False, left=A.device.type != "cpu",
                                         unitriangular=True)


def grads_needed(*tensors: torch.Tensor) -> bool:
    """Whether autograd records this call: then nothing may be updated in place, and the Triton kernels
    (no backward) are not used."""
    return torch.is_grad_enabled() and any(x.requires_grad for x in tensors)


def _block(q, k, v, g, beta, S, md, scan_maps=True):
    """n chunks of c tokens each, chunk-major with the BH = B*H heads inside (row i*BH + h).
    q, k: [n*BH, c, K]; v: [n*BH, c, V]; g: [n*BH, c]; beta: [n*BH, c] or per channel [n*BH, c, V];
    S: [BH, K, V] the state before the block; md: the GEMMs' dtype (mm). Returns the outputs
    [n, BH, c, V] and the state after it."""
    BH = S.shape[0]
    # 1. Everything that does not depend on the state, for all n chunks at once.
    Gamma, decay = decays(g)                                           # [nBH, c, c] token j to i, [nBH, c] e^gamma_i
    if beta.dim() == 2 and not scan_maps:                              # the CPU path: N from its UT system
        inv_L_beta = ut_inverse(ut_system(k, beta, Gamma)) * beta[:, None, :]  # [nBH, c, c]  L^-1 diag(beta)
        k_decayed = k * decay[:, :, None]                              # [nBH, c, K]  diag(e^gamma) K
    elif beta.dim() == 2:
        U, W = wy_per_head(k, v, beta, Gamma, decay)                   # [nBH, c, V], [nBH, c, K]
    else:                                                              # one L per value channel
        inv_L = ut_inverse(ut_system(k, beta, Gamma))                  # [nBH, V, c, c]
        inv_L_beta = inv_L * beta.transpose(1, 2)[:, :, None, :]       # [nBH, V, c, c]
        U = torch.einsum("nvij,njv->niv", inv_L_beta, v)               # [nBH, c, V]
        M = inv_L_beta * decay[:, None, None, :]                       # [nBH, V, c, c]  no [.., V, c, K] W
    scores = torch.bmm(q, k.transpose(1, 2)).mul_(Gamma)               # [nBH, c, c]  lower incl. diagonal
    q_decayed = q * decay[:, :, None]                                  # [nBH, c, K]
    k_to_end = k * Gamma[:, -1, :, None]                               # [nBH, c, K]  decayed to the chunk end
    chunk_decay = decay[:, -1, None, None]                             # [nBH, 1, 1]  e^gamma_c
    n = q.shape[0] // BH
    if scan_maps and beta.dim() == 2 and n > 1:                        # the GPU path
        return scan_block(q_decayed, scores, k_to_end, chunk_decay, U, W, S, md)   # scan affine maps
    # 2. The state, chunk after chunk (rows i*BH ... i*BH + BH - 1 are chunk i). The in-place
    # updates touch only fresh temporaries whose old values autograd does not need.
    in_place = not grads_needed(q, k, v, g, beta, S)
    outs = []
    for rows in (slice(i * BH, (i + 1) * BH) for i in range(q.shape[0] // BH)):
        if beta.dim() == 2 and not scan_maps:
            # N = L^-1 diag(beta) (V - diag(e^gamma) K S0), the UT system itself: without forming U and W
            # (their two [c, c] x [c, *] products) it costs 2c^2 V FLOP fewer per chunk and head (~9%)
            new_v = mm(inv_L_beta[rows], mm_add(v[rows], k_decayed[rows], S, md, alpha=-1), md)  # [BH, c, V]
        elif beta.dim() == 2:
            # in the working dtype: these new values also write the state (in scan_block only the outputs read them)
            new_v = torch.baddbmm(U[rows], W[rows], S, alpha=-1)       # [BH, c, V]  what each token writes
        else:
            new_v = U[rows] - torch.einsum("nvij,njv->niv", M[rows], torch.bmm(k[rows], S))  # [BH, c, V]
        outs.append(torch.bmm(q_decayed[rows], S).baddbmm_(scores[rows], new_v))  # [BH, c, V]  old state + chunk
        # S is the kernel's own copy, and without autograd nothing else reads its old value: decay it in place
        S = S.mul_(chunk_decay[rows]) if in_place else S * chunk_decay[rows]
        S = mm_add_(S, k_to_end[rows].transpose(1, 2), new_v, S.dtype)  # [BH, K, V]
    return (outs[0][None] if len(outs) == 1 else torch.stack(outs)), S  # [n, BH, c, V]
