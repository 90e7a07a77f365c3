"""A one-head stream as an editable table (one row per token) and back, with readable errors.

Vectors are written as comma-separated numbers ("1, 0"), so any K and V fit in three columns.
Errors are InputError(key, **fields): the page translates gdn.i18n key "errors.<key>".
"""
from __future__ import annotations

import numpy as np

from gdn.figures.common import cell_text
from gdn.steps import Stream, check_stream

COLUMNS = ("k", "v", "q", "alpha", "beta")
MAX_TOKENS = 32


def _blank(x) -> bool:
    """An empty cell: None, "" or the NaN a table editor gives a new row."""
    return x is None or (isinstance(x, str) and not x.strip()) or (isinstance(x, float) and np.isnan(x))


class InputError(ValueError):
    def __init__(self, key: str, **fields):
        super().__init__(f"{key}: {fields}")
        self.key, self.fields = key, fields


def stream_to_rows(s: Stream) -> list[dict]:
    fmt = lambda x: ", ".join(cell_text(x, digits=4))
    beta = s.beta if s.beta.ndim == 1 else s.beta.mean(axis=1)
    return [{"k": fmt(s.k[t]), "v": fmt(s.v[t]), "q": fmt(s.q[t]), "alpha": float(s.alpha[t]),
             "beta": float(beta[t])} for t in range(s.shape[0])]


def _vector(text, size: int, token: int, column: str) -> np.ndarray:
    parts = [p for p in ("" if _blank(text) else str(text)).replace("，", ",").split(",") if p.strip()]
    try:
        x = np.array([float(p) for p in parts])
    except ValueError:
        raise InputError("not_numbers", token=token, column=column, text=text) from None
    if x.shape != (size,):
        raise InputError("wrong_length", token=token, column=column, want=size, got=len(parts))
    if not np.all(np.isfinite(x)):
        raise InputError("not_finite", token=token, column=column)
    return x


def _gate(value, token: int, column: str) -> float:
    if _blank(value):
        raise InputError("gate_missing", token=token, column=column)
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise InputError("gate_missing", token=token, column=column) from None
    if not 0.0 <= x <= 1.0:
        raise InputError("gate_range", token=token, column=column, value=x)
    return x


def rows_to_stream(rows: list[dict], K: int, V: int, S0: np.ndarray) -> Stream:
    """Parse edited rows; raises InputError naming the token and column that is wrong."""
    rows = [r for r in rows if not all(_blank(r.get(c)) for c in COLUMNS)]   # drop blank new rows
    if not rows:
        raise InputError("no_tokens")
    if len(rows) > MAX_TOKENS:
        raise InputError("too_many_tokens", limit=MAX_TOKENS, got=len(rows))
    cols = {c: [] for c in COLUMNS}
    for t, row in enumerate(rows):
        for c, size in (("k", K), ("v", V), ("q", K)):
            cols[c].append(_vector(row.get(c), size, t, c))
        for c in ("alpha", "beta"):
            cols[c].append(_gate(row.get(c), t, c))
    stream = Stream(k=np.array(cols["k"]), v=np.array(cols["v"]), q=np.array(cols["q"]),
                    alpha=np.array(cols["alpha"]), beta=np.array(cols["beta"]), S0=np.asarray(S0, float))
    check_stream(stream)
    return stream
