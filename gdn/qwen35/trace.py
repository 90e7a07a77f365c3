"""What model.trace records, and the state diagnostics of a GDN layer.

Keeping every per-token state S_t (T x HV x K x V floats per layer) is out of the question for long
prompts, so a trace keeps, per GDN layer: g and beta [T, HV], the Frobenius norm of S_t for every token
and head [T, HV] (computed chunk by chunk from Gram matrices, never materialising S_t), and the final
state [HV, K, V]. One head's S_t is recomputed on demand from the layer's input (`state_at`, `states`).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import torch
import torch.nn.functional as F

from gdn import chunk_gated_delta_rule, recurrent_gated_delta_rule

NORM_CHUNK = 64


def state_norm_scan(k, v, g, beta, S0=None, chunk: int = NORM_CHUNK):
    """||S_t||_F after every token, without building S_t.

    k: [B, T, HK, K] raw keys (L2-normalised here, as the kernel does); v: [B, T, HV, V];
    g: [B, T, HV] log decay <= 0; beta: [B, T, HV] in (0, 1); S0: [B, HV, K, V] or None.
    Returns norms [B, T, HV] float32 and the final state [B, HV, K, V] float32.

    Inside a chunk with cumulative log decay gamma and start state S0 (Yang et al. 2024, UT transform):
        S_t = e^{gamma_t} S0 + sum_{j<=t} D_tj k_j u_j^T,   D_tj = e^{gamma_t - gamma_j} (j <= t)
    where the "new values" u solve (I + strict_lower(diag(beta) K K^T * D)) U = diag(beta)(V - diag(e^gamma) K S0),
    i.e. U = U0 - W S0 with U0, W independent of S0 (computed for all chunks at once). Then
        ||S_t||^2 = e^{2 gamma_t}||S0||^2 + 2 e^{gamma_t} sum_j D_tj k_j^T S0 u_j + sum_ij D_ti D_tj (k_i.k_j)(u_i.u_j).
    Only S0 -> S0' between chunks is sequential.
    """
    B, T, HK, K = k.shape
    HV, V = v.shape[2], v.shape[3]
    C = chunk
    N = -(-T // C)
    pad = N * C - T
    # Zero padding is inert (k = 0, beta = 0, g = 0: no write, no decay); padded rows are dropped at the end.
    k = _l2(k.float()).repeat_interleave(HV // HK, dim=2)                 # [B, T, HV, K] value head j -> key head j // r
    k = F.pad(k.transpose(1, 2), (0, 0, 0, pad)).reshape(B, HV, N, C, K)  # [B, HV, N, C, K]
    v = F.pad(v.float().transpose(1, 2), (0, 0, 0, pad)).reshape(B, HV, N, C, V)  # [B, HV, N, C, V]
    g = F.pad(g.float().transpose(1, 2).clamp(min=-200.0), (0, pad)).reshape(B, HV, N, C)
    beta = F.pad(beta.float().transpose(1, 2), (0, pad)).reshape(B, HV, N, C)
    gamma = g.cumsum(-1)                                                   # [B, HV, N, C]
    causal = torch.ones(C, C, dtype=torch.bool).tril()
    D = _exp((gamma[..., :, None] - gamma[..., None, :]).masked_fill(~causal, float("-inf")))  # [B, HV, N, C, C]
    KK = k @ k.transpose(-1, -2)                                           # [B, HV, N, C, C]
    eye = torch.eye(C)
    L_inv = torch.linalg.solve_triangular(eye + (beta[..., None] * KK * D).tril(-1), eye.expand(B, HV, N, C, C),
                                          upper=False, unitriangular=True)  # [B, HV, N, C, C]
    U0 = L_inv @ (beta[..., None] * v)                                     # [B, HV, N, C, V]
    W = L_inv @ (beta[..., None] * _exp(gamma)[..., None] * k)             # [B, HV, N, C, K]
    k_to_end = k * _exp(gamma[..., -1:] - gamma)[..., None]              # [B, HV, N, C, K] decayed to chunk end
    S = torch.zeros(B, HV, K, V) if S0 is None else S0.float().clone()
    U, KS, s0 = torch.empty_like(U0), torch.empty_like(U0), torch.empty(B, HV, N, 1)
    for n in range(N):                                                     # the only sequential part
        s0[:, :, n] = S.pow(2).sum((-1, -2))[..., None]
        KS[:, :, n] = k[:, :, n] @ S                                       # [B, HV, C, V] what S0 recalls for k_j
        U[:, :, n] = U0[:, :, n] - W[:, :, n] @ S                          # [B, HV, C, V]
        S = _exp(gamma[:, :, n, -1])[..., None, None] * S + k_to_end[:, :, n].transpose(-1, -2) @ U[:, :, n]
    cross = (D * (KS * U).sum(-1)[..., None, :]).sum(-1)                   # [B, HV, N, C]
    gram = ((D @ (KK * (U @ U.transpose(-1, -2)))) * D).sum(-1)            # [B, HV, N, C]
    sq = _exp(2 * gamma) * s0 + 2 * _exp(gamma) * cross + gram
    norms = sq.clamp(min=0).sqrt().reshape(B, HV, N * C)[..., :T]          # [B, HV, T]
    return norms.transpose(1, 2), S


def _exp(x: torch.Tensor) -> torch.Tensor:
    """exp, with results below e^-60 (~1e-26) set to exactly 0. Strong decays (g ~ -5 per token) push
    in-chunk decays into float32's subnormal range, where CPU arithmetic is 15-80x slower (measured);
    the dropped terms are below 1e-26 relative."""
    return x.masked_fill(x < -60.0, float("-inf")).exp()                # [same shape]


def _l2(x, eps: float = 1e-6):
    return x * torch.rsqrt((x * x).sum(-1, keepdim=True) + eps)          # same eps as the kernels


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
