"""The gated delta rule in chunked (WY / UT) form: the same function as gdn.recurrent, as matrix multiplies.

Each token is an affine map of the state, S_t = A_t S_{t-1} + beta_t k_t v_t^T with
A_t = alpha_t (I - beta_t k_t k_t^T). Inside a chunk of C tokens that starts from the state S0, the
"new values" N (what each token really writes after correcting for the tokens before it in the chunk)
satisfy a unit lower-triangular system (Yang et al. 2024, the UT transform):

    L N = diag(beta) (V - diag(e^gamma) K S0),     L = I + strict_lower(diag(beta) K K^T * Gamma)

with gamma the in-chunk cumulative log decay and Gamma_ij = exp(gamma_i - gamma_j) for j <= i. Its
solution splits into a state-free part and a part linear in S0 (the WY form, Yang et al.'s u and w):

    N   = U - W S0,    U = L^-1 diag(beta) V,    W = L^-1 diag(beta e^gamma) K
    O   = diag(e^gamma) Q S0 + (Q K^T * Gamma) N                  every token's output
    S_C = e^gamma_C S0 + (diag(e^(gamma_C - gamma)) K)^T N         the state after the chunk

Speed. transformers computes the state-free part for all chunks at once, then scans. On a CPU its big
[B, H, N, C, C] and [B, H, N, C, K] temporaries each cost a fresh page-faulted allocation and a full
pass over memory, which took longer than the matrix multiplies themselves. So on a CPU we go one chunk
at a time: every temporary stays small (the allocator reuses it), the caller's [B, T, H, K] tensors are
read through strided views without transposed copies, and the last chunk is simply shorter (no
padding). On a GPU memory is cheap and kernel launches are not, so there the state-free part is
batched over all chunks, as in transformers. The matrix multiplies, and the FLOP count, are the same.
"""
from __future__ import annotations

import torch

from gdn.kernel_inputs import check_shapes, l2_normalize, working_dtype

# exp(-200) ~ 1e-87 is zero for every practical purpose; clamping g keeps the in-chunk
# differences gamma_i - gamma_j finite when a token decays fully (alpha = 0, g = -inf).
G_MIN = -200.0
# exp(x) for x < -80 is below 2e-35: flushed to exactly 0. Left alone, float32 turns
# exp(-87) .. exp(-103) into subnormal numbers, and CPU arithmetic on those is 15-80x slower
# (a real head with alpha ~ e^-7 hits them inside every 64-token chunk).
FLUSH = -80.0
# Chunks batched together per block, by device type (absent: all of them). See _scan.
CHUNKS_PER_BLOCK = {"cpu": 1}


def chunk_gated_delta_rule(q, k, v, g, beta, *, chunk_size=64, scale=None, initial_state=None,
                           output_final_state=False, use_qk_l2norm_in_kernel=False):
    """Gated delta rule in chunks of `chunk_size` tokens (any T, any chunk size >= 1).

    q, k: [B, T, HK, K] queries and keys; v: [B, T, HV, V] values, HV a multiple of HK.
    g: [B, T, HV] log decay (<= 0; -inf allowed), alpha = exp(g).
    beta: [B, T, HV] write strength in [0, 1], or [B, T, HV, V] per value channel.
    scale: multiplies q; None means K ** -0.5.
    initial_state: [B, HV, K, V] or None (zeros).
    Returns o: [B, T, HV, V] in v's dtype, and the final state [B, HV, K, V] (float32, or float64
    for float64 inputs; never downcast) when output_final_state, else None.
    """
    if int(chunk_size) < 1:
        raise ValueError(f"chunk_size must be a positive integer, got {chunk_size}")
    check_shapes(q, k, v, g, beta, initial_state)
    dtype = working_dtype(q, k, v, g, beta, initial_state)
    B, T, HK, K = q.shape
    HV, V = v.shape[2], v.shape[3]
    if initial_state is None:
        S = torch.zeros(B, HV, K, V, dtype=dtype, device=v.device)
    else:
        S = initial_state.to(dtype).clone()
    qk_scale = K ** -0.5 if scale is None else scale
    if beta.dim() == 4:
        o, S = _per_channel_beta(q, k, v, g, beta, S, int(chunk_size), qk_scale, use_qk_l2norm_in_kernel)
    else:
        o, S = _scan(q, k, v, g, beta, S, int(chunk_size), qk_scale, use_qk_l2norm_in_kernel)
    return o, (S if output_final_state else None)


