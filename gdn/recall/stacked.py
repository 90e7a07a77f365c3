"""Many independent RecallModels of one width as one: every weight gets a leading model axis M, so one
set of kernel launches runs them all (the tiny models are bound by launches, not arithmetic).

Model m of the stack computes exactly what RecallModel(rule_m) computes, with its own weights and its own
batch of tokens: projections are batched matmuls over M, the short convolution is four shifted
multiply-adds per model, and each memory rule runs once on its block of models (the rules are kept in
contiguous blocks; DeltaNet and Gated DeltaNet share one call of the chunked kernel, a model's index
becoming the kernel's head index, with g = 0 for DeltaNet). `stack` copies built models in and
`unstack` gives one back, so a stack starts from the very weights build_model(seed) gives and its
trained members load into RecallModel for the page (gdn/recall/inspect.py).

Layout: activations [M, B, T, d]; a Linear weight [M, out, in] (nn.Linear's [out, in] per model).
"""
from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F

from gdn.ops import chunk_gated_delta_rule
from gdn.ops.inputs import l2_normalize
from gdn.ops.linear import causal_linear_attention
from gdn.recall.models import CONV, GATED, LAYERS, RULES, WRITES, RecallModel


def _rms(x, weight):
    """x: [M, B, T, d], weight [M, d]: RMSNorm of every model with its own weight."""
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * weight[:, None, None, :]


def _linear(x, weight):
    """x: [M, B, T, i], weight [M, o, i] -> [M, B, T, o]: y = x W^T for every model (one bmm)."""
    M, B, T, i = x.shape
    return torch.bmm(x.reshape(M, B * T, i), weight.transpose(1, 2)).view(M, B, T, -1)


def _causal_conv(x, weight):
    """x: [M, B, T, C], weight [M, C, CONV] -> the depthwise causal convolution of nn.Conv1d(groups=C,
    padding=CONV-1) cut to T: y_t = sum_j w_j x_{t + j - (CONV-1)}, zeros before the first token. One
    grouped conv1d over the M * C channels: written as four shifted slices of a padded copy instead, the
    slices' backward zero-fills a padded-size gradient four times, which was most of a CPU step."""
    M, B, T, C = x.shape
    channels = x.permute(1, 0, 3, 2).reshape(B, M * C, T)                       # [B, M C, T]
    y = F.conv1d(channels, weight.reshape(M * C, 1, CONV), padding=CONV - 1, groups=M * C)[..., :T]
    return y.view(B, M, C, T).permute(1, 0, 3, 2)                                # [M, B, T, C]


