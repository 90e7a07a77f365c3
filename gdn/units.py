"""Units and how numbers are written, wherever the library or the app shows them.

One place, so a cell of a figure, the formula beside it, the exported table and the real-model page's
half-lives print the same digits. Pure numpy: every layer may import it (tests/test_boundaries.py).

    cell_text, vec_latex   numbers in table cells, formulas and editor rows
    half_life              a keep-fraction alpha as tokens until half is left
    fmt_bytes              sizes in binary units
    fmt_diff               how far apart two results are, "< 1e-15" below the number format's floor
    sig3                   a number at 3 significant digits, as hovers and labels show it
    fmt_count              a count of parameters: 2967128 -> "3.0 M", 752e6 -> "752 M", 2.3e9 -> "2.3 B"
    spreadsheet_cell       a text cell of an exported CSV that a spreadsheet will not run as a formula
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


def half_life(alpha):
    """Tokens until alpha^n = 1/2: ln 0.5 / ln alpha, for a number or an array. alpha = 1 never forgets
    (inf); alpha = 0 forgets everything at the next token (0). A float in, a float out."""
    a = np.asarray(alpha, dtype=float)
    if np.any((a < 0.0) | (a > 1.0)):
        raise ValueError(f"alpha is a keep-fraction in [0, 1], got {alpha}")
    with np.errstate(divide="ignore"):
        out = np.where(a >= 1.0, np.inf, np.where(a <= 0.0, 0.0, np.log(0.5) / np.log(np.clip(a, 1e-300, None))))
    return float(out) if out.ndim == 0 else out


def fmt_bytes(n: float) -> str:
    """1048576 -> '1.00 MiB' (binary units, three significant digits)."""
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.3g} {unit}"
        n /= 1024
    return f"{n:.3g} TiB"


# Below these, two results of one computation agree as well as the number format lets them: float64 rounding
# is 1.1e-16 a step, so a few steps of O(1) numbers stay under 1e-15; float32 and bfloat16 likewise.
AGREEMENT_FLOOR = {"float64": 1e-15, "float32": 1e-6, "bfloat16": 1e-2}


def _short_exponent(text: str) -> str:
    return text.replace("e-0", "e-").replace("e+0", "e+").replace("e+", "e")


def fmt_diff(x: float, dtype: str = "float64") -> str:
    """A largest difference as a person reads it: under the format's floor it is "< 1e-15" (float64), "< 1e-6"
    (float32), not "0.0e+00" or "2.2e-16"; above it, two digits: 3.4e-12, 0.021."""
    floor = AGREEMENT_FLOOR[dtype]
    x = abs(float(x))
    if not np.isfinite(x):
        return str(x)
    if x < floor:
        return "< " + _short_exponent(f"{floor:.0e}")
    return _short_exponent(f"{x:.1e}") if x < 1e-3 else f"{x:.2g}"


def sig3(x: float) -> str:
    """3 significant digits, no exponent for everyday sizes: -14.370999999999997 -> -14.4, 0.0012345 -> 0.00123,
    2 -> 2, 123456 -> 1.23e5; '-0' never."""
    x = float(x)
    if x == 0 or not np.isfinite(x):
        return "0" if x == 0 else str(x)
    text = f"{x:.3g}"
    return _short_exponent(text) if "e" in text else text


def fmt_count(n: float) -> str:
    """A large count as model sizes are named: 2967128 -> '3.0 M', 752_000_000 -> '752 M', 2.3e9 -> '2.3 B',
    950 -> '950'. One decimal below 10 of a unit, none above (as checkpoint names round them)."""
    n = float(n)
    for scale, unit in ((1e9, "B"), (1e6, "M"), (1e3, "K")):
        if abs(n) >= scale * 0.9995:            # 999.6 M rounds to "1000 M": call it "1.0 B"
            x = n / scale
            return f"{x:.1f} {unit}" if abs(x) < 9.95 else f"{x:.0f} {unit}"
    return f"{n:.0f}"


FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_cell(text: str) -> str:
    """A text cell of an exported CSV that a spreadsheet will not run: one starting with = + - @, a tab or a
    carriage return (a token "=HYPERLINK(...)", a folder "-2+3") gets a leading apostrophe, OWASP's rule
    against formula injection. Only for text: the numbers an export writes itself stay numbers."""
    text = str(text)
    return "'" + text if text.startswith(FORMULA_STARTS) else text
