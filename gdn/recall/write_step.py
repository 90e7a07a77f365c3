"""The delta-rule write is one gradient-descent step on the memory, with step size beta.

For the (decayed) state S and a token's key k and value v, let the memory's loss on this pair be
L(S) = 1/2 ||S^T k - v||^2. Its gradient is dL/dS = k (S^T k - v)^T, so one step of size beta is

    S - beta dL/dS = S + beta k (v - S^T k)^T,

exactly the write of the delta rule (the "write" panel of the memory page). Afterwards the read is
S'^T k = S^T k + beta ||k||^2 (v - S^T k): the error shrinks by the factor (1 - beta ||k||^2), so the loss
is multiplied by (1 - beta ||k||^2)^2. With a unit key, beta = 1 lands exactly on v (loss 0), beta < 1
moves part of the way, 1 < beta < 2 overshoots past v (the error flips sign), beta = 2 lands as far
on the other side as it started, beyond 2 every step makes it worse: the step is stable while
beta ||k||^2 < 2, the key-norm view's bound.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gdn.lessons.memory import k1_update
from gdn.lessons.stream import step_records


@dataclass(frozen=True)
class WriteStep:
    S: np.ndarray          # [K, V] the decayed state before the write
    k: np.ndarray          # [K]
    v: np.ndarray          # [V]
    beta: float
    gradient: np.ndarray   # [K, V]  k (S^T k - v)^T
    write: np.ndarray      # [K, V]  -beta * gradient: what the step adds
    S_after: np.ndarray    # [K, V]
    loss_before: float
    loss_after: float


def loss(S: np.ndarray, k: np.ndarray, v: np.ndarray) -> float:
    return 0.5 * float(np.sum((S.T @ k - v) ** 2))


def gradient_step(S: np.ndarray, k: np.ndarray, v: np.ndarray, beta: float) -> WriteStep:
    S, k, v = (np.asarray(x, dtype=np.float64) for x in (S, k, v))
    grad = np.outer(k, S.T @ k - v)                                      # [K, V]
    S_after = S - beta * grad
    return WriteStep(S=S, k=k, v=v, beta=float(beta), gradient=grad, write=-beta * grad, S_after=S_after,
                     loss_before=loss(S, k, v), loss_after=loss(S_after, k, v))


def memory_page_example(beta: float) -> WriteStep:
    """The memory page's k1 update (store k1 -> (3, 1), k2 -> (-1, 2), then k1 -> (5, 0) with alpha = 0.5):
    the third token's decayed state, key and value, with the write's step size set to beta."""
    s, t = k1_update(), 2
    return gradient_step(step_records(s).S_decayed[t], s.k[t], s.v[t], beta)
