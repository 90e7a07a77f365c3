"""The gated delta rule in chunked (WY / UT) form: the same function as gdn.recurrent, as matrix multiplies.

Each token is an affine map of the state, S_t = A_t S_{t-1} + beta_t k_t v_t^T with
A_t = alpha_t (I - beta_t k_t k_t^T). Inside a chunk of C tokens that starts from the state S0, the
"new values" U (what each token really writes after correcting for the tokens before it in the chunk)
satisfy a unit lower-triangular system (Yang et al. 2024, the UT transform):

    (I + strict_lower(diag(beta) K K^T * Gamma)) U = diag(beta) (V - diag(e^gamma) K S0)

with gamma the in-chunk cumulative log decay and Gamma_ij = exp(gamma_i - gamma_j) for j <= i. Then

    O   = diag(e^gamma) Q S0 + (Q K^T * Gamma) U                  every token's output
    S_C = e^gamma_C S0 + (diag(e^(gamma_C - gamma)) K)^T U         the state after the chunk

Why it runs chunk by chunk (and not "all chunks at once, then a scan", as transformers does): on a CPU
the big [B, H, N, C, C] and [B, H, N, C, K] temporaries of the batched form each cost a fresh page-faulted
allocation and a full pass over memory, which took longer than the matrix multiplies themselves. Working
on one chunk at a time keeps every temporary small (they are reused by the allocator), reads the caller's
[B, T, H, K] tensors through strided views without transposed copies, and needs no padding: the last
chunk is simply shorter. The matrix multiplies are the same ones, so the FLOP count is unchanged.
"""
from __future__ import annotations

import torch

from gdn.kernel_inputs import check_shapes, l2_normalize, working_dtype

# exp(-200) ~ 1e-87 is zero for every practical purpose; clamping g keeps the in-chunk
# differences gamma_i - gamma_j finite when a token decays fully (alpha = 0, g = -inf).
G_MIN = -200.0


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
    Returns o: [B, T, HV, V] in v's dtype and the final state."""
    B, T, HK, K = q.shape
    HV, V = v.shape[2], v.shape[3]
    dtype = S.dtype
    heads = lambda x: x.to(dtype).transpose(1, 2).reshape(B * HV, x.shape[1], -1)  # [B, c, HV, *] -> [B*HV, c, *]
    S = S.reshape(B * HV, K, V)                                        # [B*HV, K, V]  heads as one batch dim
    o = torch.empty(v.shape, dtype=v.dtype, device=v.device)          # [B, T, HV, V]
    for start in range(0, T, C):
        chunk = slice(start, min(start + C, T))                        # the last chunk may be shorter
        qc, kc = _load_queries_keys(q[:, chunk], k[:, chunk], dtype, qk_scale, l2norm, HV // HK)
        o_chunk, S = _chunk_step(heads(qc), heads(kc), heads(v[:, chunk]),
                                 heads(g[:, chunk, :, None])[..., 0], heads(beta[:, chunk, :, None])[..., 0], S)
        o[:, chunk] = o_chunk.view(B, HV, -1, V).transpose(1, 2)       # [B, c, HV, V]
    return o, S.view(B, HV, K, V)


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


def _chunk_step(q, k, v, g, beta, S):
    """One chunk of c tokens, the B*H heads stacked in the first dim (strided views are fine).
    q, k: [BH, c, K]; v: [BH, c, V]; g, beta: [BH, c]; S: [BH, K, V] the state before the chunk.
    Returns the chunk's output [BH, c, V] and the state after it."""
    c = q.shape[1]
    gamma = g.clamp(min=G_MIN).cumsum(-1)                              # [BH, c]  log decay since chunk start
    causal = torch.ones(c, c, dtype=torch.bool, device=q.device).tril()  # [c, c]  j <= i
    # Gamma_ij = exp(gamma_i - gamma_j) for j <= i: masked before exp so it never overflows.
    Gamma = (gamma[:, :, None] - gamma[:, None, :]).masked_fill(~causal, float("-inf")).exp()  # [BH, c, c]
    # The UT system's strictly-lower part. solve_triangular(unitriangular=True) reads neither the
    # diagonal nor the upper triangle, so A's diagonal (beta_i |k_i|^2) never needs masking.
    A = torch.bmm(k, k.transpose(1, 2)).mul_(Gamma).mul_(beta[:, :, None])  # [BH, c, c]
    eye = torch.eye(c, dtype=q.dtype, device=q.device)
    inv_L = torch.linalg.solve_triangular(A, eye.expand_as(A), upper=False, unitriangular=True)  # [BH, c, c]
    decay = gamma.exp()[:, :, None]                                    # [BH, c, 1]  e^gamma_i
    # new values: diag(beta) (V - diag(e^gamma) K S), pushed through the triangular system
    rhs = torch.baddbmm(v, k * decay, S, alpha=-1).mul_(beta[:, :, None])  # [BH, c, V]
    new_v = torch.bmm(inv_L, rhs)                                      # [BH, c, V]  what each token writes
    scores = torch.bmm(q, k.transpose(1, 2)).mul_(Gamma)               # [BH, c, c]  lower incl. diagonal
    o = torch.baddbmm(torch.bmm(q * decay, S), scores, new_v)          # [BH, c, V]  old state + this chunk
    k_to_end = k * (gamma[:, -1:, None] - gamma[:, :, None]).exp()     # [BH, c, K]  decayed to the chunk end
    S = torch.baddbmm(S * decay[:, -1:], k_to_end.transpose(1, 2), new_v)  # [BH, K, V]
    return o, S
