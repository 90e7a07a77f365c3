"""Shared look of every figure: colour scales, cell labels, fonts. Pure functions, no I/O."""
from __future__ import annotations

import copy

import numpy as np
import plotly.graph_objects as go

from gdn.lru import LRU

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


# Hovers show numbers as a person reads them: 3 significant digits, trailing zeros dropped (d3-format), so a
# value computed as -14.370999999999997 hovers as -14.4. It is the default of every axis and colour value;
# a hovertemplate's own %{y:...} format wins where one is given.
HOVER_FORMAT = ".3~g"


def base_layout(fig, *, height: int, font_size: int = 14):
    """The shared layout; called after the traces are added (it also sets their hover number format)."""
    fig.update_layout(height=height, margin=dict(l=10, r=10, t=60, b=10), font=dict(size=font_size, **FONT),
                      paper_bgcolor="white", plot_bgcolor="white", uirevision="keep")
    fig.update_xaxes(hoverformat=HOVER_FORMAT)
    fig.update_yaxes(hoverformat=HOVER_FORMAT)
    fig.update_traces(zhoverformat=HOVER_FORMAT, selector=dict(type="heatmap"))
    return fig


# ---- skeletons: build and validate a figure's layout once, swap only the data ----------------------
# plotly validates every property it is given; for a figure with subplots, shapes and annotations
# that is most of a slider move's server time (make_subplots, add_hrect: 30-80 ms), although only the
# numbers change. A skeleton is the figure's plain JSON for one key (the labels, sizes and options
# that shape it); later calls with the same key copy it and replace the data keys of each trace.
SKELETONS_KEPT = 256
_skeletons = LRU(SKELETONS_KEPT)


def from_skeleton(key: tuple, build, data: list[dict], layout: dict | None = None) -> go.Figure:
    """key: everything except `data` and `layout` that the figure depends on (hashable); build(): the
    full figure for this call, built and validated the ordinary way (only on a key's first call); data:
    per trace, the properties that change between calls with this key (x, y, z, text, ...), as plotly
    would store them; layout: top-level layout properties that change (e.g. the annotations), likewise.
    Returns a go.Figure (validated, public API) made of the skeleton and this call's data, equal to build()'s
    (tests/test_figures.py checks every user against a cold build)."""
    skeleton = _skeletons.get(key)
    if skeleton is None:
        fig = build()
        skeleton = fig.to_plotly_json()
        # The expanded default template (~7 kB) was most of validating a skeleton again (18 of 22 ms for the
        # gates figure): go.Figure below applies the same default itself, so the skeleton leaves it out.
        skeleton["layout"].pop("template", None)
        if len(skeleton["data"]) != len(data):
            raise AssertionError(f"skeleton {key[0]!r}: {len(skeleton['data'])} traces, data for {len(data)}")
        _skeletons.put(key, skeleton)
    traces = [{**trace, **new} for trace, new in zip(skeleton["data"], data)]
    return go.Figure(data=traces, layout={**copy.deepcopy(skeleton["layout"]), **(layout or {})})
