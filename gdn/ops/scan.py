"""The state scan of the chunked kernel's GPU path: S_{i+1} = A_i S_i + B_i over the chunks, replayed
from a CUDA graph.

After the state-free work is batched over all chunks, one chunk's state update is the affine map
S -> A S + B with A = e^gamma_C I - K~^T W ([K, K]) and B = K~^T U ([K, V]) (chunk.py has the
derivation), so the only sequential part left is one batched matmul per chunk. A GPU runs each of
them in microseconds, but launching them from Python costs more than that (T = 32768 has 512
chunks); captured once in a CUDA graph per shape, the whole scan is one launch. Nothing in it
reads a value back to the host, which capturing requires.
"""
from __future__ import annotations

import threading

import torch

from gdn.lru import LRU
from gdn.ops.matmul import mm_add

# Graphs kept (one per shape and dtype; the layers of one model share a shape). Each holds its
# static A, B and states buffers: 3 x 0.5 GB at T = 32768, H = 16, K = V = 128 in float32.
GRAPHS_KEPT = 2
# Fewer chunks than this run eagerly: capturing costs more than it saves.
MIN_GRAPH_CHUNKS = 16

_graphs = LRU(GRAPHS_KEPT)
_lock = threading.Lock()          # one replay at a time: the static buffers are shared


def scan_in_place_(A: torch.Tensor, states: torch.Tensor) -> torch.Tensor:
    """A: [n, BH, K, K]; states: [n + 1, BH, K, V] holding S0 then B_0 .. B_{n-1} -> the states (S0,
    then the state after each chunk), in place: states[i+1] += A_i states[i], one matmul per chunk
    and no copy of B_i (an out-of-place baddbmm would copy it first)."""
    for i in range(A.shape[0]):
        states[i + 1].baddbmm_(A[i], states[i])                     # [BH, K, V]
    return states


def states_buffer(B: torch.Tensor, S0: torch.Tensor, out: torch.Tensor | None = None) -> torch.Tensor:
    """[n + 1, BH, K, V]: S0 followed by B, the input layout of scan_in_place_."""
    out = torch.empty((B.shape[0] + 1, *S0.shape), dtype=S0.dtype, device=S0.device) if out is None else out
    out[0].copy_(S0)
    out[1:].copy_(B)
    return out


def affine_scan_eager(A: torch.Tensor, B: torch.Tensor, S0: torch.Tensor) -> torch.Tensor:
    """A: [n, BH, K, K], B: [n, BH, K, V], S0: [BH, K, V] -> states [n + 1, BH, K, V]: S0, then the
    state after each chunk (states[i] is the state before chunk i)."""
    return scan_in_place_(A, states_buffer(B, S0))


def affine_scan_differentiable(A: torch.Tensor, B: torch.Tensor, S0: torch.Tensor) -> torch.Tensor:
    """affine_scan_eager for autograd: each state a fresh tensor, stacked at the end. In place, the
    product A_i states[i] would be saved for backward as a view of the one buffer that every later
    step writes into, and backward would refuse it (the buffer's version has moved on)."""
    states = [S0]
    for i in range(A.shape[0]):
        states.append(torch.baddbmm(B[i], A[i], states[-1]))           # [BH, K, V]
    return torch.stack(states)


class _GraphScan:
    """A captured scan_in_place_ for one shape: copy inputs into its buffers, replay, copy out."""

    def __init__(self, A, B, S0):
        self.A, self.states = A.clone(), states_buffer(B, S0)
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):                                # warm-up off the capturing stream
            scan_in_place_(self.A, self.states.clone())
        torch.cuda.current_stream().wait_stream(side)
        self.graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self.graph):
            scan_in_place_(self.A, self.states)

    def __call__(self, A, B, S0):
        self.A.copy_(A)
        states_buffer(B, S0, out=self.states)
        self.graph.replay()
        return self.states.clone()      # the buffer is refilled by the next call


def affine_scan(A: torch.Tensor, B: torch.Tensor, S0: torch.Tensor) -> torch.Tensor:
    """affine_scan_eager, replayed from a cached CUDA graph for CUDA tensors without autograd (the
    model's traces, the bench); on a CPU or for short scans: eagerly in place; when gradients flow:
    out of place (affine_scan_differentiable), on any device."""
    grads = torch.is_grad_enabled() and (A.requires_grad or B.requires_grad or S0.requires_grad)
    if grads:
        return affine_scan_differentiable(A, B, S0)
    if A.device.type != "cuda" or A.shape[0] < MIN_GRAPH_CHUNKS:
        return affine_scan_eager(A, B, S0)
    key = (tuple(A.shape), tuple(B.shape), A.dtype, A.device)
    with _lock:
        scan = _graphs.get(key)
        if scan is None:
            scan = _GraphScan(A, B, S0)
            _graphs.put(key, scan)
        return scan(A, B, S0)


def scan_block(q_decayed, scores, k_to_end, chunk_decay, U, W, S, md):
    """gdn.ops.chunk's state loop for n > 1 chunks of per-head beta, with one matmul per chunk in the loop.
    Chunk i maps its start state to S_{i+1} = A_i S_i + B_i (A_i = e^gamma_c I - k_to_end^T W,
    B_i = k_to_end^T U); every other product needs only S_i and is batched over all chunks.
    Only W S_i reads its factors in md (see chunk.py's Half precision): the chunk maps carry their
    rounding into every later state, and Q S_i reads a state that slow gates let grow large."""
    BH, K, V = S.shape
    n = q_decayed.shape[0] // BH
    kT = k_to_end.transpose(1, 2)                                      # [nBH, K, c]
    A = torch.bmm(kT, W).neg_()                                        # [nBH, K, K]
    A.diagonal(dim1=1, dim2=2).add_(chunk_decay[:, :, 0])              # + e^gamma_c I, on the diagonal only
    B = torch.bmm(kT, U)                                               # [nBH, K, V]
    states = affine_scan(A.view(n, BH, K, K), B.view(n, BH, K, V), S)  # [n + 1, BH, K, V]
    S_before = states[:-1].reshape(n * BH, K, V)                       # [nBH, K, V]  state entering each chunk
    new_v = mm_add(U, W, S_before, md, alpha=-1)                       # [nBH, c, V]  U - W S_i
    out = torch.bmm(q_decayed, S_before).baddbmm_(scores, new_v)       # [nBH, c, V]
    return out.view(n, BH, *out.shape[1:]), states[-1]
