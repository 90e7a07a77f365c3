"""The playground's experiments (docs/teaching-content.md §3-5): pure functions returning numpy arrays.

    overwrite  re-write one key among n stored pairs; split the readout's error into the old value
               left behind, interference from the other keys and the new value's shortfall
    repeated   write the same (k, v) again and again: the delta rule's distance to v shrinks by
               |1 - beta ||k||^2| per write, linear attention's readout drifts as t beta ||k||^2 v
    key norm   the factor (1 - beta c^2) along k for a key of norm c: overshoot past 1, divergence past 2
    capacity   recall error of N random unit keys in d_k dims, for the three rules (beta = 1, q = k)
    half-life  alpha^n, and ln 0.5 / ln alpha tokens until half is left
Everything is float64 numpy and deterministic given the seed.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import torch

from gdn.lessons.compare import rule_of, run_rule
from gdn.lessons.stream import Stream
from gdn.lru import LRU

# The rules the playground compares, in its order: gdn.lessons.compare.RULES' names (the compare page may show
# more). Its strings: playground.rule_<name>, playground.rule_tick_<name>, playground.ow_row_<name>.
RULES = ("linear", "deltanet", "gdn")
GEOMETRIES = ("orthogonal", "random", "angle")
EXPLODE = 1e6            # relative errors above this are clipped for display (and flagged)


# ---- keys ------------------------------------------------------------------------------------

def unit_rows(x: np.ndarray) -> np.ndarray:
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


def make_keys(n: int, K: int, geometry: str, *, angle_deg: float = 90.0, seed: int = 0) -> np.ndarray:
    """n unit keys [n, K]. "orthogonal": orthonormal for the first min(n, K) (Gram-Schmidt of random
    draws), random beyond (no more room); "random": independent random directions; "angle": keys 0
    and 1 at angle_deg in the (e0, e1) plane, the rest as "orthogonal" in the remaining dims."""
    if geometry not in GEOMETRIES:
        raise ValueError(f"geometry must be one of {GEOMETRIES}, got {geometry!r}")
    rng = np.random.RandomState(seed)
    keys = unit_rows(rng.randn(n, K))                                  # [n, K]
    if geometry == "random":
        return keys
    if geometry == "orthogonal":
        m = min(n, K)
        q, r = np.linalg.qr(keys[:m].T)                                 # q: [K, m]
        keys[:m] = (q * np.sign(np.diag(r))).T                          # keep each draw's direction
        return keys
    theta = np.deg2rad(angle_deg)
    out = np.zeros((n, K))
    out[0, 0] = 1.0
    if n > 1:
        out[1, :2] = np.cos(theta), np.sin(theta)
    if n > 2:                                                           # the others, out of the plane
        out[2:] = make_keys(n - 2, K - 2, "orthogonal", seed=seed) @ np.eye(K - 2, K, 2) if K > 2 else keys[2:]
    return out


# ---- overwrite vs blur -----------------------------------------------------------------------

@dataclass(frozen=True)
class Overwrite:
    """Result of storing n pairs, then re-writing key 0 with a new value and reading key 0.

    All per-rule arrays are indexed in RULES order.
    readout: [3, V] what key 0 reads after the re-write; target: [V] the new value; old: [V] the old one.
    parts: [3, 3] norms of (old value left behind, interference from other keys, new value missed),
        each relative to ||target||; error: [3] ||readout - target|| / ||target||.
    along: [3, 3] the same three parts as signed components along the error's direction, relative to
        ||target||. The parts are vectors that add up to the error, so these add up to error exactly
        (their sideways components cancel); a negative one shrinks the error (norms never could).
    disturbed: [3] mean over the other keys of how far the re-write moved their readout, relative to
        their own value (nan-free: 0 when there are no other keys); cosine: [n, n] key similarities."""
    readout: np.ndarray
    target: np.ndarray
    old: np.ndarray
    parts: np.ndarray
    along: np.ndarray
    error: np.ndarray
    disturbed: np.ndarray
    cosine: np.ndarray


def _coefficients(rule: str, keys: np.ndarray, alpha: float, beta: float) -> np.ndarray:
    """[n + 1, n + 1]: row j = how much of each written value (n pairs, then the re-write) key j reads.
    Every rule is linear in the values, so writing one-hot values gives the mixing weights exactly."""
    n = keys.shape[0]
    k = np.vstack([keys, keys[:1]])                                     # [n + 1, K]: re-write key 0
    s = Stream(k=k, v=np.eye(n + 1), q=k, alpha=np.full(n + 1, alpha), beta=np.full(n + 1, beta),
               S0=np.zeros((keys.shape[1], n + 1)))
    S = run_rule(rule, s).S_new[-1]                                     # [K, n + 1]
    return keys @ S                                                     # [n, n + 1]


def overwrite(n: int, K: int, V: int, *, geometry: str = "orthogonal", angle_deg: float = 90.0,
              alpha: float = 1.0, beta: float = 1.0, knorm: float = 1.0, seed: int = 0) -> Overwrite:
    keys = knorm * make_keys(n, K, geometry, angle_deg=angle_deg, seed=seed)       # [n, K]
    rng = np.random.default_rng(seed + 1)
    values = np.round(rng.normal(size=(n + 1, V)), 1)                   # [n + 1, V]; last = new value
    values[-1] = np.where(np.abs(values[-1]) < 0.1, 1.0, values[-1])    # never an all-zero target
    target, old = values[-1], values[0]
    readout, parts, along, error, disturbed = [], [], [], [], []
    for rule in RULES:
        c = _coefficients(rule, keys, alpha, beta)                      # [n, n + 1]
        r = c[0] @ values                                               # [V]
        pieces = (c[0, 0] * old, c[0, 1:n] @ values[1:n], (c[0, n] - 1.0) * target)
        readout.append(r)
        parts.append([np.linalg.norm(p) / np.linalg.norm(target) for p in pieces])
        err = r - target                                                 # [V] = sum of the three pieces
        direction = err / np.linalg.norm(err) if np.linalg.norm(err) > 1e-12 else np.zeros_like(err)
        along.append([float(p @ direction) / np.linalg.norm(target) for p in pieces])
        error.append(np.linalg.norm(err) / np.linalg.norm(target))
        before = _coefficients_before(rule, keys, alpha, beta) @ values[:n]          # [n, V]
        moved = np.linalg.norm(c[1:] @ values - before[1:], axis=1)
        size = np.maximum(np.linalg.norm(values[1:n], axis=1), 1e-12)
        disturbed.append(float(np.mean(moved / size)) if n > 1 else 0.0)
    unit = keys / np.maximum(np.linalg.norm(keys, axis=1, keepdims=True), 1e-12)
    return Overwrite(readout=np.array(readout), target=target, old=old, parts=np.array(parts),
                     along=np.array(along), error=np.array(error), disturbed=np.array(disturbed), cosine=unit @ unit.T)


def _coefficients_before(rule: str, keys: np.ndarray, alpha: float, beta: float) -> np.ndarray:
    """[n, n]: mixing weights of each key's readout after the n pairs, before the re-write."""
    n = keys.shape[0]
    s = Stream(k=keys, v=np.eye(n), q=keys, alpha=np.full(n, alpha), beta=np.full(n, beta),
               S0=np.zeros((keys.shape[1], n)))
    return keys @ run_rule(rule, s).S_new[-1]