class StackedRecall(nn.Module):
    """M RecallModels of width d over one vocabulary; rules[m] is model m's rule (in blocks, RULES order)."""

    def __init__(self, vocab_size: int, d: int, rules: list[str], layers: int = LAYERS):
        super().__init__()
        order = [RULES.index(r) for r in rules]
        if order != sorted(order):
            raise ValueError(f"rules must come in blocks in the order {RULES}, got {rules}")
        M = len(rules)
        self.rules, self.d, self.layers = list(rules), d, layers
        p = lambda *shape: nn.Parameter(torch.zeros(M, *shape))
        self.embed, self.head, self.final_norm = p(vocab_size, d), p(vocab_size, d), p(d)
        self.qkv, self.conv, self.gate = (nn.ParameterList(p(*s) for _ in range(layers))
                                          for s in ((3 * d, d), (3 * d, CONV), (2, d)))
        self.A_log, self.dt_bias = (nn.ParameterList(p(1) for _ in range(layers)) for _ in range(2))
        self.mix_norm, self.out = nn.ParameterList(p(d) for _ in range(layers)), nn.ParameterList(p(d, d) for _ in range(layers))
        self.up, self.down = nn.ParameterList(p(2 * d, d) for _ in range(layers)), nn.ParameterList(p(d, 2 * d) for _ in range(layers))
        self.pre_mix, self.pre_mlp = (nn.ParameterList(p(d) for _ in range(layers)) for _ in range(2))
        self.register_buffer("gated", torch.tensor([r in GATED for r in rules]), persistent=False)
        self.register_buffer("writes", torch.tensor([r in WRITES for r in rules]), persistent=False)
        # (rule, models) of each memory call: one per rule, DeltaNet and Gated DeltaNet in one kernel call
        self.segments = []
        for r in (r for r in RULES if r in rules):
            s = slice(rules.index(r), len(rules) - rules[::-1].index(r))
            if r == "gdn" and self.segments and self.segments[-1][0] == "deltanet":
                self.segments[-1] = ("gdn", slice(self.segments[-1][1].start, s.stop))
            else:
                self.segments.append((r, s))

    # ---- weights in and out: the same names as RecallModel's state_dict, one model at a time

    def _pairs(self):
        """(stacked parameter, the RecallModel state_dict key it holds), with how to reshape a model's copy."""
        yield self.embed, "embed.weight"
        yield self.head, "head.weight"
        yield self.final_norm, f"norms.{2 * self.layers}.weight"
        for i in range(self.layers):
            yield self.qkv[i], f"mixers.{i}.qkv.weight"
            yield self.conv[i], f"mixers.{i}.conv.weight"                # [3d, 1, CONV] in the model
            yield self.gate[i], f"mixers.{i}.gate_proj.weight"
            yield self.A_log[i], f"mixers.{i}.A_log"
            yield self.dt_bias[i], f"mixers.{i}.dt_bias"
            yield self.mix_norm[i], f"mixers.{i}.norm.weight"
            yield self.out[i], f"mixers.{i}.out.weight"
            yield self.up[i], f"mlps.{i}.up.weight"
            yield self.down[i], f"mlps.{i}.down.weight"
            yield self.pre_mix[i], f"norms.{2 * i}.weight"
            yield self.pre_mlp[i], f"norms.{2 * i + 1}.weight"

    @torch.no_grad()
    def load_models(self, models: list[RecallModel]) -> StackedRecall:
        for m, model in enumerate(models):
            if model.rule != self.rules[m] or model.d != self.d:
                raise ValueError(f"model {m} is {model.rule} d={model.d}, the stack wants {self.rules[m]} d={self.d}")
            state = model.state_dict()
            for param, key in self._pairs():
                param[m].copy_(state[key].reshape(param.shape[1:]))
        return self

    @torch.no_grad()
    def unstack(self, m: int) -> dict[str, torch.Tensor]:
        """Model m's weights as a RecallModel state_dict (float32, CPU, contiguous)."""
        shapes = {k: v.shape for k, v in RecallModel(self.embed.shape[1], self.d, self.rules[m], self.layers).state_dict().items()}
        return {key: param[m].detach().float().cpu().reshape(shapes[key]).contiguous() for param, key in self._pairs()}

    # ---- the forward pass

    def _memory(self, i, h):
        """Layer i's mixer on its normed input h [M, B, T, d] -> [M, B, T, d]."""
        q, k, v = F.silu(_causal_conv(_linear(h, self.qkv[i]), self.conv[i])).chunk(3, dim=-1)   # [M, B, T, d]
        a, b = _linear(h, self.gate[i]).float().unbind(-1)                                       # [M, B, T]
        g = -self.A_log[i].exp()[:, :, None] * F.softplus(a + self.dt_bias[i][:, :, None])
        g = torch.where(self.gated[:, None, None], g, torch.zeros_like(g))
        beta = torch.where(self.writes[:, None, None], torch.sigmoid(b), torch.ones_like(b))
        outs = [_read(rule, q[s], k[s], v[s], g[s], beta[s]) for rule, s in self.segments]
        o = torch.cat(outs) if len(outs) > 1 else outs[0]
        return _linear(_rms(o, self.mix_norm[i]), self.out[i])

    def hidden(self, tokens):
        """tokens [M, B, T] (model m reads tokens[m]) -> the final normed hidden states [M, B, T, d]."""
        M = tokens.shape[0]
        x = self.embed[torch.arange(M, device=tokens.device)[:, None, None], tokens]            # [M, B, T, d]
        for i in range(self.layers):
            x = x + self._memory(i, _rms(x, self.pre_mix[i]))
            x = x + _linear(F.gelu(_linear(_rms(x, self.pre_mlp[i]), self.up[i])), self.down[i])
        return _rms(x, self.final_norm)

    def logits_at(self, hidden, where):
        """hidden [M, B, T, d], where [M, B, P] positions -> logits [M, B, P, vocab] at those positions only
        (the head is the widest matmul; the loss needs it only where a question is asked)."""
        picked = hidden.gather(2, where[..., None].expand(-1, -1, -1, self.d))                   # [M, B, P, d]
        M, B, P, d = picked.shape
        return torch.bmm(picked.reshape(M, B * P, d), self.head.transpose(1, 2)).view(M, B, P, -1)


def _read(rule, q, k, v, g, beta):
    """One rule's memory on its block of m models: q, k, v [m, B, T, d]; g, beta [m, B, T] -> [m, B, T, d]."""
    m, B, T, d = q.shape
    if rule == "softmax":                                      # the m models as a batch axis, B as heads
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)
    q, k = l2_normalize(q), l2_normalize(k)
    if rule in ("deltanet", "gdn"):                            # models become the kernel's heads
        heads = lambda x: x.permute(1, 2, 0, *range(3, x.dim()))                                # [B, T, m, ...]
        o, _ = chunk_gated_delta_rule(heads(q), heads(k), heads(v), heads(g), heads(beta), scale=1.0, validate=False)
        return o.permute(2, 0, 1, 3)                                                             # [m, B, T, d]
    if rule == "linear":
        return causal_linear_attention(q, k, v)
    return causal_linear_attention(q, k, v, g, beta)
