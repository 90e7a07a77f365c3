"""Validation and preparation shared by both gated-delta-rule kernels (and the state-norm scan).

Both kernels take the transformers / flash-linear-attention layout and hand the math a head-first,
grouped-heads-expanded, normalised and scaled copy of the inputs in the working dtype:

    q, k: [B, T, HK, K]   v: [B, T, HV, V]   g: [B, T, HV]   beta: [B, T, HV] or [B, T, HV, V]
    -> q, k: [B, HV, T, K]   v: [B, HV, T, V]   g: [B, HV, T]   beta: [B, HV, T, 1 or V]
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch


@dataclass
class KernelInputs:
    q: torch.Tensor        # [B, HV, T, K]  L2-normalised if asked, already multiplied by scale
    k: torch.Tensor        # [B, HV, T, K]
    v: torch.Tensor        # [B, HV, T, V]
    g: torch.Tensor        # [B, HV, T]     log decay, <= 0 (-inf: alpha = 0)
    beta: torch.Tensor     # [B, HV, T, 1] per head, or [B, HV, T, V] per value channel
    state: torch.Tensor    # [B, HV, K, V]  initial state (zeros when none was given)
    out_dtype: torch.dtype  # the caller's v dtype: outputs are returned in it
    verdict: Callable[[], None]  # raises if the values were bad (see check_values): call it after the work


def working_dtype(*tensors: torch.Tensor) -> torch.dtype:
    """float64 if any input is float64, else float32: half types are promoted, never the reverse."""
    if any(t is not None and t.dtype == torch.float64 for t in tensors):
        return torch.float64
    return torch.float32


def l2_normalize(x: torch.Tensor, eps: float = 1e-6, scale: float = 1.0) -> torch.Tensor:
    """scale * x / sqrt(sum(x^2) + eps) over the last dim; the eps matches transformers and fla. The
    scale multiplies the [.., 1] factor, not x: one pass over x fewer than scaling afterwards."""
    factor = torch.linalg.vector_norm(x, dim=-1, keepdim=True).square().add(eps).rsqrt()   # no [.., D] x*x temporary
    return x * (factor if scale == 1.0 else factor * scale)


def check_shapes(q, k, v, g, beta, initial_state, n_states: int | None = None) -> None:
    """Raise ValueError naming the offending argument and shapes. n_states: how many initial states
    (one per sequence: N with cu_seqlens, see gdn.ops.varlen; None for B)."""
    for name, x in (("q", q), ("k", k), ("v", v)):
        if x.dim() != 4:
            raise ValueError(f"{name} must be 4-D [B, T, heads, dim], got shape {tuple(x.shape)}")
    if q.shape != k.shape:
        raise ValueError(f"q and k must have the same shape, got {tuple(q.shape)} and {tuple(k.shape)}")
    B, T, HK, K = q.shape
    Bv, Tv, HV, V = v.shape
    if (Bv, Tv) != (B, T):
        raise ValueError(f"v must share batch and length with q [B={B}, T={T}], got {tuple(v.shape)}")
    if HV % HK:
        raise ValueError(f"value heads ({HV}) must be a multiple of key heads ({HK})")
    if tuple(g.shape) != (B, T, HV):
        raise ValueError(f"g must be [B, T, HV] = {(B, T, HV)}, got {tuple(g.shape)}")
    if tuple(beta.shape) not in ((B, T, HV), (B, T, HV, V)):
        raise ValueError(
            f"beta must be [B, T, HV] = {(B, T, HV)} or per value channel [B, T, HV, V] = "
            f"{(B, T, HV, V)}, got {tuple(beta.shape)}")
    devices = {x.device for x in (q, k, v, g, beta, initial_state) if x is not None}
    if len(devices) > 1:
        raise ValueError(f"all inputs must be on one device, got {sorted(str(d) for d in devices)}")
    N = B if n_states is None else n_states
    if initial_state is not None and tuple(initial_state.shape) != (N, HV, K, V):
        what = "[B, HV, K, V]" if n_states is None else "[N, HV, K, V] (one per sequence of cu_seqlens)"
        raise ValueError(f"initial_state must be {what} = {(N, HV, K, V)}, got {tuple(initial_state.shape)}")


def check_values(q, k, v, g, beta, initial_state, beta_max: float = 1.0) -> Callable[[], None]:
    """Screen the values the rule is not defined for: NaN or Inf anywhere, g > 0 (a gate above 1 would
    amplify the memory; g = -inf, alpha = 0, is allowed), or beta outside [0, beta_max] (beta_max is 2
    only for fla's allow_neg_eigval, gdn.ops.options). Returns `verdict`, which
    raises a ValueError naming each offending argument (or returns None when all is well).

    Each input is screened by a few numbers, one fast pass each: q, k, v (and the initial state) by
    their sums (NaN and Inf survive a sum), g by its largest value, beta by its smallest and largest
    (NaN survives amax and aminmax, and fails every comparison). Only a flagged input (or a sum that
    overflowed) is then looked at element by element, which also says what is wrong with it.

    On a CPU the screens are read here, so bad inputs are refused before any work. On a GPU reading
    them here would stop the host until the GPU caught up (a host sync, 0.7-1 ms a call on an H200,
    with the GPU idle while the kernel's launches follow), so the screens, stacked into one small
    tensor, are copied to pinned host memory behind an event instead; the kernel queues its work and
    calls verdict() at the end, which waits for that copy only. (Seven launches: 0.34-0.45 ms a call
    on an H200 at T 4096-32768, where a screen of 22 small launches had cost 0.8-1.2 ms; bench/README.md.)
    A refused call has then computed on bad inputs, into fresh tensors that are dropped: nothing the
    caller passed is changed."""
    screens = []     # (values [0-d tensors], fine(values as floats) -> bool, problems() -> [messages])
    for name, x in (("q", q), ("k", k), ("v", v), ("initial_state", initial_state)):
        if x is not None and x.numel():
            screens.append(([x.sum(dtype=torch.float64 if x.dtype == torch.float64 else torch.float32)],
                            lambda sums: math.isfinite(sums[0]),
                            lambda x=x, name=name: [] if torch.isfinite(x).all() else [f"{name} contains NaN or Inf"]))
    if g.numel():
        screens.append(([g.amax()], lambda top: top[0] <= 0, lambda: _flagged(
            (torch.isnan(g).any(), "g contains NaN"),
            ((g > 0).any(), "g must be <= 0 (log decay: alpha = exp(g) lies in [0, 1]) but has positive values"))))
    if beta.numel():
        screens.append((list(torch.aminmax(beta)), lambda ends: 0 <= ends[0] and ends[1] <= beta_max, lambda: _flagged(
            (~torch.isfinite(beta).all(), "beta contains NaN or Inf"),
            (((beta < 0) | (beta > beta_max)).any(), f"beta must lie in [0, {beta_max:g}]"))))
    if not screens:
        return _fine
    values = [value for vs, _, _ in screens for value in vs]
    common = torch.float64 if any(value.dtype == torch.float64 for value in values) else torch.float32
    stacked = torch.stack([value.to(common) for value in values])        # [n values], on the inputs' device
    if stacked.device.type == "cuda":
        host = torch.empty(stacked.shape, dtype=common, pin_memory=True)
        host.copy_(stacked, non_blocking=True)
        copied = torch.cuda.Event()
        copied.record()
    else:
        host, copied = stacked, None

    def verdict() -> None:
        if copied is not None:
            copied.synchronize()
        read, problems = iter(host.tolist()), []
        for vs, fine, confirm in screens:
            if not fine([next(read) for _ in vs]):
                problems += confirm()
        if problems:
            raise ValueError("; ".join(problems) + " (pass validate=False to skip these checks)")
    if copied is None:
        verdict()                                                           # on a CPU: refuse before any work
    return verdict


def _flagged(*checks: tuple[torch.Tensor, str]) -> list[str]:
    """The messages of the checks whose flag (a 0-d bool tensor) is set."""
    return [message for flag, message in checks if bool(flag)]


def _fine() -> None:
    """The verdict when there is nothing to check, or checks are off."""


def check_inputs(q, k, v, g, beta, initial_state, validate: bool, *, beta_max: float = 1.0,
                 n_states: int | None = None) -> Callable[[], None]:
    """Shapes always (at once: they cost nothing); values unless the caller opts out (validate=False,
    for research on bad inputs). Returns the values' verdict: call it once the kernel's work is queued."""
    check_shapes(q, k, v, g, beta, initial_state, n_states)
    return check_values(q, k, v, g, beta, initial_state, beta_max) if validate else _fine


def prepare(q, k, v, g, beta, *, scale, initial_state, use_qk_l2norm_in_kernel, validate=True,
            beta_max: float = 1.0) -> KernelInputs:
    verdict = check_inputs(q, k, v, g, beta, initial_state, validate, beta_max=beta_max)
    B, T, HK, K = q.shape
    HV, V = v.shape[2], v.shape[3]
    dtype = working_dtype(q, k, v, g, beta, initial_state)
    # Value head j reads q/k head j // (HV / HK): consecutive value heads share a key head
    # (repeat_interleave, as in transformers and fla; a tiled .repeat pairs the wrong heads).
    q = q.to(dtype).repeat_interleave(HV // HK, dim=2)             # [B, T, HV, K]
    k = k.to(dtype).repeat_interleave(HV // HK, dim=2)             # [B, T, HV, K]
    if use_qk_l2norm_in_kernel:
        q, k = l2_normalize(q), l2_normalize(k)
    q = q * (K ** -0.5 if scale is None else scale)
    beta = beta.to(dtype)
    if beta.dim() == 3:
        beta = beta.unsqueeze(-1)                                  # [B, T, HV, 1]
    if initial_state is None:
        state = torch.zeros(B, HV, K, V, dtype=dtype, device=v.device)
    else:
        state = initial_state.to(dtype).clone(memory_format=torch.contiguous_format)
    return KernelInputs(
        q=q.transpose(1, 2), k=k.transpose(1, 2),                  # [B, HV, T, K]
        v=v.to(dtype).transpose(1, 2),                             # [B, HV, T, V]
        g=g.to(dtype).transpose(1, 2),                             # [B, HV, T]
        beta=beta.transpose(1, 2),                                 # [B, HV, T, 1 or V]
        state=state, out_dtype=v.dtype, verdict=verdict)