# ---- repeated writes and key norm ------------------------------------------------------------

def repeated_writes(T: int, *, beta: float, alpha: float = 1.0, knorm: float = 1.0) -> dict[str, np.ndarray]:
    """Write (k, v) = (c e0, (3, 4)) T times and read with q = k after each write.
    Returns rule -> [T + 1] distance ||o_t - v|| / ||v|| (entry 0: the empty table, distance 1)."""
    k = np.tile([knorm, 0.0], (T, 1))                                   # [T, 2]
    v = np.tile([3.0, 4.0], (T, 1))                                     # [T, 2]
    s = Stream(k=k, v=v, q=k, alpha=np.full(T, alpha), beta=np.full(T, beta), S0=np.zeros((2, 2)))
    return {rule: np.concatenate([[1.0], np.linalg.norm(run_rule(rule, s).output - v, axis=1) / 5.0])
            for rule in RULES}


def along_k_factor(knorm: np.ndarray, beta: float) -> np.ndarray:
    """(1 - beta ||k||^2): what one delta-rule step multiplies the stored component along k by."""
    return 1.0 - beta * np.asarray(knorm, dtype=float) ** 2


def norm_regime(beta: float, knorm: float) -> str:
    """What repeated writes do for x = beta ||k||^2 (the factor along k is 1 - x): none (x = 0), shrink
    (x < 1), exact (x = 1), overshoot (1 < x < 2), edge (x = 2: flips forever) or diverge (x > 2)."""
    x = beta * knorm ** 2
    return ("none" if np.isclose(x, 0) else "exact" if np.isclose(x, 1) else "edge" if np.isclose(x, 2) else
            "shrink" if x < 1 else "overshoot" if x < 2 else "diverge")


