"""Tiny language models for MQAR that differ only in their sequence mixer, i.e. in how they remember.

Every model: token embedding (width d) -> LAYERS x [mixer, MLP], each pre-normed with a residual ->
norm -> logits. Every mixer projects q, k, v from its input, runs them through the same short causal
convolution (so a value token can see the key just before it, as in DeltaNet, Gated DeltaNet, Mamba and
Zoology's models), reads out one head of width d, normalises and projects back. Only the memory differs:

    softmax      causal softmax attention over every earlier token (no fixed-size state: the reference)
    linear       S_t = S_{t-1} + k_t v_t^T                              (alpha = 1, beta = 1, no correction)
    decay        S_t = alpha_t S_{t-1} + beta_t k_t v_t^T                (a forgetting gate, Mamba2 / GLA-like)
    deltanet     S_t = S_{t-1} + beta_t k_t (v_t - S_{t-1}^T k_t)^T      (the delta rule: writes the error)
    gdn          S_t = alpha_t S_{t-1} + beta_t k_t (v_t - alpha_t S_{t-1}^T k_t)^T   (Gated DeltaNet)
    and o_t = S_t^T q_t.

The four fixed-size memories hold a d x d state per layer; q and k are L2-normalised in all of them, so
the write rule is the only difference. deltanet and gdn run on the project's chunked kernel
(gdn.chunk_gated_delta_rule) forwards and backwards; linear and decay, whose rules have no correction,
are computed in their quadratic form (gdn.ops.linear: (Q K^T * decay mask) V, for T <= a few hundred).
The gates follow Qwen3.5: alpha_t = exp(-exp(A_log) softplus(a_t + dt_bias)), beta_t = sigmoid(b_t).
"""
from __future__ import annotations

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from gdn.ops import chunk_gated_delta_rule
from gdn.ops.inputs import l2_normalize
from gdn.ops.linear import causal_linear_attention

RULES = ("softmax", "linear", "decay", "deltanet", "gdn")
GATED = ("decay", "gdn")            # rules with a forgetting gate alpha
WRITES = ("decay", "deltanet", "gdn")   # rules with a write strength beta
LAYERS = 2
CONV = 4                            # the short convolution's width, as in Qwen3.5


class RMSNorm(nn.Module):
    def __init__(self, d: int):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * self.weight


SLOW_A, SLOW_DT = 1.0, 1e-3         # the slow end of Mamba2's ranges A ~ U(1, 16), dt ~ log-U(0.001, 0.1)


def init_gates(A_log: torch.Tensor, dt_bias: torch.Tensor) -> None:
    """Start the decay gate at the slowest value Mamba2's init can draw: A = 1 and softplus(dt_bias) =
    dt = 0.001, so alpha = exp(-A dt) = 0.999 at a zero input, a half-life of ln 2 / 0.001 = 693 tokens,
    longer than any sequence here. The gate's input a_t is learnt, so a model can still learn to forget.
    Why not draw as Mamba2 (and fla's Gated DeltaNet) do: they draw per head across many heads, and these
    models have one head per layer, so one draw sets how fast a whole model forgets at the start. In
    the previous sweep the two seeds of Gated DeltaNet at width 32 with 8 pairs ended at 11 % and 100 %;
    with this init all three seeds of the pilot reached 100 % there. Qwen3.5's released init (dt_bias = 1, alpha <=
    0.27) never learnt MQAR at all in the pilot before that."""
    with torch.no_grad():
        A_log.fill_(math.log(SLOW_A))
        dt = torch.tensor(SLOW_DT, dtype=dt_bias.dtype)
        dt_bias.fill_(float(dt + torch.log(-torch.expm1(-dt))))          # softplus(dt_bias) = dt


