"""flash-linear-attention's Triton chunk kernel, when it can run here: a thin hook, never required.

fla is optional (a GPU-only extra: it needs CUDA and Triton). `fla_chunk(device)` returns its
chunk_gated_delta_rule wrapped to our calling convention, or None when fla is not importable or the
tensors are not on CUDA, so callers write `if (fla := fla_chunk(q.device)) is not None: ...`.
Be honest when showing it: fla computes float32 inputs with TF32 matrix multiplies (about 1e-3
relative error, against ~1e-7 for our float32 kernel), so its difference from the recurrent
reference is shown, never assumed.
"""
from __future__ import annotations

import importlib

import torch

FLA_MODULE = "fla.ops.gated_delta_rule"
ACCELERATOR = "cuda"   # the only device type fla's Triton kernels run on


def _import_fla():
    """fla's chunk_gated_delta_rule, or None. Any failure counts as absent: fla can fail at import for
    reasons of its own (no Triton, a Triton / CUDA mismatch), and it is only ever a second opinion."""
    try:
        return importlib.import_module(FLA_MODULE).chunk_gated_delta_rule
    except Exception:
        return None


def fla_chunk(device):
    """A function (q, k, v, *, g, beta, initial_state=None, output_final_state=False,
    use_qk_l2norm_in_kernel=False) -> (o, final_state) in our layout ([B, T, H, K], see gdn.ops), backed
    by fla's chunk kernel; None unless `device` is a CUDA device and fla is importable. Every tensor it
    is given, positional or keyword, is moved to `device` first: fla's kernels read only that device."""
    if torch.device(device).type != ACCELERATOR:
        return None
    kernel = _import_fla()
    if kernel is None:
        return None

    def run(q, k, v, *, g, beta, initial_state=None, output_final_state=False, use_qk_l2norm_in_kernel=False):
        q, k, v, g, beta, initial_state = (None if x is None else x.to(device)
                                           for x in (q, k, v, g, beta, initial_state))
        # fla takes the same [B, T, H, K] layout and keyword names; its state is float32 like ours.
        return kernel(q=q, k=k, v=v, g=g, beta=beta, initial_state=initial_state,
                      output_final_state=output_final_state, use_qk_l2norm_in_kernel=use_qk_l2norm_in_kernel)
    return run


def fla_here():
    """fla_chunk on this machine's CUDA device, or None (no CUDA, or no fla)."""
    return fla_chunk(ACCELERATOR) if _accelerator_available() else None


def _accelerator_available() -> bool:
    return torch.cuda.is_available()
