"""Shared look of every figure: colour scales, cell labels, fonts. Pure functions, no I/O."""
from __future__ import annotations

import numpy as np

# Diverging scale for signed tables (zmid = 0): blue negative, white zero, red positive.
# Saturated ends survive a washed-out projector better than plotly's default RdBu pastel.
DIVERGING = [[0.0, "#1d4ed8"], [0.25, "#93c5fd"], [0.5, "#ffffff"], [0.75, "#fca5a5"], [1.0, "#b91c1c"]]
SEQUENTIAL = "Viridis"
ACTIVE = "#f59e0b"        # frame of the panels the current stage acts on
FONT = dict(family="Noto Sans CJK SC, Noto Sans SC, Microsoft YaHei, PingFang SC, sans-serif")


def dim_labels(n: int, word: str = "dim") -> list[str]:
    """Key or value dimensions as the app names them everywhere: "dim 1", "dim 2", ... (1-based, so they
    never read like the stored keys k₁, k₂ of the stories). word: the translated "dim"."""
    return [f"{word} {i + 1}" for i in range(n)]


def numbered(n: int) -> list[str]:
    """Tick labels 1..n for dimensions under an axis title that names them (category axis)."""
    return [str(i + 1) for i in range(n)]


def symmetric_range(*arrays: np.ndarray) -> float:
    """One |z| bound shared by all panels, so a colour means the same number everywhere (never 0)."""
    finite = [np.abs(a[np.isfinite(a)]).max() for a in arrays if np.size(a) and np.isfinite(a).any()]
    return float(max(finite, default=1.0)) or 1.0


def base_layout(fig, *, height: int, font_size: int = 14):
    fig.update_layout(height=height, margin=dict(l=10, r=10, t=60, b=10), font=dict(size=font_size, **FONT),
                      paper_bgcolor="white", plot_bgcolor="white", uirevision="keep")
    return fig
