"""The Qwen3.5 text decoder's building blocks in plain PyTorch (docs/qwen35.md, The Gated DeltaNet layer).

Attribute names are the checkpoint's tensor names (in_proj_qkv, A_log, dt_bias, norm, q_proj, ...),
so loading is a key-for-key copy. Shapes: B batch, T tokens, D hidden, HK/HV GDN key/value heads,
K/V GDN key/value head dims, Hq/Hkv attention query/KV heads, hd attention head dim.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F

from gdn.ops import chunk_gated_delta_rule, recurrent_gated_delta_rule
from gdn.ops.inputs import l2_normalize
from gdn.ops.linear import causal_linear_attention
from gdn.qwen35.config import Qwen35Config

KERNELS = {"chunk": chunk_gated_delta_rule, "recurrent": recurrent_gated_delta_rule}
# What the mixer computes from q, k, v and the gates. "gdn" is Qwen3.5's rule (the gated delta rule); "linear" is
# the ablation the demo evidence uses: plain causal linear attention with the same normalised q, k and
# write strength beta, but alpha = 1 and no delta correction (S_t = S_{t-1} + beta_t k_t v_t^T).
RULES = ("gdn", "linear")


def linear_attention(q, k, v, beta):
    """Causal linear attention, the ablation rule. q, k: [B, T, HK, K] (L2-normalised here, q scaled by
    K^-0.5, as the kernels do); v: [B, T, HV, V]; beta: [B, T, HV]. Returns o: [B, T, HV, V] in v's dtype."""
    B, T, HK, K = q.shape
    group = v.shape[2] // HK
    heads = lambda x: x.transpose(1, 2)                                        # [B, T, H, .] -> [B, H, T, .]
    q = (l2_normalize(q.float()) * K ** -0.5).repeat_interleave(group, dim=2)  # [B, T, HV, K]
    k = l2_normalize(k.float()).repeat_interleave(group, dim=2)                # [B, T, HV, K]
    o = causal_linear_attention(heads(q), heads(k), heads(v.float()), beta=beta.float().transpose(1, 2))
    return heads(o).to(v.dtype)                                                # [B, T, HV, V]


@dataclass(frozen=True)
class GateOverride:
    """An intervention on one GDN layer: value head (None = every head) -> a constant alpha or beta.
    alpha = 0 forgets everything before each token (g = -inf), alpha = 1 never forgets (g = 0);
    beta = 0 never writes. Values are checked by gdn.qwen35.model (in [0, 1])."""
    alpha: dict
    beta: dict

    def apply(self, g: torch.Tensor, beta: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """g, beta: [B, T, HV] -> new tensors with the chosen heads set to their constants
        (a whole-layer setting first, so a single head's own setting wins)."""
        g, beta = g.clone(), beta.clone()
        for head, alpha in _all_heads_first(self.alpha):
            g[..., head] = math.log(alpha) if alpha > 0 else -math.inf     # g = log alpha; log 0 = -inf
        for head, value in _all_heads_first(self.beta):
            beta[..., head] = value
        return g, beta


def _all_heads_first(table: dict) -> list:
    """[(index, value)] with None (every head) turned into a full slice and put first."""
    return [(slice(None) if h is None else h, v) for h, v in sorted(table.items(), key=lambda hv: hv[0] is not None)]


class RMSNorm(nn.Module):
    """Zero-centred RMSNorm: the stored weight w is near 0 and the scale is (1 + w), in float32."""

    def __init__(self, dim: int, eps: float):
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(dim))
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x32 = x.float()
        y = x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + self.eps)
        return (y * (1.0 + self.weight.float())).to(x.dtype)  # multiply before the down-cast (Gemma style)


class GatedRMSNorm(nn.Module):
    """GDN output norm: w * rmsnorm(o) * silu(z), with a PLAIN weight w (stored near 1, float32), not 1 + w."""

    def __init__(self, dim: int, eps: float):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, o: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
        o32 = o.float()
        h = (o32 * torch.rsqrt(o32.pow(2).mean(-1, keepdim=True) + self.eps)).to(o.dtype)  # as the reference
        return (self.weight * h * F.silu(z.float())).to(o.dtype)


@dataclass
class GDNCache:
    """What a GDN layer needs to continue a sequence."""
    conv: torch.Tensor    # [B, conv_dim, conv_kernel - 1] last raw (pre-conv) in_proj_qkv outputs
    state: torch.Tensor | None  # [B, HV, K, V] float32 recurrent state S (None after the "linear" ablation)


