"""The playground toys answered in the browser: each frame's HTML (a row of numbers and an SVG chart),
drawn by Python at every point of the toy's slider grid (app_pages/_playground_toys.py).

Pure: arrays from gdn.lessons.playground in, HTML out; every label arrives translated.
"""
from __future__ import annotations

import html

import numpy as np

from gdn.figures.common import numbered, symmetric_range
from gdn.figures.svg_chart import Axes, Line, Mark, line_chart, nice_ticks
from gdn.figures.tables import Panel, panels_table
from gdn.lessons.compare import rule_of
from gdn.units import cell_text

CHOSEN = "#dc2626"
REFERENCE_COLOURS = ("#64748b", "#0ea5e9", "#a855f7", "#16a34a")


def metrics_html(values: list[tuple[str, str, str]]) -> str:
    """(name, label, value) cards in a row: data-metric=name for tests and tools."""
    return '<div class="gdn-metrics">' + "".join(
        f'<div class="metric" data-metric="{html.escape(n)}"><div class="label">{html.escape(label)}</div>'
        f'<div class="value">{html.escape(value)}</div></div>' for n, label, value in values) + "</div>"


def half_life_html(curves: np.ndarray, refs: list[float], alpha: float, half: float, *, labels: dict[str, str],
                   metrics: list[tuple[str, str, str]], alt: str = "") -> str:
    """curves: [len(refs) + 1, n + 1] alpha^n for the reference alphas, the chosen one last; half: its
    half-life in tokens (marked on the ½ line when inside the chart). labels: n, kept, half_at (with {n})."""
    n = np.arange(curves.shape[1])
    lines = [Line(n, y, REFERENCE_COLOURS[i % 4], 1.6, "5 4", f"α = {a:g}", f"ref{i}") for i, (a, y) in enumerate(zip(refs, curves[:-1]))]
    lines.append(Line(n, curves[-1], CHOSEN, 4.0, "", f"α = {alpha:g}", "chosen"))
    marks = (Mark(float(half), 0.5, labels["half_at"].format(n=f"{half:.1f}"), CHOSEN),) \
        if np.isfinite(half) and half <= n[-1] else ()
    axes = Axes((0, float(n[-1])), (0, 1.05), tuple(range(0, int(n[-1]) + 1, 10)), (0, 0.25, 0.5, 0.75, 1.0),
                x_title=labels["n"], y_title=labels["kept"], hlines=((0.5, "½"),))
    return (f'<div class="gdn-toy" data-toy="halflife">{metrics_html(metrics)}'
            f'{line_chart(lines, axes, marks=marks, alt=alt)}</div>')


def repeated_html(dist: dict[str, np.ndarray], *, rule_titles: dict[str, str], labels: dict[str, str],
                  metrics: list[tuple[str, str, str]], alt: str = "") -> str:
    """dist: rule -> [T + 1] relative distance to v after each write (entry 0: the empty table).
    labels: x, y (axis titles)."""
    steps = np.arange(len(next(iter(dist.values()))))
    top = max(1.0, max(float(np.max(d)) for d in dist.values())) * 1.05
    lines = [Line(steps, d, rule_of(r).colour, 3.0, rule_of(r).dash, rule_titles[r], r) for r, d in dist.items()]
    marks = tuple(Mark(float(steps[-1]), float(d[-1]), "", rule_of(r).colour) for r, d in dist.items())
    x_ticks = tuple(range(0, int(steps[-1]) + 1, 1 if steps[-1] <= 10 else 2))
    axes = Axes((0, max(1.0, float(steps[-1]))), (0, top), x_ticks, nice_ticks(0, top), x_title=labels["x"],
                y_title=labels["y"], y_format="{:.0%}")
    return (f'<div class="gdn-toy" data-toy="repeat">{metrics_html(metrics)}'
            f'{line_chart(lines, axes, marks=marks, alt=alt)}</div>')


ZONE_COLOURS = {"shrink": "#dcfce7", "overshoot": "#fef3c7", "diverge": "#fee2e2"}   # as the Plotly toy
PAIR = (400, 300)          # the drawing units of each of two charts side by side
STATE_CLASS = {"diverge": "error", "edge": "warning", "overshoot": "warning", "none": "info"}   # else success