class Mixer(nn.Module):
    """One head of width d: q, k, v through a short causal conv, then the rule's memory."""

    def __init__(self, d: int, rule: str):
        super().__init__()
        if rule not in RULES:
            raise ValueError(f"rule must be one of {RULES}, got {rule!r}")
        self.rule, self.d = rule, d
        self.qkv = nn.Linear(d, 3 * d, bias=False)
        self.conv = nn.Conv1d(3 * d, 3 * d, CONV, groups=3 * d, padding=CONV - 1, bias=False)
        self.gate_proj = nn.Linear(d, 2, bias=False)            # a_t (alpha's input) and b_t (beta's)
        self.A_log = nn.Parameter(torch.zeros(1))
        self.dt_bias = nn.Parameter(torch.ones(1))
        init_gates(self.A_log, self.dt_bias)
        self.norm = RMSNorm(d)
        self.out = nn.Linear(d, d, bias=False)

    def gates(self, x):
        """x: [B, T, d] -> log alpha g [B, T, 1] (0 for rules without a gate), beta [B, T, 1] (1 without)."""
        a, b = self.gate_proj(x).float().unbind(-1)                                   # [B, T] each
        g = -self.A_log.exp() * F.softplus(a + self.dt_bias) if self.rule in GATED else torch.zeros_like(a)
        beta = torch.sigmoid(b) if self.rule in WRITES else torch.ones_like(b)
        return g[..., None], beta[..., None]

    def qkv_of(self, x):
        T = x.shape[1]
        mixed = F.silu(self.conv(self.qkv(x).transpose(1, 2))[..., :T]).transpose(1, 2)   # [B, T, 3d] causal
        return mixed.chunk(3, dim=-1)                                                    # q, k, v [B, T, d]

    def forward(self, x):
        q, k, v = self.qkv_of(x)
        g, beta = self.gates(x)
        o = memory_read(self.rule, q, k, v, g, beta)                                     # [B, T, d]
        return self.out(self.norm(o))


def memory_read(rule: str, q, k, v, g, beta):
    """q, k, v: [B, T, d]; g, beta: [B, T, 1] -> o [B, T, d], one head."""
    if rule == "softmax":
        return F.scaled_dot_product_attention(q[:, None], k[:, None], v[:, None], is_causal=True)[:, 0]
    q, k = l2_normalize(q), l2_normalize(k)
    if rule in ("deltanet", "gdn"):
        o, _ = chunk_gated_delta_rule(q[:, :, None], k[:, :, None], v[:, :, None], g, beta, scale=1.0,
                                      validate=False)
        return o[:, :, 0]
    if rule == "linear":                                                 # alpha = beta = 1: no decay
        return causal_linear_attention(q, k, v)
    return causal_linear_attention(q, k, v, g[..., 0], beta[..., 0])


class MLP(nn.Module):
    def __init__(self, d: int):
        super().__init__()
        self.up, self.down = nn.Linear(d, 2 * d, bias=False), nn.Linear(2 * d, d, bias=False)

    def forward(self, x):
        return self.down(F.gelu(self.up(x)))


class RecallModel(nn.Module):
    """embed -> LAYERS x (x + mixer(norm x), x + mlp(norm x)) -> norm -> logits."""

    def __init__(self, vocab_size: int, d: int, rule: str, layers: int = LAYERS):
        super().__init__()
        self.rule, self.d = rule, d
        self.embed = nn.Embedding(vocab_size, d)
        self.mixers = nn.ModuleList(Mixer(d, rule) for _ in range(layers))
        self.mlps = nn.ModuleList(MLP(d) for _ in range(layers))
        self.norms = nn.ModuleList(RMSNorm(d) for _ in range(2 * layers + 1))
        self.head = nn.Linear(d, vocab_size, bias=False)

    def forward(self, tokens):
        x = self.embed(tokens)                                                  # [B, T, d]
        for i, (mixer, mlp) in enumerate(zip(self.mixers, self.mlps)):
            x = x + mixer(self.norms[2 * i](x))
            x = x + mlp(self.norms[2 * i + 1](x))
        return self.head(self.norms[-1](x))                                     # [B, T, vocab]


def build_model(vocab_size: int, d: int, rule: str, *, seed: int, layers: int = LAYERS) -> RecallModel:
    """The same seed gives the same weights on every device (built on the CPU)."""
    gen_state = torch.random.get_rng_state()
    torch.manual_seed(seed)
    try:
        return RecallModel(vocab_size, d, rule, layers)
    finally:
        torch.random.set_rng_state(gen_state)