def clip_for_display(x: np.ndarray, limit: float = EXPLODE) -> tuple[np.ndarray, bool]:
    """Finite values no larger than limit (inf and nan become limit), and whether any were clipped."""
    x = np.asarray(x, dtype=float)
    bad = ~np.isfinite(x) | (np.abs(x) > limit)
    return np.where(bad, np.sign(np.nan_to_num(x, nan=1.0)) * limit, x), bool(bad.any())


# ---- capacity --------------------------------------------------------------------------------

CAPACITY_NS = (8, 16, 32, 64, 96, 128, 160, 192, 256, 384, 512, 768, 1024)
SPLIT = 16                # "most recent" and "oldest" groups in the split


def capacity_stream(N: int, K: int, V: int, *, seed: int = 0, geometry: str = "random"):
    """The reference protocol (teaching §4): RandomState(seed) draws keys [N, K] then values [N, V],
    both standard normal; keys are scaled to unit length (or made orthonormal up to K)."""
    rng = np.random.RandomState(seed)
    return _capacity_keys(rng.randn(N, K), geometry), rng.randn(N, V)


def _capacity_keys(drawn: np.ndarray, geometry: str) -> np.ndarray:
    """[N, K]: the stream's keys from its first N*K normals, drawn first, so they do not depend on V
    (the QR draws nothing)."""
    N, K = drawn.shape
    keys = unit_rows(drawn)
    if geometry == "orthogonal":
        m = min(N, K)
        q, r = np.linalg.qr(keys[:m].T)
        keys[:m] = (q * np.sign(np.diag(r))).T
    return keys


def recall_errors(rule: str, keys: np.ndarray, values: np.ndarray, *, alpha: float = 1.0) -> np.ndarray:
    """[N] relative recall error ||S^T k_i - v_i|| / ||v_i|| after writing all N pairs with beta = 1,
    reading each key with q = k_i (oldest first). alpha is used by rules that decay only."""
    r = rule_of(rule)
    a = alpha if r.decays else 1.0
    S = np.zeros((keys.shape[1], values.shape[1]))
    for k, v in zip(keys, values):                                      # the recurrence, one pair a step
        S *= a
        S += np.outer(k, v - S.T @ k if r.delta else v)                 # [K, V]
    return np.linalg.norm(keys @ S - values, axis=1) / np.linalg.norm(values, axis=1)


# With beta = 1 and unit keys one delta / gated step is S_t = alpha P_t S_{t-1} + k_t v_t^T, with the
# projection P_t = I - k_t k_t^T. The alphas are scalars, so they factor out of the unrolled sum:
#     S_N = sum_i alpha^(N-i) M_i v_i^T,   M_i = P_N ... P_{i+1} k_i,
# and M (what is left of each key after the later writes projected it away) depends on the keys
# only: not on alpha, not on the values. So M is cached per keys (N, K, seed, geometry) and a new
# alpha costs two matmuls per stream. The streams are cached too: drawing them (RandomState, the
# reference protocol) costs more than the matmuls. Each cache holds CACHED_SETS settings of all
# CAPACITY_NS; at d_k = d_v = 128 a setting is ~3.7 MB of M plus ~3.7 MB of unit keys; the values are
# views of their seed's normals (_normals: ~2 MB a seed, kept while a cached stream uses them).
CACHED_SETS = 8


# RandomState's normals come as one sequence however they are asked for (randn(a) then randn(b) gives
# randn(a + b)), so every stream of a seed is a slice of that seed's sequence: stream N's keys are its
# first N*K normals, its values the next N*V. One draw of the longest stream serves all CAPACITY_NS
# (262k normals at d_k = d_v = 128, instead of 932k drawn stream by stream and the keys again for M).
_normals_drawn = LRU(CACHED_SETS)          # seed -> the longest run of its normals drawn so far


def _normals(seed: int, n: int) -> np.ndarray:
    """[n] read-only: the first n standard normals of RandomState(seed)."""
    have = _normals_drawn.get(seed)
    if have is None or len(have) < n:
        have = _read_only(np.random.RandomState(seed).randn(n))
        _normals_drawn.put(seed, have)
    return have[:n]


