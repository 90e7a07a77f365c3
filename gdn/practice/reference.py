"""The judge's answers: every exercise's reference solution in float64, and the rule's classic mistakes.

Nothing here is ever sent to the browser or into the child that runs a learner's code (runner.py binds only
harness.py into the sandbox). Shapes follow fla: q, k [B, T, H, K]; v [B, T, H, V]; g, beta [B, T, H];
the memory table S [B, H, K, V] (a key reads its row: S^T k).
"""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from gdn.ops.naive import recurrent_gated_delta_rule

F64 = torch.float64


def read(S, q):
    """o = S^T q for every batch and head. S [B, H, K, V], q [B, H, K] -> [B, H, V]."""
    return torch.einsum("bhkv,bhk->bhv", S.to(F64), q.to(F64))


def four_stages(S, k, v, alpha, beta):
    """One token on one head, stage by stage. S [K, V], k [K], v [V] -> decayed [K, V], prediction [V],
    error [V] (v - prediction, before beta), new S [K, V]."""
    S, k, v = S.to(F64), k.to(F64), v.to(F64)
    decayed = alpha * S                                  # [K, V]
    prediction = decayed.T @ k                           # [V]   what the decayed table holds for k
    error = v - prediction                               # [V]
    return decayed, prediction, error, decayed + beta * torch.outer(k, error)   # [K, V]  written along k


def gates(a, b, A_log, dt_bias):
    """Qwen3.5's gates from its projections a, b [B, T, H] and per-head A_log, dt_bias [H]:
    g = -exp(A_log) * softplus(a + dt_bias) <= 0 (alpha = exp g), beta = sigmoid(b)."""
    g = -torch.exp(A_log.to(F64)) * F.softplus(a.to(F64) + dt_bias.to(F64))    # [B, T, H]
    return g, torch.sigmoid(b.to(F64))


def half_life(alpha: float) -> float:
    """Tokens until alpha^n = 1/2."""
    return math.log(0.5) / math.log(alpha)


def delta_rule(q, k, v, g, beta, S=None):
    """The chapter's exercise: q, k L2-normalised inside, q scaled by K^-1/2; o [B, T, H, V], final S
    [B, H, K, V], both float64 here."""
    o, S_T = recurrent_gated_delta_rule(q.to(F64), k.to(F64), v.to(F64), g=g.to(F64), beta=beta.to(F64),
                                        initial_state=None if S is None else S.to(F64),
                                        output_final_state=True, use_qk_l2norm_in_kernel=True)
    return o, S_T


def head_recurrence(q, k, v, g, beta, S):
    """One head, no normalisation, no scale (the chunk exercise): q, k [C, K], v [C, V], g, beta [C], S [K, V]."""
    o, S_T = recurrent_gated_delta_rule(q[None, :, None].to(F64), k[None, :, None].to(F64), v[None, :, None].to(F64),
                                        g=g[None, :, None].to(F64), beta=beta[None, :, None].to(F64), scale=1.0,
                                        initial_state=S[None, None].to(F64), output_final_state=True)
    return o[0, :, 0], S_T[0, 0]


# -- one token of the recurrence, right and wrong -----------------------------------------------------------
# Each classic mistake is the one-token update a learner who makes it writes. From the reference table
# before token t, the judge runs each of them and names the one that lands where the learner's did.

MISTAKES = {            # name -> the stage it goes wrong in
    "transposed_write": "write",
    "read_before_decay": "read",
    "decay_after_write": "read",
    "beta_on_v": "error",
    "no_decay": "decay",
    "g_as_alpha": "decay",
    "no_qk_norm": "read",
    "query_before_write": "query",
    "no_scale": "query",
}


def token_step(S, q, k, v, g, beta, mistake: str | None = None):
    """Token t on every batch and head: S [B, H, K, V], q, k [B, H, K] (raw), v [B, H, V], g, beta [B, H].
    Returns (S after the token, o_t [B, H, V]) as the right rule, or as `mistake` writes it."""
    S, q, k, v, g, beta = (x.to(F64) for x in (S, q, k, v, g, beta))
    K = k.shape[-1]
    if mistake != "no_qk_norm":
        q = q / torch.sqrt((q * q).sum(-1, keepdim=True) + 1e-6)
        k = k / torch.sqrt((k * k).sum(-1, keepdim=True) + 1e-6)
    if mistake != "no_scale":
        q = q * K ** -0.5
    alpha = {"no_decay": torch.ones_like(g), "g_as_alpha": g}.get(mistake, g.exp())[..., None, None]
    read_from = S if mistake in ("read_before_decay", "decay_after_write") else alpha * S
    prediction = torch.einsum("bhkv,bhk->bhv", read_from, k)                  # [B, H, V]
    error = beta[..., None] * v - prediction if mistake == "beta_on_v" else beta[..., None] * (v - prediction)
    if mistake == "transposed_write":
        if S.shape[-1] != S.shape[-2]:
            return None                                                       # impossible shape: no match
        write = torch.einsum("bhv,bhk->bhvk", error, k)                       # [B, H, V, K]: v's axis first
    else:
        write = torch.einsum("bhk,bhv->bhkv", k, error)                       # [B, H, K, V]
    before = alpha * S
    S_new = alpha * (S + write) if mistake == "decay_after_write" else before + write
    o = torch.einsum("bhkv,bhk->bhv", before if mistake == "query_before_write" else S_new, q)   # [B, H, V]
    return S_new, o


# -- one chunk of the chunked form (the UT / WY solve), right and wrong -------------------------------------

CHUNK_MISTAKES = ("chunk_diagonal", "chunk_no_decay_in_solve", "chunk_state_left_out", "chunk_strict_output")


def head_chunk(q, k, v, g, beta, S, mistake: str | None = None):
    """One chunk of C tokens on one head in closed form: q, k [C, K], v [C, V], g, beta [C], S [K, V].
    Returns (o [C, V], S after the chunk [K, V]), as the rule, or as `mistake` writes it."""
    q, k, v, g, beta, S = (x.to(F64) for x in (q, k, v, g, beta, S))
    C = k.shape[0]
    gamma = g.cumsum(0)                                                       # [C]  log decay from the chunk's start
    Gamma = (gamma[:, None] - gamma[None, :]).exp()                           # [C, C]  decay from j to i (i >= j)
    if mistake == "chunk_no_decay_in_solve":
        Gamma_solve = torch.ones_like(Gamma)
    else:
        Gamma_solve = Gamma
    A = torch.tril(beta[:, None] * (k @ k.T) * Gamma_solve, diagonal=0 if mistake == "chunk_diagonal" else -1)
    T = torch.linalg.inv(torch.eye(C, dtype=F64) + A)                         # [C, C]  the UT transform
    W = T @ (beta[:, None] * gamma.exp()[:, None] * k)                        # [C, K]  decayed keys, made "orthogonal"
    start = torch.zeros_like(S) if mistake == "chunk_state_left_out" else S
    U = T @ (beta[:, None] * v) - W @ start                                   # [C, V]  what each token writes
    mask = torch.tril(q @ k.T * Gamma, diagonal=-1 if mistake == "chunk_strict_output" else 0)   # [C, C]
    o = gamma.exp()[:, None] * (q @ start) + mask @ U                         # [C, V]
    S_new = gamma[-1].exp() * S + (k * (gamma[-1] - gamma).exp()[:, None]).T @ U    # [K, V]
    return o, S_new
