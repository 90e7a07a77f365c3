"""Signed number tables as HTML: the cells of a heatmap, drawn by the browser's own table layout.

The memory and compare pages' steps and the chunking page's sliders change a few dozen numbers. Drawn as
Plotly figures with four to seven heatmap subplots, every change cost the browser a whole new plot
(Streamlit mounts a new chart whenever a figure changes): about 70 ms of plotly.js for the memory figure
alone, and two to three times the key-press-to-picture time of a one-chart page (bench/bench_browser.py).
A table is the natural form of a memory table anyway: crisp text at any zoom, numbers a screen reader
can read, a font that follows lecture mode. The look (colours, the "?" of numbers not computed yet, the
orange frame of the active panels) matches the Plotly figures, which stay for the downloads and the
offline player; the classes are styled in assets/app.css.
"""
from __future__ import annotations

import html
import re
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import plotly.colors

from gdn.figures.common import ACTIVE, DIVERGING
from gdn.units import cell_text


def scale_rgb(colorscale, u: np.ndarray) -> np.ndarray:
    """[..., 3] colours of a Plotly colour scale (a name such as "Blues", or [[stop, colour], ...]) at u in
    [0, 1], interpolated linearly between its stops as Plotly does (NaN: the colour at 0)."""
    key = colorscale if isinstance(colorscale, str) else tuple(map(tuple, colorscale))
    stops, rgb = _scale_stops(key)
    u = np.clip(np.nan_to_num(np.asarray(u, dtype=float), nan=0.0), 0.0, 1.0)
    return np.stack([np.interp(u, stops, rgb[:, i]) for i in range(3)], axis=-1)


SCALES_KEPT = 32            # colour scales parsed and kept (_scale_stops)


@lru_cache(maxsize=SCALES_KEPT)
def _scale_stops(colorscale) -> tuple[np.ndarray, np.ndarray]:
    """A colour scale's stops [n] and their colours [n, 3], parsed once: every table of every step asks
    (plotly's parsing was 0.06-0.23 ms a call)."""
    scale = plotly.colors.get_colorscale(colorscale) if isinstance(colorscale, str) else colorscale
    rgb = [plotly.colors.unlabel_rgb(plotly.colors.convert_colors_to_same_type(c, "rgb")[0][0]) for _, c in scale]
    return np.array([s for s, _ in scale], dtype=float), np.array(rgb, dtype=float)


def gradient_css(colorscale, steps: int = 9) -> str:
    """A CSS linear-gradient (left to right) through the colour scale: an HTML figure's colour bar."""
    colours = ",".join(f"rgb({r},{g},{b})" for r, g, b in np.rint(scale_rgb(colorscale, np.linspace(0, 1, steps))).astype(int))
    return f"linear-gradient(to right,{colours})"


def diverging_rgb(z: np.ndarray, zmax: float) -> np.ndarray:
    """[..., 3] colours of the DIVERGING scale for values in [-zmax, zmax] (0 is white), as Plotly draws
    a heatmap with zmin = -zmax."""
    return scale_rgb(DIVERGING, (np.asarray(z, dtype=float) / zmax + 1.0) / 2.0)


def cell_style(rgb: np.ndarray) -> str:
    """Background and a text colour that stays readable on it (white on the dark ends)."""
    r, g, b = (int(round(x)) for x in rgb)
    light = 0.299 * r + 0.587 * g + 0.114 * b > 150              # perceived brightness
    return f"background:rgb({r},{g},{b});color:{'#111827' if light else '#ffffff'}"


def rich(text: str) -> str:
    """Escape a label but keep the few tags the app's titles use (as in Plotly's labels): sub, sup, b, i, br."""
    return re.sub(r"&lt;(/?(?:sub|sup|b|i)|br ?/?)&gt;", r"<\1>", html.escape(text))


@dataclass
class Panel:
    """One titled table: z [rows, cols] with its row and column labels. shown=False draws every cell as
    "?" (not computed yet at this stage); text, when given, is each cell's text instead of its number,
    and cells reading "?" or "—" stay uncoloured; active frames the panel in the stage colour."""
    title: str
    z: np.ndarray
    rows: list[str]
    cols: list[str]
    shown: bool = True
    active: bool = False
    row_labels: bool = True          # False: the rows are named by the panel to the left
    axis: str = ""                   # under the columns, e.g. "value dim"
    name: str = ""                   # data-panel attribute, for tests and tools
    text: np.ndarray | None = None
    corner: str = ""                 # over the row labels: what they count (e.g. "token i")
    marked: tuple[int, ...] = ()     # rows this step changed: class "changed", which the player highlights


BLANK = ("?", "—")                   # not computed yet; not defined for this rule