@dataclass
class GDNRecord:
    """What the trace takes from one GDN layer call (k and v only for the state norms, then dropped)."""
    g: torch.Tensor       # [B, T, HV] log decay (<= 0); alpha = exp(g)
    beta: torch.Tensor    # [B, T, HV] write strength in (0, 1)
    k: torch.Tensor       # [B, T, HK, K] kernel input after conv + SiLU (before L2 norm), model dtype
    v: torch.Tensor       # [B, T, HV, V] model dtype


class GatedDeltaNet(nn.Module):
    """Qwen3.5 linear-attention mixer: projections -> causal conv + SiLU -> gated delta rule -> gated norm."""

    def __init__(self, cfg: Qwen35Config):
        super().__init__()
        D, HV = cfg.hidden_size, cfg.linear_num_value_heads
        self.HK, self.HV = cfg.linear_num_key_heads, HV
        self.K, self.V = cfg.linear_key_head_dim, cfg.linear_value_head_dim
        self.key_dim, self.conv_kernel = cfg.key_dim, cfg.linear_conv_kernel_dim
        self.in_proj_qkv = nn.Linear(D, cfg.conv_dim, bias=False)
        self.in_proj_z = nn.Linear(D, cfg.value_dim, bias=False)
        self.in_proj_b = nn.Linear(D, HV, bias=False)
        self.in_proj_a = nn.Linear(D, HV, bias=False)
        self.conv1d = nn.Conv1d(cfg.conv_dim, cfg.conv_dim, cfg.linear_conv_kernel_dim, groups=cfg.conv_dim,
                                bias=False)  # weight [conv_dim, 1, 4]; applied by hand below (causal + cache)
        self.A_log = nn.Parameter(torch.zeros(HV))
        self.dt_bias = nn.Parameter(torch.ones(HV))
        self.norm = GatedRMSNorm(self.V, cfg.rms_norm_eps)
        self.out_proj = nn.Linear(cfg.value_dim, D, bias=False)

    def gates(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """x: [B, T, D] normed input -> g [B, T, HV] (float32, <= 0) and beta [B, T, HV] in x's dtype."""
        beta = self.in_proj_b(x).sigmoid()
        # float32 on purpose: exp(A_log) can overflow half types; dt_bias is promoted.
        g = -self.A_log.float().exp() * F.softplus(self.in_proj_a(x).float() + self.dt_bias.float())
        return g, beta

    def conv(self, x: torch.Tensor, cache: GDNCache | None) -> tuple[torch.Tensor, torch.Tensor]:
        """Causal depthwise conv + SiLU over in_proj_qkv(x); returns ([B, T, conv_dim], new conv cache)."""
        B, T, _ = x.shape
        mixed = self.in_proj_qkv(x).transpose(1, 2)                        # [B, conv_dim, T]
        past = (cache.conv if cache is not None else
                mixed.new_zeros(B, mixed.shape[1], self.conv_kernel - 1))  # zeros before the first token
        padded = torch.cat([past.to(mixed.dtype), mixed], dim=-1)          # [B, conv_dim, T + 3]
        y = F.conv1d(padded, self.conv1d.weight, groups=padded.shape[1])   # [B, conv_dim, T]; w[:, 0, 3] = now
        # clone: a view would keep the whole [B, conv_dim, T + 3] input alive inside the cache
        return F.silu(y).transpose(1, 2), padded[..., padded.shape[-1] - (self.conv_kernel - 1):].clone()

    def kernel_inputs(self, x: torch.Tensor, cache: GDNCache | None = None, override: GateOverride | None = None):
        """x: [B, T, D] (after input_layernorm) -> (q, k [B, T, HK, K], v [B, T, HV, V], g, beta [B, T, HV],
        new conv cache). override: constants replacing some heads' gates (an intervention).
        Also used by the trace to recompute one head's states on demand."""
        B, T, _ = x.shape
        y, conv_cache = self.conv(x, cache)
        q, k, v = torch.split(y, [self.key_dim, self.key_dim, self.HV * self.V], dim=-1)
        q = q.reshape(B, T, self.HK, self.K)                                # [B, T, HK, K] heads contiguous
        k = k.reshape(B, T, self.HK, self.K)                                # [B, T, HK, K]
        v = v.reshape(B, T, self.HV, self.V)                                # [B, T, HV, V]
        g, beta = self.gates(x)
        if override is not None:
            g, beta = override.apply(g, beta)
        return q, k, v, g, beta, conv_cache

    def forward(self, x: torch.Tensor, cache: GDNCache | None = None, kernel: str = "chunk",
                rule: str = "gdn", override: GateOverride | None = None):
        """x: [B, T, D] (after input_layernorm). Returns (out [B, T, D], new GDNCache, GDNRecord).
        override: an intervention on the gates (GateOverride); the record holds the gates used.
        rule="linear" swaps the gated delta rule for linear attention (an ablation: same weights, no
        cache to continue from, so the returned cache state is None)."""
        B, T, _ = x.shape
        q, k, v, g, beta, conv_cache = self.kernel_inputs(x, cache, override)
        if rule == "linear":
            if cache is not None:
                raise ValueError('rule="linear" (the ablation) runs from the start of a sequence; it cannot continue a cache')
            o, state = linear_attention(q, k, v, beta), None
        else:   # keywords on purpose: fla's references disagree on the order of g and beta
            o, state = KERNELS[kernel](q, k, v, g=g, beta=beta, initial_state=None if cache is None else cache.state,
                                       output_final_state=True, use_qk_l2norm_in_kernel=True)  # o [B, T, HV, V]
            state = state.float()
        z = self.in_proj_z(x).reshape(B, T, self.HV, self.V)               # [B, T, HV, V] output gate
        o = self.norm(o, z).reshape(B, T, self.HV * self.V)                # [B, T, HV*V]
        record = GDNRecord(g=g, beta=beta.float(), k=k, v=v)
        return self.out_proj(o), GDNCache(conv=conv_cache, state=state), record


@dataclass
class KVCache:
    k: torch.Tensor       # [B, Hkv, T_past, hd] keys after k_norm and RoPE
    v: torch.Tensor       # [B, Hkv, T_past, hd]


def rotate_half(x: torch.Tensor) -> torch.Tensor:
    """NeoX pairing: dim i rotates with dim i + rot/2."""
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat([-x2, x1], dim=-1)


class Attention(nn.Module):
    """Gated full attention: q_proj gives query and a sigmoid output gate (interleaved per head),
    q/k RMSNorm (1 + w), partial RoPE on the first rotary_dim dims, causal GQA softmax attention."""

    def __init__(self, cfg: Qwen35Config):
        super().__init__()
        D, hd = cfg.hidden_size, cfg.head_dim
        self.Hq, self.Hkv, self.hd = cfg.num_attention_heads, cfg.num_key_value_heads, hd
        self.rot, self.theta = cfg.rotary_dim, cfg.rope_theta
        self.q_proj = nn.Linear(D, 2 * self.Hq * hd, bias=False)
        self.k_proj = nn.Linear(D, self.Hkv * hd, bias=False)
        self.v_proj = nn.Linear(D, self.Hkv * hd, bias=False)
        self.o_proj = nn.Linear(self.Hq * hd, D, bias=False)
        self.q_norm = RMSNorm(hd, cfg.rms_norm_eps)
        self.k_norm = RMSNorm(hd, cfg.rms_norm_eps)

    def rope(self, x: torch.Tensor, pos: torch.Tensor) -> torch.Tensor:
        """x: [B, H, T, hd]; pos: [T] absolute positions. Text-only mRoPE reduces to this 1-D RoPE."""
        inv_freq = 1.0 / self.theta ** (torch.arange(0, self.rot, 2, dtype=torch.float32, device=x.device) / self.rot)  # [rot/2]
        freqs = pos.float()[:, None] * inv_freq[None, :]                   # [T, rot/2]
        emb = torch.cat([freqs, freqs], dim=-1)                            # [T, rot]
        cos, sin = emb.cos().to(x.dtype), emb.sin().to(x.dtype)
        xr, xp = x[..., :self.rot], x[..., self.rot:]                      # rotated | passed through
        return torch.cat([xr * cos + rotate_half(xr) * sin, xp], dim=-1)   # [B, H, T, hd]

    def forward(self, x: torch.Tensor, cache: KVCache | None = None):
        """x: [B, T, D] (after input_layernorm). Returns (out [B, T, D], new KVCache)."""
        B, T, _ = x.shape
        past = 0 if cache is None else cache.k.shape[2]
        qg = self.q_proj(x).view(B, T, self.Hq, 2 * self.hd)               # [B, T, Hq, 2*hd] per head: query|gate
        query, gate = qg[..., :self.hd], qg[..., self.hd:]
        gate = gate.reshape(B, T, self.Hq * self.hd)                       # [B, T, Hq*hd]
        q = self.q_norm(query).transpose(1, 2)                             # [B, Hq, T, hd]
        k = self.k_norm(self.k_proj(x).view(B, T, self.Hkv, self.hd)).transpose(1, 2)  # [B, Hkv, T, hd]
        v = self.v_proj(x).view(B, T, self.Hkv, self.hd).transpose(1, 2)   # [B, Hkv, T, hd]
        pos = torch.arange(past, past + T, device=x.device)
        q, k = self.rope(q, pos), self.rope(k, pos)
        if cache is not None:
            k = torch.cat([cache.k, k], dim=2)                             # [B, Hkv, past+T, hd]
            v = torch.cat([cache.v, v], dim=2)
        # query i sits at position past + i and sees keys 0 .. past + i (plain causal when there is no past)
        mask = None if past == 0 else torch.ones(T, past + T, dtype=torch.bool, device=x.device).tril(past)
        o = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=past == 0, scale=self.hd ** -0.5,
                                           enable_gqa=self.Hq != self.Hkv)  # [B, Hq, T, hd]
        o = o.transpose(1, 2).reshape(B, T, self.Hq * self.hd) * torch.sigmoid(gate)  # [B, T, Hq*hd]
        return self.o_proj(o), KVCache(k=k, v=v)


