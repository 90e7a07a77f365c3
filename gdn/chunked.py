"""The gated delta rule in chunked (WY / UT) form: the same function as gdn.recurrent, as matrix multiplies.

Each token is an affine map of the state, S_t = A_t S_{t-1} + beta_t k_t v_t^T with
A_t = alpha_t (I - beta_t k_t k_t^T). Inside a chunk of C tokens the unknown "new values"
U = V' (what each token really writes after correcting for the tokens before it in the chunk)
satisfy a unit lower-triangular system (Yang et al. 2024, the UT transform):

    (I + strict_lower(diag(beta) K K^T * Gamma)) U' = diag(beta) (V - diag(e^gamma) K S0)

with gamma the in-chunk cumulative log decay and Gamma_ij = exp(gamma_i - gamma_j). Solving it once
per chunk (batched over all chunks) leaves only a short sequential scan over chunks.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F

from gdn.kernel_inputs import prepare

# exp(-200) ~ 1e-87 is zero for every practical purpose; clamping g keeps the in-chunk
# differences gamma_i - gamma_j finite when a token decays fully (alpha = 0, g = -inf).
G_MIN = -200.0


def chunk_gated_delta_rule(q, k, v, g, beta, *, chunk_size=64, scale=None, initial_state=None,
                           output_final_state=False, use_qk_l2norm_in_kernel=False):
    """Gated delta rule in chunks of `chunk_size` tokens; arguments and returns as
    gdn.recurrent_gated_delta_rule (any T, any chunk size >= 1, HV a multiple of HK)."""
    if int(chunk_size) < 1:
        raise ValueError(f"chunk_size must be a positive integer, got {chunk_size}")
    x = prepare(q, k, v, g, beta, scale=scale, initial_state=initial_state,
                use_qk_l2norm_in_kernel=use_qk_l2norm_in_kernel)
    if x.beta.shape[-1] > 1:
        o, S = _per_channel_beta(x, int(chunk_size))
    else:
        o, S = _chunk_scan(x.q, x.k, x.v, x.g, x.beta[..., 0], x.state, int(chunk_size))
    return o.transpose(1, 2).to(x.out_dtype), (S if output_final_state else None)


def _per_channel_beta(x, C):
    """A per-channel beta gives every value channel its own transition I - beta_c k k^T, so each
    channel is its own one-column delta rule: run V-times more heads of width 1 (fine at toy sizes)."""
    B, H, T, V = x.v.shape
    K = x.k.shape[-1]
    spread = lambda t: t.repeat_interleave(V, dim=1)                    # head h -> heads h*V .. h*V+V-1
    v = x.v.permute(0, 1, 3, 2).reshape(B, H * V, T, 1)                # [B, H*V, T, 1]
    beta = x.beta.permute(0, 1, 3, 2).reshape(B, H * V, T)             # [B, H*V, T]
    S0 = x.state.permute(0, 1, 3, 2).reshape(B, H * V, K, 1)           # [B, H*V, K, 1]
    o, S = _chunk_scan(spread(x.q), spread(x.k), v, spread(x.g), beta, S0, C)
    o = o.reshape(B, H, V, T).permute(0, 1, 3, 2)                      # [B, H, T, V]
    S = S.reshape(B, H, V, K).permute(0, 1, 3, 2)                      # [B, H, K, V]
    return o, S


def _chunk_scan(q, k, v, g, beta, S, C):
    """q, k: [B, H, T, K]; v: [B, H, T, V]; g, beta: [B, H, T]; S: [B, H, K, V] initial state.
    Returns o: [B, H, T, V] and the final state."""
    B, H, T, K = k.shape
    V = v.shape[-1]
    if T == 0:
        return v.new_zeros(B, H, 0, V), S
    N = -(-T // C)                                                     # number of chunks
    pad = N * C - T
    # Zero padding is inert: a padded token has k = 0, beta = 0 and g = 0 (no decay, no write).
    q, k, v = (F.pad(t, (0, 0, 0, pad)).view(B, H, N, C, -1) for t in (q, k, v))  # [B, H, N, C, *]
    g = F.pad(g.clamp(min=G_MIN), (0, pad)).view(B, H, N, C)
    beta = F.pad(beta, (0, pad)).view(B, H, N, C)

    gamma = g.cumsum(-1)                                               # [B, H, N, C]  log decay since chunk start
    causal = torch.ones(C, C, dtype=torch.bool, device=k.device).tril()  # [C, C]  j <= i
    # Gamma_ij = exp(gamma_i - gamma_j) for j <= i: masked before exp so it never overflows.
    Gamma = (gamma[..., :, None] - gamma[..., None, :]).masked_fill(~causal, float("-inf")).exp()  # [B, H, N, C, C]

    k_beta = k * beta[..., None]                                       # [B, H, N, C, K]
    strict = (k_beta @ k.transpose(-1, -2) * Gamma).tril(-1)           # [B, H, N, C, C]
    eye = torch.eye(C, dtype=k.dtype, device=k.device)
    inv_L = torch.linalg.solve_triangular(strict + eye, eye.expand_as(strict),
                                          upper=False, unitriangular=True)  # [B, H, N, C, C]
    U = inv_L @ (v * beta[..., None])                                  # [B, H, N, C, V]
    W = inv_L @ (k_beta * gamma.exp()[..., None])                      # [B, H, N, C, K]
    scores = q @ k.transpose(-1, -2) * Gamma                           # [B, H, N, C, C]  lower incl. diagonal
    q_decayed = q * gamma.exp()[..., None]                             # [B, H, N, C, K]
    decay_to_end = (gamma[..., -1:] - gamma).exp()                     # [B, H, N, C]
    k_to_end = k * decay_to_end[..., None]                             # [B, H, N, C, K]
    chunk_decay = gamma[..., -1].exp()                                 # [B, H, N]

    out = torch.empty(B, H, N, C, V, dtype=v.dtype, device=v.device)
    for n in range(N):
        new_v = U[:, :, n] - W[:, :, n] @ S                            # [B, H, C, V]  what each token really writes
        out[:, :, n] = q_decayed[:, :, n] @ S + scores[:, :, n] @ new_v  # [B, H, C, V]
        S = chunk_decay[:, :, n, None, None] * S + k_to_end[:, :, n].transpose(-1, -2) @ new_v  # [B, H, K, V]
    return out.view(B, H, N * C, V)[:, :, :T], S
