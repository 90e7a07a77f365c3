"""Causal linear attention in its quadratic form: the rule without the delta correction, written once for
every caller (the recall and update models' linear and decay rules, the real model's "linear" ablation).

    S_t = alpha_t S_{t-1} + beta_t k_t v_t^T,  o_t = S_t^T q_t
    o_i = sum_{j <= i} exp(g_{j+1} + ... + g_i) beta_j (q_i . k_j) v_j          (g = log alpha)

The state is never built: the T x T score matrix is masked (and decayed) and multiplied by V, which is
the cheaper form for the few hundred tokens these callers have. q and k arrive normalised as the caller
wants them (the recall models L2-normalise; the real model also scales q by K^-0.5).
"""
from __future__ import annotations

import torch

from gdn.ops.chunk import log_decays


def causal_linear_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, g: torch.Tensor | None = None,
                            beta: torch.Tensor | None = None) -> torch.Tensor:
    """q, k: [..., T, K]; v: [..., T, V]; g (log decay) and beta (write strength): [..., T] or None (alpha = 1,
    beta = 1) -> o [..., T, V]. The log decays are summed over their own range (chunk.log_decays), so a gate
    at 0 (g = -inf) clears the past instead of turning a difference of two -inf sums into NaN."""
    scores = q @ k.transpose(-1, -2)                                            # [..., T, T]
    if g is None:
        scores = scores.tril()
    else:
        T = g.shape[-1]                         # log_decays takes [N, T]: the leading axes flattened and back
        scores = scores * log_decays(g.reshape(-1, T))[1].exp().view(*g.shape, T)   # -inf above the diagonal: 0
    if beta is not None:
        scores = scores * beta[..., None, :]                                   # beta_j scales column j
    return scores @ v
