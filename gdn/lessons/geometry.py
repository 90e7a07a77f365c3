"""The delta rule in two dimensions: one write seen as a projection.

Two unit keys k1, k2 on the plane and two values v1, v2. The table first stores k1 -> v1 (a full write,
S1 = k1 v1^T), then the shown write stores k2 -> v2 with strength beta (alpha = 1, no decay):

    S2 = S1 + beta k2 (v2 - S1^T k2)^T
    S2^T x = S1^T x + beta (k2·x) (v2 - S1^T k2)          for any query x

So a query's part along k2 is rewritten (its read moves a fraction beta of the way to v2) and the part
orthogonal to k2 reads exactly what it read before. k1 has a part cos(theta) k2 along k2, so reading k1
after the write is off by beta cos(theta) (v2 - S1^T k2): interference, zero only when the keys are
orthogonal (theta = 90 degrees).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

V1 = np.array([1.0, 0.0])       # the value stored first (under k1)
V2 = np.array([0.0, 1.0])       # the value the shown write stores (under k2)


def unit(deg: float) -> np.ndarray:
    """The unit key at `deg` degrees from the first key dimension: [2]."""
    rad = np.deg2rad(deg)
    return np.array([np.cos(rad), np.sin(rad)])


def write(S: np.ndarray, k: np.ndarray, v: np.ndarray, beta: float) -> np.ndarray:
    """One delta-rule write without decay: S [K, V], k [K], v [V] -> S + beta k (v - S^T k)^T."""
    return S + beta * np.outer(k, v - S.T @ k)                 # [K, V]


@dataclass(frozen=True)
class Scene:
    """Everything the 2-D view draws. Key-plane vectors and value-plane vectors are [2] each."""
    k1: np.ndarray
    k2: np.ndarray
    v1: np.ndarray
    v2: np.ndarray
    beta: float
    S1: np.ndarray           # [2, 2] after storing k1 -> v1
    S2: np.ndarray           # [2, 2] after the shown write k2 -> v2
    along: np.ndarray        # k1's part along k2: (k1·k2) k2, rewritten by the write
    across: np.ndarray       # k1's part orthogonal to k2: read exactly as before
    read_k1: tuple           # (S1^T k1, S2^T k1): before and after the write
    read_k2: tuple           # (S1^T k2, S2^T k2)

    @property
    def cos(self) -> float:
        return float(self.k1 @ self.k2)

    @property
    def angle(self) -> float:
        """Angle between the keys in degrees, 0..180."""
        cross = self.k1[0] * self.k2[1] - self.k1[1] * self.k2[0]
        return float(np.degrees(np.arctan2(abs(cross), self.cos)))   # exact near 0 and 180, unlike arccos

    @property
    def interference(self) -> float:
        """How far k1's read moved: |S2^T k1 - S1^T k1| = beta |cos| |v2 - S1^T k2|."""
        return float(np.linalg.norm(self.read_k1[1] - self.read_k1[0]))

    @property
    def error(self) -> np.ndarray:
        """What the write corrects: v2 - S1^T k2 (the old read of k2 is (k1·k2) v1, not zero)."""
        return self.v2 - self.read_k2[0]


def scene(k1_deg: float, k2_deg: float, beta: float, v1: np.ndarray = V1, v2: np.ndarray = V2) -> Scene:
    """Store k1 -> v1, then write k2 -> v2 with strength beta in [0, 1]."""
    if not 0.0 <= beta <= 1.0:
        raise ValueError(f"beta is a write strength in [0, 1], got {beta}")
    k1, k2 = unit(k1_deg), unit(k2_deg)
    S1 = write(np.zeros((2, 2)), k1, v1, 1.0)                  # = k1 v1^T
    S2 = write(S1, k2, v2, beta)
    along = (k1 @ k2) * k2
    return Scene(k1=k1, k2=k2, v1=np.asarray(v1, float), v2=np.asarray(v2, float), beta=float(beta), S1=S1, S2=S2,
                 along=along, across=k1 - along, read_k1=(S1.T @ k1, S2.T @ k1), read_k2=(S1.T @ k2, S2.T @ k2))
