"""Why a chunked form exists, on one small head (docs/teaching-content.md §7), in float64 numpy.

Each token is an affine map of the table: S_t = A_t S_{t-1} + U_t with
A_t = alpha_t (I - beta_t k_t k_t^T) and U_t = beta_t k_t v_t^T. Maps compose in time order
(associative, not commutative), so a chunk of tokens is one merged map. Inside a chunk the
merged update is found by one unit-lower-triangular solve (the WY / UT form): the matrices that
solve uses are returned by chunk_matrices, computed by gdn.ops.chunk's own functions.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from gdn.lessons.stream import Stream, kernel_args
from gdn.ops.chunk import chunk_gated_delta_rule, log_decays, ut_inverse, ut_system
from gdn.ops.naive import recurrent_gated_delta_rule


def affine_maps(s: Stream) -> tuple[np.ndarray, np.ndarray]:
    """A: [T, K, K] and U: [T, K, V] of every token (per-head beta)."""
    T, K, V = s.shape
    A = s.alpha[:, None, None] * (np.eye(K) - s.beta[:, None, None] * np.einsum("tk,tj->tkj", s.k, s.k))
    U = s.beta[:, None, None] * np.einsum("tk,tv->tkv", s.k, s.v)
    return A, U


def compose(maps: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """Apply the maps in the given order: returns (A, U) with S_end = A S_start + U."""
    A_total, U_total = np.eye(maps[0][0].shape[0]), np.zeros_like(maps[0][1])
    for A, U in maps:
        A_total, U_total = A @ A_total, A @ U_total + U        # S -> A (A_total S + U_total) + U
    return A_total, U_total


@dataclass(frozen=True)
class AffineDemo:
    """Tokens t and t+1 as maps, merged in order and swapped, and how much grouping / order matter."""
    A_t: np.ndarray            # [K, K]
    A_next: np.ndarray         # [K, K]
    merged: np.ndarray         # [K, K]  A_{t+1} A_t: token t, then t+1
    swapped: np.ndarray        # [K, K]  A_t A_{t+1}: the wrong order
    grouping_error: float      # max |(first t+1 merged, then the rest) - (all merged at once)|: ~1e-16
    order_difference: float    # max |merged - swapped|: clearly > 0


def affine_demo(s: Stream, t: int) -> AffineDemo:
    A, U = affine_maps(s)
    maps = list(zip(A, U))
    merged, swapped = compose(maps[t:t + 2]), compose([maps[t + 1], maps[t]])
    grouped = compose([compose(maps[:t + 1]), *maps[t + 1:]])
    return AffineDemo(A_t=A[t], A_next=A[t + 1], merged=merged[0], swapped=swapped[0],
                      grouping_error=float(np.abs(grouped[0] - compose(maps)[0]).max()),
                      order_difference=float(np.abs(merged[0] - swapped[0]).max()))


@dataclass(frozen=True)
class ChunkMatrices:
    """The in-chunk matrices of the WY / UT form for one chunk (C' <= C tokens)."""
    gamma: np.ndarray      # [C']      cumulative log decay since the chunk start
    decay: np.ndarray      # [C', C']  Gamma_ij = exp(gamma_i - gamma_j) for j <= i, else 0
    strict: np.ndarray     # [C', C']  strict_lower(diag(beta) K K^T * Gamma)
    inverse: np.ndarray    # [C', C']  (I + strict)^-1, unit lower-triangular
    scores: np.ndarray     # [C', C']  Q K^T * Gamma, lower triangle including the diagonal


def chunk_matrices(s: Stream, chunk_size: int, chunk: int) -> ChunkMatrices:
    """The matrices of one chunk, computed by the chunked kernel's own functions (gdn.ops.chunk) in float64."""
    lo, hi = chunk * chunk_size, min((chunk + 1) * chunk_size, s.shape[0])
    if not 0 <= lo < hi:
        raise ValueError(f"chunk {chunk} is outside a stream of {s.shape[0]} tokens")
    as_tensor = lambda x: torch.tensor(x[lo:hi], dtype=torch.float64)[None]    # [1, C', ...]
    with np.errstate(divide="ignore"):                         # alpha = 0 -> g = -inf, as the kernel takes it
        g = as_tensor(np.log(s.alpha))                         # [1, C']
    k, q, beta = as_tensor(s.k), as_tensor(s.q), as_tensor(s.beta)
    gamma, D = log_decays(g)
    decay = D.exp()                                            # [1, C', C']  0 above the diagonal
    system = ut_system(k, beta, decay)                         # [1, C', C']  strict lower part is L - I
    numpy = lambda x: x[0].numpy()
    return ChunkMatrices(gamma=numpy(gamma), decay=numpy(decay), strict=np.tril(numpy(system), -1),
                         inverse=numpy(ut_inverse(system)), scores=np.tril(numpy(q @ k.transpose(1, 2) * decay)))


def run_both_kernels(s: Stream, chunk_size: int) -> dict[str, np.ndarray]:
    """The stream through gdn's recurrent and chunked kernels in float64 (raw q, k, scale 1)."""
    args, kw = kernel_args(s)
    kw["output_final_state"] = True
    o_rec, S_rec = recurrent_gated_delta_rule(*args, **kw)
    o_chunk, S_chunk = chunk_gated_delta_rule(*args, chunk_size=chunk_size, **kw)
    out = {"o_rec": o_rec[0, :, 0].numpy(), "o_chunk": o_chunk[0, :, 0].numpy(),          # [T, V]
           "S_rec": S_rec[0, 0].numpy(), "S_chunk": S_chunk[0, 0].numpy()}                # [K, V]
    out["max_output_diff"] = float(np.abs(out["o_rec"] - out["o_chunk"]).max())
    out["max_state_diff"] = float(np.abs(out["S_rec"] - out["S_chunk"]).max())
    return out


def crossover_length(timing: dict[str, np.ndarray]) -> int | None:
    """The first measured length from which the chunked kernel is faster, or None."""
    faster = timing["chunk"] < timing["recurrent"]
    for i in range(len(faster)):
        if faster[i:].all():
            return int(timing["T"][i])
    return None


def loop_wins_up_to(timing: dict[str, np.ndarray]) -> int | None:
    """The longest measured length below the crossover at which the token loop was faster, or None
    (then the crossover, if any, is only the smallest length tried, not a measured change)."""
    cross = crossover_length(timing)
    slower = [int(T) for T, c, r in zip(timing["T"], timing["chunk"], timing["recurrent"])
              if c >= r and (cross is None or T < cross)]
    return max(slower, default=None)
