"""How numbers are written wherever the app shows them: in table cells, formulas and editor rows.

One place, so a cell of the figure, the formula beside it and the exported table print the same
digits. Pure numpy, no plotly (the figures import it, not the other way round).
"""
from __future__ import annotations

import numpy as np


def cell_text(z: np.ndarray, digits: int = 2) -> np.ndarray:
    """Numbers as short strings for annotating cells: 3, -0.5, 2.25; never '-0'; '' for nan/inf."""
    rounded = np.round(np.asarray(z, dtype=float), digits) + 0.0      # + 0.0 turns -0.0 into 0.0
    fmt = np.vectorize(lambda x: "" if not np.isfinite(x) else f"{x:.{digits}f}".rstrip("0").rstrip("."),
                       otypes=[str])
    return fmt(rounded)


def vec_latex(x: np.ndarray) -> str:
    """(3, -0.5) as LaTeX."""
    return r"(" + r",\ ".join(cell_text(np.atleast_1d(x))) + r")"


FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_cell(text: str) -> str:
    """A text cell of an exported CSV that a spreadsheet will not run: one starting with = + - @, a tab or a
    carriage return (a token "=HYPERLINK(...)", a folder "-2+3") gets a leading apostrophe, OWASP's rule
    against formula injection. Only for text: the numbers an export writes itself stay numbers."""
    text = str(text)
    return "'" + text if text.startswith(FORMULA_STARTS) else text
