"""Shared look of every figure: colour scales, cell labels, fonts. Pure functions, no I/O."""
from __future__ import annotations

import copy
import re

import numpy as np
import plotly.graph_objects as go

from gdn.lru import LRU
from gdn.units import cell_text

# Diverging scale for signed tables (zmid = 0): blue negative, white zero, red positive.
# Saturated ends survive a washed-out projector better than plotly's default RdBu pastel.
DIVERGING = [[0.0, "#1d4ed8"], [0.25, "#93c5fd"], [0.5, "#ffffff"], [0.75, "#fca5a5"], [1.0, "#b91c1c"]]
SEQUENTIAL = "Viridis"
ACTIVE = "#f59e0b"        # frame of the panels the current stage acts on
PLOT_PX = 1000            # a chart's plot width to assume where only paper units are known (a 1280 px screen)
FONT = dict(family="Noto Sans CJK SC, Noto Sans SC, Microsoft YaHei, PingFang SC, sans-serif")


def dim_labels(n: int, word: str = "dim") -> list[str]:
    """Key or value dimensions as the app names them everywhere: "dim 1", "dim 2", ... (1-based, so they
    never read like the stored keys k₁, k₂ of the stories). word: the translated "dim"."""
    return [f"{word} {i + 1}" for i in range(n)]


def numbered(n: int) -> list[str]:
    """Tick labels 1..n for dimensions under an axis title that names them (category axis)."""
    return [str(i + 1) for i in range(n)]


def log_ticks(lo: float, hi: float, steps: tuple[int, ...] = (1, 2, 5)) -> dict:
    """A log axis' ticks from lo to hi: steps times each power of ten, written by gdn.units (1000, 0.05),
    never plotly's own "1e+3". For update_xaxes / update_yaxes."""
    values = [m * 10.0 ** p for p in range(int(np.floor(np.log10(lo))), int(np.ceil(np.log10(hi))) + 1) for m in steps]
    values = [v for v in values if lo * (1 - 1e-9) <= v <= hi * (1 + 1e-9)]
    return dict(tickmode="array", tickvals=values, ticktext=[str(s) for s in cell_text(np.array(values), digits=4)])


def symmetric_range(*arrays: np.ndarray) -> float:
    """One |z| bound shared by all panels, so a colour means the same number everywhere (never 0)."""
    finite = [np.abs(a[np.isfinite(a)]).max() for a in arrays if np.size(a) and np.isfinite(a).any()]
    return float(max(finite, default=1.0)) or 1.0


# Hovers show numbers as a person reads them: 3 significant digits, trailing zeros dropped (d3-format), so a
# value computed as -14.370999999999997 hovers as -14.4. It is the default of every axis and colour value;
# a hovertemplate's own %{y:...} format wins where one is given.
HOVER_FORMAT = ".3~g"


def wide(ch: str) -> bool:
    """A character drawn one em wide and upright in any writing direction: CJK and full-width forms."""
    return ord(ch) > 0x2e7f


def text_px(text: str, size: float) -> float:
    """About how wide `text` is drawn at font size `size`: a CJK character is one em, others ~0.62 em."""
    return size * sum(1.0 if wide(ch) else 0.62 for ch in text)


def stacked(text: str) -> str:
    """A tick label that holds CJK, for a crowded horizontal axis: one line per CJK character (the other
    characters stay together), so it reads upright under tickangle=0 instead of being turned sideways."""
    lines, run = [], ""
    for ch in text:
        if wide(ch):
            lines += [run, ch] if run else [ch]
            run = ""
        else:
            run += ch
    return "<br>".join(lines + ([run] if run else []))


def title_note(text: str, font_size: int, *, x_axis: str = "x", y_axis: str = "y", x: float = 0,
               xanchor: str = "left", xshift: int = 0) -> dict:
    """A y-axis title as a horizontal annotation just above the top of axis `y_axis` (see horizontal_titles),
    as plotly stores it; clear of the top tick label, which reaches half a line above the plot."""
    return dict(text=text, showarrow=False, xref=f"{x_axis} domain", yref=f"{y_axis} domain", x=x, y=1,
                xanchor=xanchor, xshift=xshift, yanchor="bottom", yshift=round(0.6 * font_size) + 2,
                font=dict(size=font_size, color="#374151"))


def wrapped(text: str, em: float = 6.0) -> str:
    """A category label broken into lines of at most about `em` ems (at spaces, or between CJK characters),
    for tick labels that must stay horizontal: Plotly turns crowded ones sideways by itself."""
    lines, line = [], ""
    for word in text.split(" "):
        for piece in ([word] if not any(map(wide, word)) else list(word)):
            joined = f"{line}{' ' if line and not wide(piece[0]) and not wide(line[-1]) else ''}{piece}"
            if line and text_px(joined, 1) > em:
                lines.append(line)
                joined = piece
            line = joined
    return "<br>".join(lines + [line])


NARROWEST_PX = 980       # a plot area's width on the narrowest screen it is shown on (a 1280 px projector's column)


