"""The worked examples of the memory-table page (teaching-content.md §1-3), as one-head streams.

Every preset is deterministic; its title lives in the i18n tables under memory.preset_<name>.
Numbers the page then shows (e.g. reading q = (0.6, 0.8) gives (1.0, 2.2)) are computed by
gdn.steps, and tests/test_steps.py checks them against the figures in teaching-content.md.
"""
from __future__ import annotations

import numpy as np

from gdn.steps import Stream


def _stream(k, v, q, alpha, beta, S0=None) -> Stream:
    k, v, q = (np.asarray(x, dtype=np.float64) for x in (k, v, q))
    S0 = np.zeros((k.shape[1], v.shape[1])) if S0 is None else np.asarray(S0, dtype=np.float64)
    return Stream(k=k, v=v, q=q, alpha=np.asarray(alpha, float), beta=np.asarray(beta, float), S0=S0)


def write_and_read_2d() -> Stream:
    """k1=(1,0)->(3,1), k2=(0,1)->(-1,2): S = [[3,1],[-1,2]]; q=(0.6,0.8) reads (1.0, 2.2);
    a third token with beta = 0 writes nothing but still reads row k1 = (3, 1)."""
    return _stream(k=[[1, 0], [0, 1], [1, 0]], v=[[3, 1], [-1, 2], [0, 0]],
                   q=[[1, 0], [0.6, 0.8], [1, 0]], alpha=[1, 1, 1], beta=[1, 1, 0])


def k1_update() -> Stream:
    """Store k1->(3,1), k2->(-1,2); then update k1 to (5,0) with alpha=0.5, beta=1: the decayed row
    reads (1.5, 0.5), the delta rule writes only the error (3.5, -0.5), k1 then reads (5, 0) and the
    untouched k2 row has faded to (-0.5, 1)."""
    return _stream(k=[[1, 0], [0, 1], [1, 0], [0, 1]], v=[[3, 1], [-1, 2], [5, 0], [0, 0]],
                   q=[[1, 0], [0, 1], [1, 0], [0, 1]], alpha=[1, 1, 0.5, 1], beta=[1, 1, 1, 0])


def unit_key_overwrite() -> Stream:
    """A unit key with alpha = beta = 1 overwrites its row exactly: whatever row k=(1,0) held, it
    becomes v=(3,4), the other row is untouched and reading k returns (3,4) with error 0."""
    return _stream(k=[[1, 0]], v=[[3, 4]], q=[[1, 0]], alpha=[1], beta=[1], S0=[[-2, 7], [1, 5]])


def random_stream(T: int = 8, K: int = 4, V: int = 3, seed: int = 0) -> Stream:
    """Unit keys and queries, Gaussian values, alpha in [0.7, 1), beta in [0.2, 0.9): a generic head."""
    rng = np.random.default_rng(seed)
    unit = lambda x: x / np.linalg.norm(x, axis=-1, keepdims=True)
    return _stream(k=np.round(unit(rng.normal(size=(T, K))), 2), v=np.round(rng.normal(size=(T, V)), 2),
                   q=np.round(unit(rng.normal(size=(T, K))), 2), alpha=np.round(rng.uniform(0.7, 1, T), 2),
                   beta=np.round(rng.uniform(0.2, 0.9, T), 2))


def replay_stream(payload: dict) -> Stream:
    """A real head's gates sent from the real-model page: {"k": [T][K], "v": [T][V], "q": [T][K],
    "alpha": [T], "beta": [T]} (k, q projected to a few dims), starting from an empty table."""
    return _stream(k=payload["k"], v=payload["v"], q=payload["q"], alpha=payload["alpha"], beta=payload["beta"])


PRESETS = {
    "write_read_2d": write_and_read_2d,
    "k1_update": k1_update,
    "unit_overwrite": unit_key_overwrite,
    "random": random_stream,
}