def _per_channel_beta(q, k, v, g, beta, S, C, qk_scale, l2norm):
    """A per-channel beta gives every value channel its own transition I - beta_c k k^T, so each
    channel is its own one-column delta rule: run V-times more value heads of width 1. Spread head
    h*V + c still reads key head (h*V + c) // (V * HV / HK) = h // (HV / HK), as it should."""
    B, T, HV, V = v.shape
    K = k.shape[-1]
    o, S = _scan(q, k, v.reshape(B, T, HV * V, 1),                    # [B, T, HV*V, 1]
                 g.repeat_interleave(V, dim=2),                        # [B, T, HV*V]
                 beta.reshape(B, T, HV * V),                           # [B, T, HV*V]
                 S.transpose(-1, -2).reshape(B, HV * V, K, 1),         # [B, HV*V, K, 1]
                 C, qk_scale, l2norm)
    return o.reshape(B, T, HV, V), S.reshape(B, HV, V, K).transpose(-1, -2)  # [B, T, HV, V], [B, HV, K, V]


def _scan(q, k, v, g, beta, S, C, qk_scale, l2norm):
    """q, k: [B, T, HK, K]; v: [B, T, HV, V]; g, beta: [B, T, HV]; S: [B, HV, K, V] in the working dtype.
    Returns o: [B, T, HV, V] in v's dtype and the final state.

    Tokens go in blocks of n equal chunks: the state-free work of a block is batched over its chunks,
    then a short loop carries the state through them. On a CPU n = 1 keeps every temporary small (see
    the module docstring); on a GPU, where kernel launches cost more than memory, n covers all full chunks.
    A ragged tail is a last block of one shorter chunk: no padding anywhere."""
    B, T, HK, K = q.shape
    HV, V = v.shape[2], v.shape[3]
    chunks_per_block = CHUNKS_PER_BLOCK.get(q.device.type, max(1, T // C))
    S = S.reshape(B * HV, K, V)                                        # [B*HV, K, V]  heads as one batch dim
    o = torch.empty(v.shape, dtype=v.dtype, device=v.device)          # [B, T, HV, V]
    start = 0
    while start < T:
        c = min(C, T - start)                                          # chunk length in this block
        n = min(chunks_per_block, (T - start) // c)                    # chunks in this block
        block = slice(start, start + n * c)
        qb, kb = _load_queries_keys(q[:, block], k[:, block], S.dtype, qk_scale, l2norm, HV // HK)
        o_block, S = _block(*(_by_chunk(x.to(S.dtype), n) for x in (qb, kb, v[:, block])),
                            *(_by_chunk(x[:, block, :, None].to(S.dtype), n)[..., 0] for x in (g, beta)), S)
        o[:, block].view(B, n, c, HV, V).copy_(o_block.view(n, B, HV, c, V).permute(1, 0, 3, 2, 4))
        start += n * c
    return o, S.view(B, HV, K, V)


def _by_chunk(x, n):
    """[B, n*c, H, D] -> [n*B*H, c, D]: chunk-major, then heads; one batch dim for torch.bmm.
    A strided view (no copy) when n = B = 1, the CPU case."""
    B, L, H, D = x.shape
    return x.reshape(B, n, L // n, H, D).permute(1, 0, 3, 2, 4).reshape(n * B * H, L // n, D)


def _load_queries_keys(q, k, dtype, qk_scale, l2norm, group):
    """q, k: [B, c, HK, K] raw slices -> [B, c, HV, K]: normalised (if asked), q scaled, each key head
    serving `group` consecutive value heads (repeat_interleave, as in transformers and fla)."""
    q, k = q.to(dtype), k.to(dtype)
    if l2norm:
        q, k = l2_normalize(q), l2_normalize(k)                        # per vector: before or after the repeat
    q = q * qk_scale
    if group > 1:
        q, k = q.repeat_interleave(group, dim=2), k.repeat_interleave(group, dim=2)  # [B, c, HV, K]
    return q, k


def _exp_flushed_(x, flush: bool):
    """exp(x) in place; with flush, arguments below FLUSH are sent to exactly 0 (see FLUSH)."""
    return (x.masked_fill_(x < FLUSH, float("-inf")) if flush else x).exp_()


def _block(q, k, v, g, beta, S):
    """n chunks of c tokens each, chunk-major with the BH = B*H heads inside (row i*BH + h).
    q, k: [n*BH, c, K]; v: [n*BH, c, V]; g, beta: [n*BH, c]; S: [BH, K, V] the state before the block.
    Returns the outputs [n, BH, c, V] and the state after the block."""
    BH, c = S.shape[0], q.shape[1]
    # 1. Everything that does not depend on the state, for all n chunks at once.
    gamma = g.clamp(min=G_MIN).cumsum(-1)                              # [nBH, c]  log decay since chunk start
    # Every exponent below is >= the chunk's total log decay gamma_c, so most chunks need no flushing.
    flush = bool(gamma[:, -1].min() < FLUSH)
    above = torch.ones(c, c, dtype=torch.bool, device=q.device).triu(1)  # [c, c]  j > i
    # Gamma_ij = exp(gamma_i - gamma_j) for j <= i: masked before exp so it never overflows.
    Gamma = _exp_flushed_((gamma[:, :, None] - gamma[:, None, :]).masked_fill_(above, float("-inf")), flush)  # [nBH, c, c]
    # The UT system's strictly-lower part. solve_triangular(unitriangular=True) reads neither the
    # diagonal nor the upper triangle, so A's diagonal (beta_i |k_i|^2) never needs masking.
    A = torch.bmm(k, k.transpose(1, 2)).mul_(Gamma * beta[:, :, None])  # [nBH, c, c]
    eye = torch.eye(c, dtype=q.dtype, device=q.device)
    inv_L = torch.linalg.solve_triangular(A, eye.expand_as(A), upper=False, unitriangular=True)  # [nBH, c, c]
    decay = _exp_flushed_(gamma.clone(), flush)                               # [nBH, c]  e^gamma_i
    # WY form (Yang et al.'s u and w): each token writes new_v = U - W S, S the chunk's start state.
    inv_L_beta = inv_L * beta[:, None, :]                              # [nBH, c, c]  L^-1 diag(beta)
    U = torch.bmm(inv_L_beta, v)                                       # [nBH, c, V]
    W = torch.bmm(inv_L_beta * decay[:, None, :], k)                   # [nBH, c, K]  L^-1 diag(beta e^gamma) K
    scores = torch.bmm(q, k.transpose(1, 2)).mul_(Gamma)               # [nBH, c, c]  lower incl. diagonal
    q_decayed = q * decay[:, :, None]                                  # [nBH, c, K]
    k_to_end = k * _exp_flushed_(gamma[:, -1:] - gamma, flush)[:, :, None]    # [nBH, c, K]  decayed to the chunk end
    chunk_decay = decay[:, -1, None, None]                             # [nBH, 1, 1]  e^gamma_c
    # 2. The state, chunk after chunk (rows i*BH ... i*BH + BH - 1 are chunk i). The in-place
    # updates touch only fresh temporaries whose old values autograd does not need.
    outs = []
    for rows in (slice(i * BH, (i + 1) * BH) for i in range(q.shape[0] // BH)):
        new_v = torch.baddbmm(U[rows], W[rows], S, alpha=-1)           # [BH, c, V]  what each token writes
        outs.append(torch.bmm(q_decayed[rows], S).baddbmm_(scores[rows], new_v))  # [BH, c, V]  old state + chunk
        S = (S * chunk_decay[rows]).baddbmm_(k_to_end[rows].transpose(1, 2), new_v)  # [BH, K, V]
    return (outs[0][None] if len(outs) == 1 else torch.stack(outs)), S  # [n, BH, c, V]
