"""Per-token, per-stage records of one head's gated delta rule, for the step-by-step animation.

Plain float64 numpy, one head, any small K != V. The stages are the order the kernels run:
    decay  S~ = alpha S            read   v_hat = S~^T k       error  e = v - v_hat
    (alpha a number per token, or one per key dim: S~ = diag(alpha) S, Kimi's KDA)
    write  D = k (beta * e)^T      (S_new = S~ + D)             query  o = S_new^T q
tests/test_steps.py checks every record against gdn.ops.recurrent_gated_delta_rule.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

STAGES = ("decay", "read", "error", "write", "query")


@dataclass(frozen=True)
class Stream:
    """One head's inputs. k, q: [T, K]; v: [T, V]; alpha: [T] in [0, 1] per head (Qwen3.5), or [T, K]
    per key dim (Kimi's KDA: each row of the table fades at its own speed); beta: [T] per head, or
    [T, V] per value channel; S0: [K, V] the table before the first token."""
    k: np.ndarray
    v: np.ndarray
    q: np.ndarray
    alpha: np.ndarray
    beta: np.ndarray
    S0: np.ndarray

    @property
    def shape(self) -> tuple[int, int, int]:
        """(T, K, V)"""
        return self.k.shape[0], self.k.shape[1], self.v.shape[1]


@dataclass(frozen=True)
class StepRecords:
    """Everything the memory-table page draws, indexed by token t."""
    stream: Stream
    S_prev: np.ndarray      # [T, K, V]  table before token t
    S_decayed: np.ndarray   # [T, K, V]  alpha_t * S_prev
    prediction: np.ndarray  # [T, V]     S_decayed^T k_t
    error: np.ndarray       # [T, V]     v_t - prediction
    write: np.ndarray       # [T, K, V]  k_t (beta_t * error)^T
    S_new: np.ndarray       # [T, K, V]  S_decayed + write
    output: np.ndarray      # [T, V]     S_new^T q_t


def check_stream(s: Stream) -> None:
    """Raise ValueError with a plain explanation when the stream cannot be run."""
    T, K, V = s.shape
    if s.v.shape[0] != T or s.q.shape != (T, K):
        raise ValueError(f"k, v and q need one row per token: got k {s.k.shape}, v {s.v.shape}, q {s.q.shape}")
    if s.alpha.shape not in ((T,), (T, K)) or s.beta.shape not in ((T,), (T, V)):
        raise ValueError(f"alpha must be [T] or [T, K] and beta [T] or [T, V] with T={T}, K={K}, V={V}; "
                         f"got {s.alpha.shape}, {s.beta.shape}")
    if s.S0.shape != (K, V):
        raise ValueError(f"the starting table must be [K, V] = {(K, V)}, got {s.S0.shape}")
    for name in ("k", "v", "q", "alpha", "beta", "S0"):
        if not np.all(np.isfinite(getattr(s, name))):
            raise ValueError(f"{name} contains a missing or non-finite number")
    if np.any((s.alpha < 0) | (s.alpha > 1)):
        raise ValueError("alpha is a keep-fraction and must lie in [0, 1]")


def step_records(s: Stream) -> StepRecords:
    check_stream(s)
    T, K, V = s.shape
    beta = s.beta if s.beta.ndim == 2 else s.beta[:, None] * np.ones(V)   # [T, V]
    alpha = s.alpha if s.alpha.ndim == 2 else s.alpha[:, None] * np.ones(K)  # [T, K]  row i fades by alpha[t, i]
    S = s.S0.astype(np.float64)
    rec = {name: [] for name in ("S_prev", "S_decayed", "prediction", "error", "write", "S_new", "output")}
    for t in range(T):
        decayed = alpha[t][:, None] * S                   # [K, V]
        prediction = decayed.T @ s.k[t]                   # [V]
        error = s.v[t] - prediction                       # [V]
        write = np.outer(s.k[t], beta[t] * error)         # [K, V]
        new = decayed + write                             # [K, V]
        for name, value in zip(rec, (S, decayed, prediction, error, write, new, new.T @ s.q[t])):
            rec[name].append(value)
        S = new
    empty = {"S_prev": (0, K, V), "S_decayed": (0, K, V), "write": (0, K, V), "S_new": (0, K, V)}
    arrays = {n: np.array(v) if v else np.zeros(empty.get(n, (0, V))) for n, v in rec.items()}
    return StepRecords(stream=s, **arrays)


def opening_step(*recs: StepRecords, tol: float = 1e-9) -> tuple[int, str]:
    """(token counted from 1, stage): where a stepping page opens, the first frame at which something
    happens, never the blank first decay of an empty table. One stream: the first decay or write that
    changes its table. Several streams stepped together (the compare page's rules): the first decay or
    write after which their tables differ, else the first change of any of them; (1, "decay") if none."""
    T = recs[0].stream.shape[0]
    after = {"decay": "S_decayed", "write": "S_new"}
    before = {"decay": "S_prev", "write": "S_decayed"}
    differ = lambda a, b: bool(np.abs(a - b).max(initial=0.0) > tol)
    if len(recs) > 1:
        for t in range(T):
            for stage, name in after.items():
                first = getattr(recs[0], name)[t]
                if any(differ(getattr(r, name)[t], first) for r in recs[1:]):
                    return t + 1, stage
    for t in range(T):
        for stage, name in after.items():
            if any(differ(getattr(r, name)[t], getattr(r, before[stage])[t]) for r in recs):
                return t + 1, stage
    return 1, STAGES[0]


def records_csv(rec: StepRecords) -> str:
    """Every number of the animation in long form: token, quantity, key dim, value dim, value.
    Key-side vectors (k, q) have an empty value dim, value-side vectors an empty key dim."""
    lines = ["token,quantity,key_dim,value_dim,value"]
    T, K, V = rec.stream.shape
    for t in range(T):
        for name in ("S_prev", "S_decayed", "write", "S_new"):
            table = getattr(rec, name)[t]
            lines += [f"{t},{name},{i},{j},{float(table[i, j])!r}" for i in range(K) for j in range(V)]
        for name in ("k", "q"):
            lines += [f"{t},{name},{i},,{float(getattr(rec.stream, name)[t][i])!r}" for i in range(K)]
        beta = rec.stream.beta[t] * np.ones(V)                       # per head or per value channel
        vectors = {"v": rec.stream.v[t], "beta": beta, "prediction": rec.prediction[t], "error": rec.error[t],
                   "output": rec.output[t]}
        for name, vector in vectors.items():
            lines += [f"{t},{name},,{j},{float(vector[j])!r}" for j in range(V)]
        if rec.stream.alpha.ndim == 1:
            lines.append(f"{t},alpha,,,{float(rec.stream.alpha[t])!r}")
        else:                                                        # per key dim (KDA)
            lines += [f"{t},alpha,{i},,{float(rec.stream.alpha[t][i])!r}" for i in range(K)]
    return "\n".join(lines) + "\n"


def kernel_args(s: Stream) -> tuple[list[torch.Tensor], dict]:
    """The stream as arguments of the real kernels (gdn.ops), float64, one head, raw q and k, scale 1:
    ([q, k, v] each [1, T, 1, *], {g, beta, initial_state, scale}). alpha = 0 becomes g = -inf."""
    if s.alpha.ndim != 1:
        raise ValueError("the Qwen3.5 kernels take one alpha per token (per head), not one per key dim")
    as_tensor = lambda x: torch.tensor(x, dtype=torch.float64)[None, :, None]     # [1, T, 1, *]
    with np.errstate(divide="ignore"):
        g = as_tensor(np.log(s.alpha))
    return ([as_tensor(s.q), as_tensor(s.k), as_tensor(s.v)],
            dict(g=g, beta=as_tensor(s.beta), scale=1.0, initial_state=torch.tensor(s.S0, dtype=torch.float64)[None, None]))