def _broken(text: str, px: float, font_size: int) -> str:
    """text in lines of at most about px: before its parenthesis (either width) if both parts fit, else
    greedily as wrapped() breaks a label (at spaces, or between CJK characters; numbers never split)."""
    m = re.search(r"\s*[(（]", text)
    if m and max(text_px(text[:m.start()], font_size), text_px(text[m.end() - 1:], font_size)) <= px:
        return f"{text[:m.start()]}<br>{text[m.end() - 1:]}"
    return wrapped(text, em=px / font_size)


def fitted_titles(titles: list[str], font_size: int, spacing: float) -> tuple[list[str], int]:
    """Subplot titles side by side, each broken into lines where it is wider than the distance between
    neighbouring panels' centres on the narrowest screen, so neighbours never run into each other; and how
    many lines were added at most (the top margin's extra room). spacing: make_subplots' horizontal_spacing."""
    n = max(len(titles), 1)
    px = NARROWEST_PX * (1 + spacing) / n          # text_px over-estimates Latin text: air enough
    out = [t if text_px(t, font_size) <= px else _broken(t, px, font_size) for t in titles]
    return out, max((t.count("<br>") for t in out), default=0)


def legend_rows(names: list[str], font_size: int, width_px: float, symbol_px: float = 44) -> int:
    """About how many rows a horizontal legend of these entries takes in width_px (Plotly fills a row, then
    starts the next), each entry its text and its symbol; text_px over-estimates, so this rarely falls short."""
    rows, used = 1, 0.0
    for name in names:
        w = text_px(name, font_size) + symbol_px
        if used and used + w > width_px:
            rows, used = rows + 1, 0.0
        used += w
    return rows


def horizontal_titles(fig: go.Figure, font_size: int, automargin: bool = True) -> go.Figure:
    """Every y-axis title drawn horizontally, just above its axis (Plotly turns y titles sideways, and
    Chinese must never be): an annotation over the subplot's top-left corner, `font_size` high, clear of
    the top tick label; ending at the axis line when the room left of the axis holds it (the margin, or
    the gap to the subplot before), else starting there (at the top-right for a right-hand axis). automargin:
    Plotly sizes the outer margins from the drawn tick labels and x titles, so no title lands on a tick
    (figures that compute their margins themselves pass False). Call before the figure's skeleton is made."""
    layout = fig.layout.to_plotly_json()
    left_margin = (layout.get("margin") or {}).get("l", 80)
    ends = [tuple(layout[n].get("domain", (0, 1)))[1] for n in layout if n.startswith("xaxis")]

    def room(x0: float) -> float:
        """Pixels free left of a subplot starting at x0 (paper units): the margin, or the gap to the
        subplot before it at a plot width of PLOT_PX."""
        before = [e for e in ends if e <= x0 + 1e-9]
        return left_margin if x0 < 0.01 or not before else (x0 - max(before)) * PLOT_PX

    grown = False                              # the top margin grows once, for all top-row titles together
    for name in [n for n in layout if n.startswith(("xaxis", "yaxis"))]:
        axis = fig.layout[name]
        if automargin:
            axis.automargin = True
        if name.startswith("xaxis") and axis.title.text:     # a line's gap under the tick labels' boxes
            axis.title.standoff = max(axis.title.standoff or 0, round(0.45 * font_size))
        if not name.startswith("yaxis") or not axis.title.text:
            continue
        anchor = axis.anchor if axis.anchor and axis.anchor != "free" else "x"
        x_domain = fig.layout[f"xaxis{anchor[1:]}"].domain or (0, 1)
        # In the left margin, ending at the axis line, when it fits there (clear of any subplot title,
        # which is centred over the plot); else starting at the axis line, over the plot's top edge.
        in_margin = axis.side != "right" and text_px(axis.title.text, font_size) + 8 <= room(x_domain[0])
        x, xanchor, xshift = {"right": (1, "right", 0)}.get(axis.side, (0, "right", -6) if in_margin else (0, "left", 0))
        if not in_margin:
            grown = _make_room_above(fig, axis.domain or (0, 1), font_size, grow=not grown) or grown
        fig.add_annotation(title_note(axis.title.text, font_size, x_axis=anchor, y_axis=f"y{name[5:]}", x=x,
                                      xanchor=xanchor, xshift=xshift))
        axis.title = None                  # removed, not emptied: a skeleton copy stores no empty title
    return fig


def _make_room_above(fig: go.Figure, y_domain, font_size: int, grow: bool) -> bool:
    """A y title over the plot's top edge takes the line the subplot titles of its row (or the figure's
    title) sat on: those move one line up, and a top-row plot's top margin grows by that line (once: grow)."""
    line = round(0.6 * font_size) + 2 + round(1.3 * font_size)       # the title's lift (title_note) and its line
    for note in fig.layout.annotations:        # make_subplots' titles of this row: paper-placed at its top edge
        if (note.yref in (None, "paper") and note.xref in (None, "paper") and note.y is not None
                and abs(note.y - y_domain[1]) < 0.02 and not note.yshift):
            note.yshift = line
    if not (grow and y_domain[1] > 0.98):
        return False
    top = fig.layout.margin.t if fig.layout.margin.t is not None else 60
    fig.layout.margin.t = top + line
    if fig.layout.title.text:                  # the figure's own title: at the top edge, above both lines
        fig.layout.title.update(yref="container", y=1, yanchor="top", pad=dict(t=6))
    return True


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