def _label_em(labels: list[str]) -> float:
    """Width of a row-label column, in em of the table's font: the longest label at 0.9em (a CJK
    character about 1em wide, others about 0.55em), tags not counted, never under 3.4em."""
    visible = [re.sub(r"<[^>]+>", "", label) for label in labels]
    longest = max((sum(1.0 if ord(ch) > 0x2e7f else 0.55 for ch in v) for v in visible), default=0.0)
    return max(3.4, 0.9 * longest + 0.8)


def widest_number(*arrays: np.ndarray) -> int:
    """Characters of the widest cell_text of these arrays (the numbers rounded to 2 digits): sign, integer
    digits, and ".dd" when any is not whole. An upper bound, read off the numbers without formatting each."""
    z = np.round(np.concatenate([np.ravel(np.asarray(a, dtype=float)) for a in arrays]), 2)
    z = z[np.isfinite(z)]
    if z.size == 0:
        return 1
    digits = len(str(int(np.abs(z).max())))
    return int(bool((z < 0).any())) + digits + (3 if (z != np.round(z)).any() else 0)


def panels_table(panels: list[Panel], zmax: float, css_class: str, chars: int | None = None) -> str:
    """Side-by-side panels as one <table>, so their rows line up: a title row, a column-label row, the
    body (panels with fewer rows leave theirs empty) and an axis-title row."""
    n_rows = max(len(p.rows) for p in panels)
    head, labels, foot, cols = [], [], [], []
    body = [[] for _ in range(n_rows)]
    for i, p in enumerate(panels):
        gap = '<td class="gap"></td>' if i else ""
        lead = 1 if p.row_labels else 0
        frame = " active" if p.active else ""
        width = len(p.cols) + lead
        # fixed layout: label columns sized to their text, the gap fixed, the data columns share the rest
        label = f'<col class="label" style="width:{_label_em([*p.rows, p.corner]):.1f}em">'
        cols += (['<col class="gap">'] if i else []) + ([label] if lead else []) + ["<col>"] * len(p.cols)
        head.append(f'{gap}<th class="title" colspan="{width}">{rich(p.title)}</th>')
        labels.append(gap + (f'<th class="corner">{rich(p.corner)}</th>' if lead else "")
                      + "".join(f'<th class="col">{html.escape(c)}</th>' for c in p.cols))
        foot.append(f'{gap}<td class="axis" colspan="{width}">{html.escape(p.axis)}</td>')
        text = np.full(np.shape(p.z), "?") if not p.shown else cell_text(p.z) if p.text is None else np.asarray(p.text)
        colours = diverging_rgb(p.z, zmax)
        for r in range(n_rows):
            row = [gap]
            if r < len(p.rows):
                if lead:
                    row.append(f'<th class="row">{rich(p.rows[r])}</th>')
                for c in range(len(p.cols)):
                    edges = " ".join(e for e, on in (("t", r == 0), ("b", r == len(p.rows) - 1), ("l", c == 0),
                                                    ("r", c == len(p.cols) - 1)) if on)
                    style = cell_style(colours[r, c]) if text[r, c] not in BLANK else ""
                    changed = " changed" if r in p.marked else ""
                    row.append(f'<td class="cell{frame}{changed} {edges}" data-panel="{p.name}" data-r="{r}" style="{style}">'
                               f'{html.escape(str(text[r, c]))}</td>')
            else:
                row.append(f'<td colspan="{width}"></td>')
            body[r].append("".join(row))
    rows = (["<tr>" + "".join(head) + "</tr>"] if any(p.title for p in panels) else []) + [
            "<tr>" + "".join(labels) + "</tr>",
            *("<tr>" + "".join(r) + "</tr>" for r in body)]
    if any(p.axis for p in panels):
        rows.append("<tr>" + "".join(foot) + "</tr>")
    # Many columns (four 8 x 8 matrices in a row): smaller numbers, so "-0.71" still fits its cell. The
    # frame's colour comes from common.ACTIVE, like the Plotly figures' frames.
    scale = min(1.0, max(0.62, 20 / sum(len(p.cols) for p in panels)))
    # What a page's CSS may fit the numbers to the width with (assets/app.css: the memory page's tables)
    fixed = sum(_label_em([*p.rows, p.corner]) for p in panels if p.row_labels) + 1.1 * (len(panels) - 1)
    fit = f";--cells:{sum(len(p.cols) for p in panels)};--fixed-em:{fixed:.1f};--chars:{chars}" if chars else ""
    return (f'<table class="{css_class}" style="--cell-scale:{scale:.2f};--gdn-active:{ACTIVE}{fit}"><colgroup>'
            + "".join(cols) + "</colgroup>" + "".join(rows) + "</table>")