def key_norm_html(c_grid: np.ndarray, factor: np.ndarray, c: float, errors: np.ndarray, *, clipped: bool,
                  state: str, labels: dict[str, str], metrics: list[tuple[str, str, str]], notes: list[str],
                  alt: str = "") -> str:
    """Left: the factor (1 - beta c^2) along k against the key norm c, zones converge / overshoot / diverge,
    the current c marked; right: |distance to v| per repeated write on a log axis (already clipped by
    gdn.lessons.playground.clip_for_display; `clipped` writes a warning). state: the lesson's name for
    beta c^2 (shrink, exact, overshoot, edge, diverge, none), its message first in notes (plain text)."""
    lo = min(-3.0, float(factor.min()) - 0.3)
    here = float(np.interp(c, c_grid, factor))
    bands = ((1.0, 0.0, ZONE_COLOURS["shrink"], labels["shrink"]), (0.0, -1.0, ZONE_COLOURS["overshoot"], labels["overshoot"]),
             (-1.0, lo, ZONE_COLOURS["diverge"], labels["diverge"]))
    left = line_chart([Line(c_grid, factor, "#0f172a", 3.0, name="factor")],
                      Axes((0, float(c_grid[-1])), (lo, 1.3), nice_ticks(0, float(c_grid[-1]), 6), nice_ticks(lo, 1.3, 5),
                           x_title=labels["knorm"], y_title=labels["factor"], bands=bands),
                      marks=(Mark(c, here, f"{here:.2f}", CHOSEN),), alt=labels["factor_title"], size=PAIR)
    steps, distance = np.arange(len(errors)), np.maximum(np.abs(errors), 1e-16)
    k_lo, k_hi = int(np.floor(np.log10(distance.min()))), max(1, int(np.ceil(np.log10(distance.max()))))
    every = max(1, (k_hi - k_lo + 5) // 6)
    right = line_chart([Line(steps, distance, rule_of("deltanet").colour, 3.0, name="distance")],
                       Axes((0, max(1.0, float(steps[-1]))), (10.0 ** k_lo, 10.0 ** k_hi),
                            nice_ticks(0, max(1.0, float(steps[-1])), 6),
                            tuple(10.0 ** k for k in range(k_lo, k_hi + 1, every)), x_title=labels["writes"],
                            y_title=labels["distance"], log_y=True),
                       alt=labels["error_title"], size=PAIR)
    warn = f'<div class="gdn-callout error">{html.escape(labels["clipped"])}</div>' if clipped else ""
    callouts = "".join(f'<div class="gdn-callout {STATE_CLASS.get(state, "success") if i == 0 else "info"}"'
                       f'{f" data-state={chr(34)}{state}{chr(34)}" if i == 0 else ""}>{html.escape(n)}</div>'
                       for i, n in enumerate(notes))
    return (f'<div class="gdn-toy" data-toy="knorm" role="group" aria-label="{html.escape(alt)}">{metrics_html(metrics)}'
            f'<div class="gdn-toy-pair"><div><h4>{html.escape(labels["factor_title"])}</h4>{left}</div>'
            f'<div><h4>{html.escape(labels["error_title"])}</h4>{right}{warn}</div></div>{callouts}</div>')


COLOUR_STEPS = 10            # shades of the readout table's colour scale on each side of 0
PART_NAMES = ("old", "interference", "missed", "total")      # coloured by explorer.css as the Plotly toy was


def _pct(x: float, lo: float, hi: float) -> float:
    return 100.0 * (x - lo) / (hi - lo)


def _waterfall(along: np.ndarray, error: np.ndarray, rule_titles: list[str], labels: dict[str, str]) -> tuple[str, str]:
    """(the legend's entries, the staircases): per rule a staircase drawn sideways, each part a bar
    starting where the one above it ended (right when it adds to the error, left when it takes some
    away), then the total from zero, ending where the last step does. along: [3 rules, 3 parts] signed
    components along the error; error: [3]."""
    starts = np.hstack([np.zeros((len(along), 1)), np.cumsum(along, axis=1)[:, :-1]])     # [3 rules, 3 parts]
    ends = np.concatenate([starts.ravel(), (starts + along).ravel(), error, [0.0]])
    span = max(float(ends.max() - ends.min()), 0.1)
    lo, hi = min(0.0, float(ends.min()) - 0.3 * span), float(ends.max()) + 0.3 * span    # room for the labels
    ticks = [t for t in nice_ticks(lo, hi, 4) if lo <= t <= hi]
    cells = []
    for r, title in enumerate(rule_titles):
        bars = []
        for j, name in enumerate(PART_NAMES):
            a, b = (starts[r, j], starts[r, j] + along[r, j]) if j < 3 else (0.0, error[r])
            left, right = sorted((_pct(a, lo, hi), _pct(b, lo, hi)))
            # a step under 5 % is too thin to carry a label without crowding its neighbours' (its title says it)
            text = f"{along[r, j]:+.0%}" if j < 3 and abs(along[r, j]) >= 0.05 else f"{error[r]:.0%}" if j == 3 else ""
            place = f"right:{100 - left + 0.8:.1f}%" if b < a else f"left:{right + 0.8:.1f}%"
            bar = f'<i style="left:{left:.1f}%;width:{right - left:.1f}%"></i>' if right - left >= 0.05 else ""
            bars.append(f'<div class="ow-step {name}" data-link="{name}">{bar}'
                        + (f'<b data-part="{name}" style="{place}">{text}</b>' if text else "") + "</div>")
        cells.append(f'<div class="ow-rule" style="grid-row:{r + 1}">{html.escape(title)}</div>'
                     f'<div class="ow-track" data-rule="{r}" style="grid-row:{r + 1}">{"".join(bars)}</div>')
    grid = "".join(f'<i class="{"zero" if t == 0 else "grid"}" style="left:{_pct(t, lo, hi):.1f}%"></i>' for t in ticks)
    axis = "".join(f'<span style="left:{_pct(t, lo, hi):.1f}%">{t:.0%}</span>' for t in ticks)
    n = len(rule_titles)
    legend = "".join(f'<span class="key {name}" data-link="{name}"><i></i>{html.escape(labels[name])}</span>'
                     for name in PART_NAMES)
    return legend, (f'<div class="ow-bars">'
            f'<div class="ow-lines" style="grid-row:1/{n + 1}">{grid}</div>{"".join(cells)}'
            f'<div class="ow-axis" style="grid-row:{n + 1}">{axis}</div></div>'
            f'<div class="ow-axis-title">{html.escape(labels["bars_axis"])}</div>')


def overwrite_html(readout: np.ndarray, target: np.ndarray, old: np.ndarray, along: np.ndarray, error: np.ndarray, *,
                   rule_titles: list[str], row_labels: list[str], labels: dict[str, str],
                   metrics: list[tuple[str, str, str]], notes: list[str], alt: str = "") -> str:
    """Overwrite vs blur at one slider setting (gdn.lessons.playground.Overwrite's arrays): left, the
    error of each rule as a staircase of its three parts (_waterfall); right, the old value, the target
    and each rule's readout as rows of a signed table. labels: old, interference, missed, total (the
    parts), bars_title, rows_title, bars_axis, value_axis. notes: plain-text lines under the figure."""
    rows = np.vstack([old, target, readout])                           # [5, V]
    zmax = symmetric_range(rows)
    # colours in 2 x COLOUR_STEPS + 1 shades (the numbers stay exact): a frame's cells then repeat a few
    # styles, which halves the packed grid of an 8 x 8 example
    shades = np.round(rows / zmax * COLOUR_STEPS) / COLOUR_STEPS * zmax
    table = panels_table([Panel(labels["rows_title"], shades, row_labels, numbered(rows.shape[1]),
                                axis=labels["value_axis"], name="readout", text=cell_text(rows, 1))],
                         zmax, "gdn-tables vectors ow-table")
    callouts = "".join(f'<div class="gdn-callout info">{html.escape(n)}</div>' for n in notes)
    legend, bars = _waterfall(along, error, rule_titles, labels)
    # the legend over both halves: on one line even on a 1280 px projector. The table beside the staircase
    # up to 5 value dims (wider from 4 on), under it beyond: 8 columns of "-0.5" do not fit beside it
    width = "" if rows.shape[1] <= 3 else " wide" if rows.shape[1] <= 5 else " stacked"
    return (f'<div class="gdn-toy" data-toy="overwrite" role="group" aria-label="{html.escape(alt)}">{metrics_html(metrics)}'
            f'<div class="ow-legend">{legend}</div><div class="ow-pair{width}"><div><h4>{html.escape(labels["bars_title"])}</h4>'
            f'{bars}</div><div>{table}</div></div>{callouts}</div>')
