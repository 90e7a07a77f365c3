"""What model.trace records, and the state diagnostics of a GDN layer.

Keeping every per-token state S_t (T x HV x K x V floats per layer) is out of the question for long
prompts, so a trace keeps, per GDN layer: g and beta [T, HV], the Frobenius norm of S_t for every token
and head [T, HV] (gdn.ops.state_norm_scan, on first access, never materialising S_t), and the final
state [HV, K, V]. One head's S_t is recomputed on demand from the layer's input (`state_at`, `states`).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import torch

from gdn.ops import chunk_gated_delta_rule, recurrent_gated_delta_rule, state_norm_scan


@dataclass
class LayerTrace:
    """One decoder layer of a trace. GDN-only fields are None on full-attention layers."""
    index: int
    kind: str                                   # "linear_attention" | "full_attention"
    output: torch.Tensor = field(repr=False)    # [T, D] residual stream after this layer
    g: torch.Tensor | None = field(default=None, repr=False)              # [T, HV] float32 log decay <= 0 (alpha = exp(g))
    beta: torch.Tensor | None = field(default=None, repr=False)           # [T, HV] float32 write strength in (0, 1)
    final_state: torch.Tensor | None = field(default=None, repr=False)    # [HV, K, V] float32 state after the last token
    _recompute: object = field(default=None, repr=False)  # () -> (q, k, v, g, beta, S0) for this layer

    _norms: torch.Tensor | None = field(default=None, repr=False)

    @property
    def alpha(self) -> torch.Tensor | None:
        return None if self.g is None else self.g.exp()

    @property
    def state_norms(self) -> torch.Tensor | None:
        """[T, HV] float32: ||S_t||_F after token t for every head (None on attention layers).
        Computed on first access from this layer's recomputed inputs (one layer: cheap), then kept."""
        if self.kind != "linear_attention":
            return None
        if self._norms is None:
            q, k, v, g, beta, S0 = self._recompute()
            self._norms = state_norm_scan(k, v, g, beta, S0)[0][0]
        return self._norms

    def _head_inputs(self, head: int):
        if self.kind != "linear_attention":
            raise ValueError(f"layer {self.index} is full attention: it has no recurrent state")
        q, k, v, g, beta, S0 = self._recompute()
        HV = v.shape[2]
        if not 0 <= head < HV:
            raise ValueError(f"head must be in 0..{HV - 1}, got {head}")
        kh = head // (HV // k.shape[2])                                    # the key head this value head reads
        sl = lambda x, h: x[:, :, h:h + 1]
        S0 = None if S0 is None else S0[:, head:head + 1]
        return sl(q, kh), sl(k, kh), sl(v, head), sl(g, head), sl(beta, head), S0

    def state_at(self, t: int, head: int) -> torch.Tensor:
        """S_t of one value head after token t (0-based, within this call): [K, V] float32."""
        q, k, v, g, beta, S0 = self._head_inputs(head)
        if not 0 <= t < v.shape[1]:
            raise ValueError(f"token index must be in 0..{v.shape[1] - 1}, got {t}")
        _, S = chunk_gated_delta_rule(q[:, :t + 1], k[:, :t + 1], v[:, :t + 1], g=g[:, :t + 1],
                                      beta=beta[:, :t + 1], initial_state=S0, output_final_state=True,
                                      use_qk_l2norm_in_kernel=True)         # [1, 1, K, V]
        return S[0, 0].float()

    def states(self, head: int, start: int = 0, stop: int | None = None) -> torch.Tensor:
        """S_t of one head for tokens start..stop-1: [stop - start, K, V] float32 (one head only, on demand)."""
        q, k, v, g, beta, S = self._head_inputs(head)
        stop = v.shape[1] if stop is None else min(stop, v.shape[1])
        if start > 0:   # jump to the state before `start` in one chunked call
            _, S = chunk_gated_delta_rule(q[:, :start], k[:, :start], v[:, :start], g=g[:, :start],
                                          beta=beta[:, :start], initial_state=S, output_final_state=True,
                                          use_qk_l2norm_in_kernel=True)
        out = []
        for t in range(start, stop):    # token by token: the readable recurrence keeps each S_t
            sl = slice(t, t + 1)
            _, S = recurrent_gated_delta_rule(q[:, sl], k[:, sl], v[:, sl], g=g[:, sl], beta=beta[:, sl],
                                              initial_state=S, output_final_state=True,
                                              use_qk_l2norm_in_kernel=True)
            out.append(S[0, 0].float())
        K, V = k.shape[-1], v.shape[-1]
        return torch.stack(out) if out else torch.empty(0, K, V)


@dataclass
class Trace:
    """model.trace's result for one sequence (batch of one)."""
    input_ids: torch.Tensor                     # [T] the tokens of this call
    start: int                                  # position of input_ids[0] in the whole sequence
    kernel: str                                 # "chunk" | "recurrent"
    embeddings: torch.Tensor                    # [T, D] residual stream before layer 0
    layers: list[LayerTrace]
    logits: torch.Tensor | None                 # [T, vocab] in the model dtype (bf16 for big models) when every layer ran, else None
    cache: object = field(default=None, repr=False)  # pass as model.trace(..., cache=trace.cache) to continue

    def gdn_layers(self) -> list[int]:
        return [lt.index for lt in self.layers if lt.kind == "linear_attention"]
