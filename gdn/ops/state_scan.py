"""||S_t||_F after every token, for every head, without ever building the states S_t.

Keeping every S_t ([T, HV, K, V] per layer) is out of the question for a long prompt, but its norm is
cheap. Inside a chunk that starts from S0, with the new values U of the UT system (gdn.ops.chunk),
    S_t = e^{gamma_t} S0 + sum_{j<=t} Gamma_tj k_j u_j^T
so
    ||S_t||^2 = e^{2 gamma_t} ||S0||^2 + 2 e^{gamma_t} sum_j Gamma_tj k_j^T S0 u_j
              + sum_ij Gamma_ti Gamma_tj (k_i . k_j)(u_i . u_j).
The decays, the UT solve and the flush threshold are gdn.ops.chunk's own: one solve in the project.
All chunks' state-free parts are batched at once; only S0 -> S0' between chunks is sequential.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F

from gdn.ops.chunk import CHUNK_SIZE, decays, wy_per_head
from gdn.ops.inputs import l2_normalize
from gdn.ops.varlen import sequence_bounds


def state_norm_scan(k, v, g, beta, S0=None, chunk: int = CHUNK_SIZE, cu_seqlens=None):
    """k: [B, T, HK, K] raw keys (L2-normalised here, as the kernel does with use_qk_l2norm_in_kernel);
    v: [B, T, HV, V]; g: [B, T, HV] log decay <= 0; beta: [B, T, HV] in [0, 1]; S0: [B, HV, K, V] or None.
    cu_seqlens: LongTensor [N + 1], N sequences packed in a batch of one (gdn.ops.varlen): each starts
    from its own S0[n] ([N, HV, K, V]) and the final states are [N, HV, K, V].
    Returns norms [B, T, HV] and the final state [B, HV, K, V], float32 (float64 for float64 inputs),
    on the inputs' device."""
    if int(chunk) < 1:
        raise ValueError(f"chunk must be a positive integer, got {chunk}")
    if beta.dim() != 3:
        raise ValueError(f"beta must be [B, T, HV] (one per head) for the norm scan, got shape {tuple(beta.shape)}")
    if cu_seqlens is not None:
        bounds = sequence_bounds(cu_seqlens, k.shape[0], k.shape[1])
        N, HV, K, V = len(bounds) - 1, v.shape[2], k.shape[3], v.shape[3]
        if S0 is not None and tuple(S0.shape) != (N, HV, K, V):
            raise ValueError(f"with cu_seqlens S0 must be [N, HV, K, V] = {(N, HV, K, V)}, got {tuple(S0.shape)}")
        parts = [state_norm_scan(k[:, a:b], v[:, a:b], g[:, a:b], beta[:, a:b], None if S0 is None else S0[n:n + 1],
                                 chunk) for n, (a, b) in enumerate(zip(bounds, bounds[1:]))]
        return torch.cat([norms for norms, _ in parts], dim=1), torch.cat([S for _, S in parts], dim=0)
    B, T, HK, K = k.shape
    HV, V = v.shape[2], v.shape[3]
    dtype = torch.float64 if v.dtype == torch.float64 else torch.float32
    C, N = chunk, -(-T // chunk)
    pad = N * C - T
    # Zero padding is inert (k = 0, beta = 0, g = 0: no write, no decay); padded rows are dropped at the end.
    k = l2_normalize(k.to(dtype)).repeat_interleave(HV // HK, dim=2)      # [B, T, HV, K] value head j -> key head j // r
    k = F.pad(k.transpose(1, 2), (0, 0, 0, pad)).reshape(-1, C, K)       # [B*HV*N, C, K]
    v = F.pad(v.to(dtype).transpose(1, 2), (0, 0, 0, pad)).reshape(-1, C, V)  # [B*HV*N, C, V]
    g = F.pad(g.to(dtype).transpose(1, 2), (0, pad)).reshape(-1, C)     # [B*HV*N, C]
    beta = F.pad(beta.to(dtype).transpose(1, 2), (0, pad)).reshape(-1, C)
    Gamma, decay = decays(g)                                               # [BHN, C, C], [BHN, C]  e^gamma_t
    U0, W = wy_per_head(k, v, beta, Gamma, decay)                          # new values from a zero state are U0 - W S0
    KK = k @ k.transpose(-1, -2)                                           # [BHN, C, C]
    shape5 = lambda x: x.reshape(B, HV, N, *x.shape[1:])                   # [B, HV, N, ...]
    k, U0, W, Gamma, decay, KK = map(shape5, (k, U0, W, Gamma, decay, KK))
    S = torch.zeros(B, HV, K, V, dtype=dtype, device=v.device) if S0 is None else S0.to(dtype).clone()
    U, KS = torch.empty_like(U0), torch.empty_like(U0)
    s0 = torch.empty(B, HV, N, 1, dtype=dtype, device=v.device)
    for n in range(N):                                                     # the only sequential part
        s0[:, :, n] = S.pow(2).sum((-1, -2))[..., None]
        KS[:, :, n] = k[:, :, n] @ S                                       # [B, HV, C, V] what S0 recalls for k_j
        U[:, :, n] = U0[:, :, n] - W[:, :, n] @ S                          # [B, HV, C, V]
        S = decay[:, :, n, -1, None, None] * S + (k[:, :, n] * Gamma[:, :, n, -1, :, None]).transpose(-1, -2) @ U[:, :, n]
    cross = (Gamma * (KS * U).sum(-1)[..., None, :]).sum(-1)               # [B, HV, N, C]
    gram = ((Gamma @ (KK * (U @ U.transpose(-1, -2)))) * Gamma).sum(-1)    # [B, HV, N, C]
    sq = decay ** 2 * s0 + 2 * decay * cross + gram
    norms = sq.clamp(min=0).sqrt().reshape(B, HV, N * C)[..., :T]          # [B, HV, T]
    return norms.transpose(1, 2), S
