"""The chunked kernel's sequential part on a GPU as one Triton kernel: the state carried through every
chunk in registers, never written to memory between chunks.

After the state-free work is batched over all chunks (gdn.ops.chunk), what is left per chunk i of
c tokens, for one head, given the state S [K, V] entering it:

    N_i     = U_i - W_i S                       [c, V]  what each token really writes
    O_i     = Qd_i S + P_i N_i                  [c, V]  the outputs (Qd: decayed queries, P: scores)
    S      <- e^gamma_c S + Kd_i^T N_i          [K, V]  the state after the chunk (Kd: keys decayed to its end)

The torch path (gdn.ops.scan) turns each update into an affine map S -> A S + B and scans those with one
matmul per chunk; that costs two extra [K, c] x [c, *] products per chunk to form A and B, the states of
every chunk written out and read back, and 512 launches replayed from a CUDA graph at T = 32768. Here one
program owns one head and a block of BV value columns (the columns of S are independent: every product
above reads S only through its own columns) and walks the chunks in order; only N_i's inputs and O_i
touch memory.

Precision: every product is IEEE float32 (Triton's default would be TF32, ~1e-3 relative error). For
bfloat16 / float16 inputs (gdn.ops.chunk's "Half precision") the three [c, K] factors are read from
memory in half, half the bytes, and widened before multiplying; the state is never rounded to half, so
the error stays at or below the torch path's, where S is read in half. Tensor-core products (bf16
factors, and tf32 / tf32x3 for float32) were tried and ended in an illegal memory access on the H200
(Triton 3.6); the widened form compiles to the same code as the float32 one, which runs.

Measured on an H200 (bench_kernels --table, B = 1, H = 16, K = V = 128): fp32 T 32768 10.6 ms against
13.2 ms with the torch scan (fla: 4.7 ms), T 4096 2.8 against 3.1 ms (fla: 1.8 ms); the pass itself is
~4.9 of the 10.2 ms of GPU time at T 32768 (torch.profiler), the rest the state-free torch work.

Triton is optional: without it (or off CUDA) `state_pass_available` is False and gdn.ops.chunk scans
with torch. The kernel itself is gdn.ops.state_pass_kernel, imported on first use.
tests/test_state_pass.py runs it on a CPU through Triton's interpreter (TRITON_INTERPRET=1) against a
float64 loop and, through the chunked kernel, against the recurrent one.
"""
from __future__ import annotations

import functools
import importlib.util
import os

import torch

# Triton's CPU interpreter (set before Triton is imported): kernels run in Python, for the tests only.
INTERPRETED = os.environ.get("TRITON_INTERPRET") == "1"


# Heads (B * H) up to which this kernel beats the torch scan. Measured on an H200 (bench_kernels --table,
# T 4096 and 32768, H 16, K = V = 128): at 16 heads 10.6 vs 13.2 ms (fp32, T 32768) and 2.8 vs 3.1 ms
# (T 4096); at 128 heads the torch scan's batched matmuls win, 80 vs 89 ms and 10.8 vs 11.8 ms. The
# crossover between 16 and 128 was not measured.
STATE_PASS_MAX_HEADS = 32


def _power_of_two(x: int) -> bool:
    return x >= 16 and x & (x - 1) == 0


def state_pass_available(S: torch.Tensor, c: int) -> bool:
    """Whether the Triton kernel should carry the state S [BH, K, V] through chunks of c tokens: Triton
    present, a CUDA device (or Triton's CPU interpreter, for the tests), a float32 state (float64, the
    tests' reference, stays in torch), at most STATE_PASS_MAX_HEADS heads, and c, K, V powers of two
    >= 16 (tl.arange and tl.dot need them)."""
    if S.dtype != torch.float32 or S.shape[0] > STATE_PASS_MAX_HEADS:
        return False
    if not all(_power_of_two(x) for x in (c, *S.shape[1:])):
        return False
    return (S.device.type == "cuda" or INTERPRETED) and _triton_installed()


@functools.cache
def _triton_installed() -> bool:
    """Looked up, not imported: importing Triton costs ~0.4 s, paid only when the kernel first runs."""
    return importlib.util.find_spec("triton") is not None


def state_pass(q_decayed, scores, k_to_end, chunk_decay, U, W, S, md):
    """n chunks of BH heads, chunk-major (row i*BH + h): q_decayed, k_to_end, W: [nBH, c, K];
    scores: [nBH, c, c]; U: [nBH, c, V]; chunk_decay: [nBH, 1, 1] (e^gamma_c); S: [BH, K, V] the state
    before the first chunk (float32); md: the dtype the [c, K] factors are read in (see Precision). Returns the outputs
    [n, BH, c, V] (float32) and the state after the last chunk [BH, K, V]."""
    BH, K, V = S.shape
    n, c = q_decayed.shape[0] // BH, q_decayed.shape[1]
    half = lambda x: x.to(md).contiguous()
    out = torch.empty(n * BH, c, V, dtype=S.dtype, device=S.device)
    S_end = torch.empty_like(S)
    from gdn.ops.state_pass_kernel import state_pass_kernel
    grid = lambda meta: (BH, V // meta["BV"])
    state_pass_kernel[grid](half(q_decayed), scores.contiguous(), half(k_to_end), chunk_decay.contiguous(),
                             U.contiguous(), half(W), S.contiguous(), out, S_end, n, BH,
                             C=c, K=K, V=V, HALF=md != torch.float32, INTERPRET=INTERPRETED)
    return out.view(n, BH, c, V), S_end