class MLP(nn.Module):
    """SwiGLU: down(silu(gate(x)) * up(x)), no biases."""

    def __init__(self, D: int, I: int):
        super().__init__()
        self.gate_proj = nn.Linear(D, I, bias=False)
        self.up_proj = nn.Linear(D, I, bias=False)
        self.down_proj = nn.Linear(I, D, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class Experts(nn.Module):
    """E SwiGLU experts stored stacked, as in the checkpoint (gate half first in gate_up_proj)."""

    def __init__(self, E: int, D: int, I: int):
        super().__init__()
        self.gate_up_proj = nn.Parameter(torch.zeros(E, 2 * I, D))
        self.down_proj = nn.Parameter(torch.zeros(E, D, I))


class Router(nn.Module):
    def __init__(self, E: int, D: int):
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(E, D))


class SparseMoE(nn.Module):
    """qwen3_5_moe MLP: fp32 softmax over E experts, top-k renormalised, plus a sigmoid-gated shared expert."""

    def __init__(self, cfg: Qwen35Config):
        super().__init__()
        D, self.top_k = cfg.hidden_size, cfg.num_experts_per_tok
        self.gate = Router(cfg.num_experts, D)
        self.experts = Experts(cfg.num_experts, D, cfg.moe_intermediate_size)
        self.shared_expert = MLP(D, cfg.shared_expert_intermediate_size)
        self.shared_expert_gate = nn.Linear(D, 1, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        shape = x.shape
        x = x.reshape(-1, shape[-1])                                       # [N, D] tokens
        logits = F.linear(x, self.gate.weight)                             # [N, E]
        probs = logits.float().softmax(dim=-1)
        top_w, top_i = probs.topk(self.top_k, dim=-1)                      # [N, k]
        top_w = (top_w / top_w.sum(-1, keepdim=True)).to(logits.dtype)
        out = torch.zeros_like(x)
        for e in top_i.unique().tolist():                                  # only the experts some token chose
            tok, slot = torch.where(top_i == e)
            gate, up = F.linear(x[tok], self.experts.gate_up_proj[e]).chunk(2, dim=-1)  # [n, I] each
            h = F.linear(F.silu(gate) * up, self.experts.down_proj[e])     # [n, D]
            out.index_add_(0, tok, h * top_w[tok, slot, None])
        shared = self.shared_expert(x) * torch.sigmoid(self.shared_expert_gate(x))  # [N, D]
        return (out + shared).reshape(shape)


class DecoderLayer(nn.Module):
    """Pre-norm residual block: h = x + mixer(norm(x)); out = h + mlp(norm(h))."""

    def __init__(self, cfg: Qwen35Config, i: int):
        super().__init__()
        self.kind = cfg.layer_types[i]
        if self.kind == "linear_attention":
            self.linear_attn = GatedDeltaNet(cfg)
        else:
            self.self_attn = Attention(cfg)
        self.mlp = SparseMoE(cfg) if cfg.is_moe else MLP(cfg.hidden_size, cfg.intermediate_size)
        self.input_layernorm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)
        self.post_attention_layernorm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)

    def forward(self, x: torch.Tensor, cache=None, kernel: str = "chunk", rule: str = "gdn",
                override: GateOverride | None = None):
        """x: [B, T, D]. Returns (out [B, T, D], new cache, GDNRecord or None). override: GDN layers only."""
        h = self.input_layernorm(x)
        if self.kind == "linear_attention":
            mixed, cache, record = self.linear_attn(h, cache, kernel, rule, override)
        else:
            (mixed, cache), record = self.self_attn(h, cache), None
        x = x + mixed
        return x + self.mlp(self.post_attention_layernorm(x)), cache, record
