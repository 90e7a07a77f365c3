"""The memory-table page's math: its worked examples, its formulas with numbers, its editable table.

    presets     the worked examples of docs/teaching-content.md §1-3 as one-head streams (deterministic;
                titles live in the i18n tables under memory.preset_<name>)
    formulas    each stage's formula as LaTeX with this token's numbers plugged in
    narration   each stage's numbers as short strings, for the one line the player says about a step
    table       a stream as editable rows (one per token) and back, with errors that name the cell

Numbers the page shows (e.g. reading q = (0.6, 0.8) gives (1.0, 2.2)) are computed by
gdn.lessons.stream; tests/test_steps.py checks them against the figures in docs/teaching-content.md.
"""
from __future__ import annotations

import numpy as np

from gdn.lessons.stream import StepRecords, Stream, check_stream
from gdn.units import cell_text, vec_latex


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


# ---- formulas ----------------------------------------------------------------------------------

STAGE_SYMBOLS = {       # each stage's formula without numbers: what a stage not reached yet shows
    "decay": r"\tilde S = \alpha_t\, S_{t-1}",
    "read": r"\hat v = \tilde S^{\top} k_t",
    "error": r"e = v_t - \hat v",
    "write": r"S_t = \tilde S + k_t\, (\beta_t \odot e)^{\top}",
    "query": r"o_t = S_t^{\top} q_t",
}


def stage_formulas(rec: StepRecords, t: int) -> dict[str, str]:
    """LaTeX per stage (keys of gdn.lessons.stream.STAGES) for token t (0-based), numbers plugged in."""
    s = rec.stream
    alpha = vec_latex(s.alpha[t]) if np.ndim(s.alpha[t]) else cell_text(np.array(s.alpha[t]))
    beta = vec_latex(s.beta[t]) if np.ndim(s.beta[t]) else cell_text(np.array(s.beta[t]))
    return {
        "decay": rf"\tilde S = \alpha_t\, S_{{t-1}} = {alpha}\, S_{{t-1}}",
        "read": rf"\hat v = \tilde S^{{\top}} k_t = {vec_latex(rec.prediction[t])}",
        "error": rf"e = v_t - \hat v = {vec_latex(s.v[t])} - {vec_latex(rec.prediction[t])} = {vec_latex(rec.error[t])}",
        "write": rf"S_t = \tilde S + k_t\, (\beta_t \odot e)^{{\top}}, \quad \beta_t = {beta}",
        "query": rf"o_t = S_t^{{\top}} q_t = {vec_latex(rec.output[t])}",
    }


CLOSED_FORM = r"S_t = \alpha_t \left(I - \beta_t k_t k_t^{\top}\right) S_{t-1} + \beta_t k_t v_t^{\top}"


# ---- narration ---------------------------------------------------------------------------------

def vec_text(x: np.ndarray) -> str:
    """(3, -0.5): a vector written the way the table cells write its numbers."""
    return "(" + ", ".join(cell_text(np.atleast_1d(x))) + ")"


def changed_rows(rec: StepRecords, t: int) -> list[int]:
    """The rows (key dims, 0-based) that token t's write changes: where k_t and beta_t * e are both non-zero."""
    return [int(i) for i in np.flatnonzero(np.abs(rec.write[t]).max(axis=1) > 1e-12)]


def stage_numbers(rec: StepRecords, t: int, dim: str = "dim") -> dict[str, str]:
    """The numbers the narration of token t (0-based) names, formatted like the cells: gates, vectors,
    the table's size ||S|| (Frobenius) before and after each change, and the rows the write changes
    named like the panels' row labels ("dim 1, dim 2"; dim: the translated word)."""
    s = rec.stream
    gate = lambda x: vec_text(x) if np.ndim(x) else str(cell_text(np.array(x)))
    norm = lambda S: str(cell_text(np.array(np.linalg.norm(S))))
    return {"alpha": gate(s.alpha[t]), "beta": gate(s.beta[t]), "k": vec_text(s.k[t]), "v": vec_text(s.v[t]),
            "q": vec_text(s.q[t]), "v_hat": vec_text(rec.prediction[t]), "e": vec_text(rec.error[t]),
            "o": vec_text(rec.output[t]), "norm_prev": norm(rec.S_prev[t]), "norm_decayed": norm(rec.S_decayed[t]),
            "norm_new": norm(rec.S_new[t]), "rows": ", ".join(f"{dim} {i + 1}" for i in changed_rows(rec, t))}


# ---- the editable table -----------------------------------------------------------------------

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
    """Parse edited rows; raises InputError naming the token (counted from 1, as the page shows them) and
    the column that is wrong."""
    rows = [r for r in rows if not all(_blank(r.get(c)) for c in COLUMNS)]   # drop blank new rows
    if not rows:
        raise InputError("no_tokens")
    if len(rows) > MAX_TOKENS:
        raise InputError("too_many_tokens", limit=MAX_TOKENS, got=len(rows))
    cols = {c: [] for c in COLUMNS}
    for t, row in enumerate(rows, start=1):
        for c, size in (("k", K), ("v", V), ("q", K)):
            cols[c].append(_vector(row.get(c), size, t, c))
        for c in ("alpha", "beta"):
            cols[c].append(_gate(row.get(c), t, c))
    stream = Stream(k=np.array(cols["k"]), v=np.array(cols["v"]), q=np.array(cols["q"]),
                    alpha=np.array(cols["alpha"]), beta=np.array(cols["beta"]), S0=np.asarray(S0, float))
    check_stream(stream)
    return stream
