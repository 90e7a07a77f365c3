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
from collections import OrderedDict

import torch

# Graphs kept (one per shape and dtype; the layers of one model share a shape). Each holds its
# static A, B and states buffers: 3 x 0.5 GB at T = 32768, H = 16, K = V = 128 in float32.
GRAPHS_KEPT = 2
# Fewer chunks than this run eagerly: capturing costs more than it saves.
MIN_GRAPH_CHUNKS = 16

_graphs: OrderedDict = OrderedDict()
_lock = threading.Lock()          # one replay at a time: the static buffers are shared


def affine_scan_eager(A: torch.Tensor, B: torch.Tensor, S0: torch.Tensor) -> torch.Tensor:
    """A: [n, BH, K, K], B: [n, BH, K, V], S0: [BH, K, V] -> states [n + 1, BH, K, V]: S0, then the
    state after each chunk (states[i] is the state before chunk i)."""
    states = torch.empty((A.shape[0] + 1, *S0.shape), dtype=S0.dtype, device=S0.device)
    states[0] = S0
    for i in range(A.shape[0]):
        torch.baddbmm(B[i], A[i], states[i], out=states[i + 1])    # [BH, K, V]
    return states


class _GraphScan:
    """A captured affine_scan_eager for one shape: copy inputs into its buffers, replay, copy out."""

    def __init__(self, A, B, S0):
        self.A, self.B, self.S0 = A.clone(), B.clone(), S0.clone()
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):                                # warm-up off the capturing stream
            affine_scan_eager(self.A, self.B, self.S0)
        torch.cuda.current_stream().wait_stream(side)
        self.graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self.graph):
            self.states = affine_scan_eager(self.A, self.B, self.S0)

    def __call__(self, A, B, S0):
        self.A.copy_(A)
        self.B.copy_(B)
        self.S0.copy_(S0)
        self.graph.replay()
        return self.states.clone()


def affine_scan(A: torch.Tensor, B: torch.Tensor, S0: torch.Tensor) -> torch.Tensor:
    """affine_scan_eager, replayed from a cached CUDA graph for CUDA tensors without autograd (the
    model's traces, the bench); on a CPU, for short scans, or when gradients flow: eagerly."""
    grads = torch.is_grad_enabled() and (A.requires_grad or B.requires_grad or S0.requires_grad)
    if A.device.type != "cuda" or grads or A.shape[0] < MIN_GRAPH_CHUNKS:
        return affine_scan_eager(A, B, S0)
    key = (tuple(A.shape), tuple(B.shape), A.dtype, A.device)
    with _lock:
        scan = _graphs.pop(key, None) or _GraphScan(A, B, S0)
        _graphs[key] = scan                                          # most recently used last
        while len(_graphs) > GRAPHS_KEPT:
            _graphs.popitem(last=False)
        return scan(A, B, S0)
