"""Batched matrix products that read their factors in a chosen dtype: the chunked kernel's half-precision
GEMMs (gdn.ops.chunk, "Half precision") and the state scan (gdn.ops.scan) share them."""
from __future__ import annotations

import torch


def matmul_dtype(v: torch.Tensor, working: torch.dtype) -> torch.dtype:
    """The dtype the GEMMs read: v's own for bfloat16 / float16 inputs (see Half precision above), else
    the working dtype."""
    return v.dtype if v.dtype in (torch.bfloat16, torch.float16) else working


def mm(a: torch.Tensor, b: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """Batched a @ b with both factors read in `dtype` (a half dtype accumulates in float32 inside the
    GEMM), returned in a's dtype. With dtype = a's dtype it is plain torch.bmm (a factor already cast
    to a half dtype gives a half result: the caller casts it back)."""
    if dtype == a.dtype:
        return torch.bmm(a, b.to(dtype))
    return torch.bmm(a.to(dtype), b.to(dtype)).to(a.dtype)


def mm_add(c: torch.Tensor, a: torch.Tensor, b: torch.Tensor, dtype: torch.dtype, alpha: float = 1) -> torch.Tensor:
    """c + alpha * a @ b, the product read as in mm (one fused baddbmm when no cast is needed)."""
    if dtype == c.dtype:
        return torch.baddbmm(c, a, b, alpha=alpha)
    return c.add(mm(a, b, dtype), alpha=alpha)


def mm_add_(c: torch.Tensor, a: torch.Tensor, b: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """c += a @ b in place (c a fresh temporary whose old value autograd does not need), read as in mm."""
    if dtype == c.dtype:
        return c.baddbmm_(a, b)
    return c.add_(mm(a, b, dtype))
