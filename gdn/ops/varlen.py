"""Variable-length batches: N sequences packed into one row of tokens, as fla and FlashAttention take them.

cu_seqlens is a LongTensor [N + 1] of offsets, 0 = cu_seqlens[0] <= ... <= cu_seqlens[N] = T: sequence n
is tokens cu_seqlens[n] : cu_seqlens[n + 1] of a batch of one ([1, T, H, D]). Initial and final states
are [N, HV, K, V], one per sequence; no state crosses from one sequence into the next. A batch of B equal
sequences is the case cu_seqlens = [0, T, 2T, ..., BT] (the same memory as [1, B*T, H, D]), which is how
the Triton path (gdn.ops.fused) treats every batch.

The offsets are read to the host once (a sync on a GPU, as fla's own chunk indexing does): the number
of chunks sets how many programs the Triton kernels launch. The torch path (a CPU, float64, per-channel
beta, autograd) runs the sequences one call each (per_sequence): exact and simple, but a Python loop, so
a batch of many short sequences under autograd pays one call's overhead per sequence.
"""
from __future__ import annotations

import torch

from gdn.ops.inputs import check_inputs


def sequence_bounds(cu_seqlens: torch.Tensor, B: int, T: int) -> list[int]:
    """The validated offsets as a host list [N + 1]; ValueError naming what is wrong."""
    if B != 1:
        raise ValueError(f"with cu_seqlens the batch must be one packed row (B = 1), got B = {B}")
    if not isinstance(cu_seqlens, torch.Tensor) or cu_seqlens.dim() != 1 or cu_seqlens.numel() < 2:
        shape = tuple(cu_seqlens.shape) if isinstance(cu_seqlens, torch.Tensor) else type(cu_seqlens).__name__
        raise ValueError(f"cu_seqlens must be a 1-D tensor [N + 1] of offsets, got {shape}")
    if cu_seqlens.dtype.is_floating_point or cu_seqlens.dtype.is_complex or cu_seqlens.dtype == torch.bool:
        raise ValueError(f"cu_seqlens must hold integers (torch.long), got {cu_seqlens.dtype}")
    bounds = [int(x) for x in cu_seqlens.tolist()]
    if bounds[0] != 0 or bounds[-1] != T:
        raise ValueError(f"cu_seqlens must start at 0 and end at T = {T}, got {bounds[0]} ... {bounds[-1]}")
    if any(b < a for a, b in zip(bounds, bounds[1:])):
        raise ValueError("cu_seqlens must not decrease (each sequence has a length >= 0)")
    return bounds


def per_sequence(kernel, q, k, v, g, beta, bounds: list[int], initial_state, **kw):
    """Run `kernel` (either gated-delta-rule kernel, values already checked) on each packed sequence
    alone and put the pieces back: o [1, T, HV, V] and the final states [N, HV, K, V]. Every piece is
    a slice (no copy) and autograd sees a plain cat."""
    outs, states = [], []
    for n, (start, stop) in enumerate(zip(bounds, bounds[1:])):
        part = slice(start, stop)
        S0 = None if initial_state is None else initial_state[n:n + 1]
        o, S = kernel(q[:, part], k[:, part], v[:, part], g=g[:, part], beta=beta[:, part], initial_state=S0,
                      output_final_state=True, validate=False, **kw)
        outs.append(o)
        states.append(S)
    return torch.cat(outs, dim=1), torch.cat(states, dim=0)         # [1, T, HV, V], [N, HV, K, V]


def packed(kernel, q, k, v, g, beta, cu_seqlens, *, initial_state, output_final_state: bool, validate: bool,
           beta_max: float = 1.0, **kw):
    """A kernel's cu_seqlens call on its torch path: offsets, shapes and values checked once for the whole
    row, then each sequence alone (per_sequence). g, beta and the state are in their plain forms (options
    applied). Returns o [1, T, HV, V] and the final states [N, HV, K, V] (None unless asked)."""
    bounds = sequence_bounds(cu_seqlens, q.shape[0], q.shape[1])
    verdict = check_inputs(q, k, v, g, beta, initial_state, validate, beta_max=beta_max, n_states=len(bounds) - 1)
    o, S = per_sequence(kernel, q, k, v, g, beta, bounds, initial_state, **kw)
    verdict()
    return o, (S if output_final_state else None)
