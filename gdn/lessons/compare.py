"""Linear attention, DeltaNet and Gated DeltaNet on the same stream, for side-by-side comparison.

All three rules fill the same StepRecords (gdn.lessons.stream), so one figure draws any of them:
    linear attention  S_t = S_{t-1} + k_t (beta_t v_t)^T            (no read, no forgetting)
    DeltaNet          S_t = S_{t-1} + k_t (beta_t (v_t - S_{t-1}^T k_t))^T     (alpha ignored)
    Gated DeltaNet    S_t = a_t S_{t-1} + k_t (beta_t (v_t - a_t S_{t-1}^T k_t))^T
For linear attention the "prediction" is zero (the rule never reads before writing) and the
"error" it writes is the value itself. Plus the transpose-bug variant of the write (teaching §6),
and the compare page's presets (teaching §3): the k1 update and the city-update story.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from gdn.lessons.memory import k1_update
from gdn.lessons.stream import StepRecords, Stream, check_stream, step_records

RULES = ("linear", "delta", "gated")


def linear_records(s: Stream) -> StepRecords:
    """Linear attention (S += beta k v^T) as step records: S_decayed = S_prev, prediction = 0."""
    check_stream(s)
    T, K, V = s.shape
    beta = s.beta if s.beta.ndim == 2 else s.beta[:, None] * np.ones(V)   # [T, V]
    S, rows = s.S0.astype(np.float64), []
    for t in range(T):
        write = np.outer(s.k[t], beta[t] * s.v[t])                       # [K, V]
        new = S + write
        rows.append((S, S, np.zeros(V), s.v[t].astype(float), write, new, new.T @ s.q[t]))
        S = new
    names = ("S_prev", "S_decayed", "prediction", "error", "write", "S_new", "output")
    arrays = {n: np.array([r[i] for r in rows]) for i, n in enumerate(names)}
    return StepRecords(stream=s, **arrays)


def run_rule(rule: str, s: Stream) -> StepRecords:
    """The step records of one rule on stream s (alpha only matters for "gated")."""
    if rule == "linear":
        return linear_records(s)
    if rule == "delta":
        return step_records(replace(s, alpha=np.ones_like(s.alpha)))
    if rule == "gated":
        return step_records(s)
    raise ValueError(f"rule must be one of {RULES}, got {rule!r}")


def run_all(s: Stream) -> dict[str, StepRecords]:
    return {rule: run_rule(rule, s) for rule in RULES}


def readout_error(rec: StepRecords, target: np.ndarray) -> np.ndarray:
    """[T] distance ||o_t - target_t|| between what the memory answers and what it should."""
    return np.linalg.norm(rec.output - target, axis=1)


def gated_final_state(s: Stream, *, transpose_bug: bool = False) -> np.ndarray:
    """Final S of the gated delta rule written the way kernel code writes it, with broadcasting.

    The correct write is k[:, None] * e[None, :]  ->  [K, 1] * [1, V] = [K, V].
    The bug swaps the two unsqueezes: k[None, :] * e[:, None] -> [V, K]. With K == V the sum
    S + [V, K] still has the right shape and silently stores the transpose; with K != V numpy
    raises ValueError ("operands could not be broadcast together"), which callers may show.
    """
    check_stream(s)
    S = s.S0.astype(np.float64)                                        # [K, V]
    for t in range(s.shape[0]):
        S = s.alpha[t] * S
        e = s.beta[t] * (s.v[t] - S.T @ s.k[t])                         # [V]
        write = (s.k[t][None, :] * e[:, None]) if transpose_bug else (s.k[t][:, None] * e[None, :])
        S = S + write                                                   # [K, V], or fails
        if S.shape != s.S0.shape:                                       # K or V == 1 broadcasts silently
            raise ValueError(f"the state changed shape from {s.S0.shape} to {S.shape}")
    return S


# ---- compare-page presets -------------------------------------------------------------------

@dataclass(frozen=True)
class ComparePreset:
    """A stream plus what a correct memory should return at each token.

    target: [T, V] the value the query should retrieve (the latest value written under that key);
    values, value_labels: labelled value vectors [L, V] and their names (i18n keys compare.label_<name>),
    empty for presets whose values are plain numbers. Token captions are i18n keys compare.tok_<preset>_<t>."""
    stream: Stream
    target: np.ndarray
    values: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    value_labels: tuple[str, ...] = ()


def k1_compare() -> ComparePreset:
    """teaching §3: k1->(3,1), k2->(-1,2), then k1->(5,0) with alpha = 0.5; token 3 reads k2.
    Reading k1 at token 2 gives (8,1) / (5,0) / (5,0); k2 reads (-1,2) / (-1,2) / (-0.5,1)."""
    s = k1_update()
    return ComparePreset(stream=s, target=np.array([[3, 1], [-1, 2], [5, 0], [-1, 2]], dtype=float))


CITY_LABELS = ("hangzhou", "shanghai", "teacher", "doctor")


def city_story() -> ComparePreset:
    """"user's city" = Hangzhou, "user's job" = teacher, then the city changes to Shanghai
    (alpha = 0.7 on that token: the gate fades stale facts), then both keys are asked."""
    values = np.eye(4)                                                  # one unit vector per label
    k_city, k_job = np.array([1.0, 0, 0]), np.array([0, 1.0, 0])
    k = np.stack([k_city, k_job, k_city, k_city, k_job])                # [T=5, K=3]
    v = np.stack([values[0], values[2], values[1], np.zeros(4), np.zeros(4)])
    s = Stream(k=k, v=v, q=k.copy(), alpha=np.array([1, 1, 0.7, 1, 1.0]),
               beta=np.array([1, 1, 1, 0, 0.0]), S0=np.zeros((3, 4)))
    target = np.stack([values[0], values[2], values[1], values[1], values[2]])
    return ComparePreset(stream=s, target=target, values=values, value_labels=CITY_LABELS)


COMPARE_PRESETS = {"k1_update": k1_compare, "city": city_story}


def nearest_labels(x: np.ndarray, values: np.ndarray, n: int = 2) -> list[tuple[int, float]]:
    """The n labelled vectors most similar to readout x, as (index, cosine similarity), best first.
    x: [V]; values: [L, V]. A zero readout is similar to nothing: []."""
    norm = np.linalg.norm(x)
    if norm < 1e-12:
        return []
    sims = values @ x / (np.linalg.norm(values, axis=1) * norm)        # [L]
    order = np.argsort(-np.round(sims, 12), kind="stable")[:n]
    return [(int(i), float(sims[i])) for i in order]


def bug_stream(K: int, V: int, T: int = 4, seed: int = 0) -> Stream:
    """A small random gated stream for the transpose-bug demo (unit keys, alpha 0.9, beta 0.8)."""
    rng = np.random.default_rng(seed)
    k = rng.normal(size=(T, K))
    k /= np.linalg.norm(k, axis=1, keepdims=True)                      # [T, K]
    return Stream(k=np.round(k, 2), v=np.round(rng.normal(size=(T, V)), 1), q=np.round(k, 2),
                  alpha=np.full(T, 0.9), beta=np.full(T, 0.8), S0=np.zeros((K, V)))
