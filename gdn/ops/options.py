"""The kernels' optional input forms, named as flash-linear-attention names them.

    use_gate_in_kernel          g is Qwen3.5's raw gate input a [B, T, HV]; the kernel forms the log decay
                                g = -exp(A_log) * softplus(a + dt_bias) <= 0 itself (alpha = exp(g))
    use_beta_sigmoid_in_kernel  beta is given as logits [B, T, HV]; the kernel takes sigmoid(beta), or
                                2 * sigmoid(beta) with allow_neg_eigval
    allow_neg_eigval            beta may lie in [0, 2], not only [0, 1]: the step's eigenvalue 1 - beta |k|^2
                                may then be negative (Grazzi et al. 2024). fla accepts such a beta unasked
                                (it checks nothing) and refuses the flag without the sigmoid; ours checks
                                beta against [0, 1] unless the flag widens it, with or without the sigmoid
    state_v_first               initial and final states laid out [.., V, K] instead of [.., K, V]

"In kernel" is fla's name: fla fuses them into its Triton kernels; ours applies them once, in torch,
before either kernel runs (the value checks then screen the results), so autograd reaches A_log, dt_bias
and the logits like any other input. Each is a pass over a [B, T, HV] tensor (or a transpose of the
state): small next to the kernel's passes over [B, T, HV, V].
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F


@dataclass(frozen=True)
class Options:
    use_gate_in_kernel: bool = False
    A_log: torch.Tensor | None = None            # [HV]  the decay rate's log, per value head
    dt_bias: torch.Tensor | None = None          # [HV]  added to a before the softplus
    use_beta_sigmoid_in_kernel: bool = False
    allow_neg_eigval: bool = False               # beta in [0, 2]; with the sigmoid, beta = 2 sigmoid(logits)
    state_v_first: bool = False

    @property
    def beta_max(self) -> float:
        """The largest beta the value screen accepts: 2 with allow_neg_eigval."""
        return 2.0 if self.allow_neg_eigval else 1.0


def gdn_gate(a: torch.Tensor, A_log: torch.Tensor, dt_bias: torch.Tensor | None = None) -> torch.Tensor:
    """Qwen3.5's log decay g = -exp(A_log) * softplus(a + dt_bias) <= 0 (alpha = exp(g) in (0, 1]).
    a: [B, T, HV] raw gate input; A_log, dt_bias: [HV]. Returns [B, T, HV] in float32 (float64 for
    float64 inputs): never in a half dtype, where the decay's exponent would lose its low bits."""
    dtype = torch.float64 if torch.float64 in (a.dtype, A_log.dtype) else torch.float32
    x = a.to(dtype) if dt_bias is None else a.to(dtype) + dt_bias.to(dtype)
    return -A_log.to(dtype).exp() * F.softplus(x)                    # [B, T, HV]


def check_options(opts: Options, HV: int) -> None:
    """Raise ValueError for an option without what it needs, naming the argument."""
    if opts.use_gate_in_kernel:
        if opts.A_log is None:
            raise ValueError("use_gate_in_kernel=True needs A_log ([HV] decay parameters)")
        for name, x in (("A_log", opts.A_log), ("dt_bias", opts.dt_bias)):
            if x is not None and tuple(x.shape) != (HV,):
                raise ValueError(f"{name} must be [HV] = ({HV},), got shape {tuple(x.shape)}")


def apply_options(g, beta, initial_state, opts: Options):
    """(g, beta, initial_state) as given -> the plain forms both kernels compute with: log decay g,
    beta in [0, beta_max], the state [.., K, V]. The transposed state is a view (prepare copies it)."""
    check_options(opts, g.shape[-1] if g.dim() else 0)
    if opts.use_gate_in_kernel:
        g = gdn_gate(g, opts.A_log, opts.dt_bias)                    # [B, T, HV]
    if opts.use_beta_sigmoid_in_kernel:
        beta = torch.sigmoid(beta) * 2 if opts.allow_neg_eigval else torch.sigmoid(beta)
    if opts.state_v_first and initial_state is not None:
        initial_state = initial_state.transpose(-1, -2)              # [N, HV, V, K] -> [N, HV, K, V]
    return g, beta, initial_state


def final_state_layout(S: torch.Tensor | None, opts: Options) -> torch.Tensor | None:
    """The final state [N, HV, K, V] in the caller's layout ([N, HV, V, K] contiguous with state_v_first)."""
    if S is None or not opts.state_v_first:
        return S
    return S.transpose(-1, -2).contiguous()