@lru_cache(maxsize=CACHED_SETS * len(CAPACITY_NS))
def _cached_keys(N: int, K: int, seed: int, geometry: str) -> np.ndarray:
    """[N, K] read-only: capacity_stream's keys, cut from _normals (shared by the streams of every d_v and M)."""
    return _read_only(_capacity_keys(_normals(seed, N * K).reshape(N, K), geometry))


@lru_cache(maxsize=CACHED_SETS * len(CAPACITY_NS))
def _cached_stream(N: int, K: int, V: int, seed: int, geometry: str) -> tuple[np.ndarray, np.ndarray]:
    """capacity_stream(N, K, V, seed=seed, geometry=geometry), read-only, cut from _normals."""
    return _cached_keys(N, K, seed, geometry), _normals(seed, N * (K + V))[N * K:].reshape(N, V)


@lru_cache(maxsize=CACHED_SETS * len(CAPACITY_NS))
def unrolled_keys(N: int, K: int, seed: int, geometry: str) -> np.ndarray:
    """[N, K] read-only: row i is M_i = P_N ... P_{i+1} k_i for capacity_stream's keys. Telescoping
    P_N ... P_{i+1} = I - sum_{j>i} M_j k_j^T gives M_i = k_i - sum_{j>i} (k_j . k_i) M_j, so
    (I + L)^T M = keys with L the strictly lower triangle of keys keys^T: one triangular solve.
    The same as the delta rule's final state with values = identity (tests/test_playground.py).
    (I + L)^T is the strict upper triangle of the symmetric Gram matrix with a unit diagonal, which is
    all of it a unit-triangular solve reads: no triangle to cut out."""
    keys = torch.tensor(_cached_keys(N, K, seed, geometry))            # [N, K], a copy: torch wants writable memory
    gram = keys @ keys.T                                                # [N, N], symmetric
    return _read_only(torch.linalg.solve_triangular(gram, keys, upper=True, unitriangular=True).numpy())


def _read_only(x: np.ndarray) -> np.ndarray:
    x.setflags(write=False)                                             # shared by every caller: no edits
    return x


def capacity_errors(rule: str, N: int, K: int, V: int, *, alpha: float = 1.0, seed: int = 0,
                    geometry: str = "random") -> np.ndarray:
    """[N]: recall_errors(rule, *capacity_stream(N, K, V, ...), alpha=alpha) to rounding, through
    the unrolled form: S = M^T (w v) with w_i = alpha^(N-i) (0^0 = 1: alpha = 0 keeps the last pair)."""
    r = rule_of(rule)
    keys, values = _cached_stream(N, K, V, seed, geometry)             # [N, K], [N, V]
    M = unrolled_keys(N, K, seed, geometry) if r.delta else keys       # [N, K]: without the delta rule nothing is projected
    w = np.power(float(alpha) if r.decays else 1.0, np.arange(N - 1, -1, -1.0))   # [N]
    S = M.T @ (w[:, None] * values)                                    # [K, V]
    return np.linalg.norm(keys @ S - values, axis=1) / np.linalg.norm(values, axis=1)


def capacity_curve(rule: str, K: int, V: int, *, alpha: float = 1.0, seed: int = 0,
                   geometry: str = "random", Ns=CAPACITY_NS) -> np.ndarray:
    """[len(Ns), 3]: per N (its own seeded stream), mean relative error over all pairs, over the
    SPLIT most recent and over the SPLIT oldest. The same numbers as recall_errors per stream (to
    ~1e-15 relative: tests/test_playground.py), through capacity_errors' unrolled form."""
    _normals(seed, max(Ns) * (K + V))                                  # the longest stream first: one draw
    errors = [capacity_errors(rule, N, K, V, alpha=alpha, seed=seed, geometry=geometry) for N in Ns]
    return np.array([(e.mean(), e[-SPLIT:].mean(), e[:SPLIT].mean()) for e in errors])


# ---- half-life -------------------------------------------------------------------------------

def decay_curves(alphas, n_max: int) -> np.ndarray:
    """[len(alphas), n_max + 1]: alpha^n for n = 0 .. n_max (0^0 = 1: nothing has decayed yet)."""
    n = np.arange(n_max + 1)
    return np.asarray(alphas, dtype=float)[:, None] ** n[None, :]
