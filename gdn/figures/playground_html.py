"""The playground toys answered in the browser: each frame's HTML (a row of numbers and an SVG chart),
drawn by Python at every point of the toy's slider grid (app_pages/_playground_toys.py).

Pure: arrays from gdn.lessons.playground in, HTML out; every label arrives translated.
"""
from __future__ import annotations

import html

import numpy as np

from gdn.figures.svg_chart import Axes, Line, Mark, line_chart, nice_ticks

CHOSEN = "#dc2626"
RULE_COLOURS = {"linear": "#64748b", "delta": "#1d4ed8", "gated": "#dc2626"}    # as the Plotly toys
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
    lines = [Line(steps, d, RULE_COLOURS[r], 3.0, "7 5" if r == "gated" else "", rule_titles[r], r) for r, d in dist.items()]
    marks = tuple(Mark(float(steps[-1]), float(d[-1]), "", RULE_COLOURS[r]) for r, d in dist.items())
    x_ticks = tuple(range(0, int(steps[-1]) + 1, 1 if steps[-1] <= 10 else 2))
    axes = Axes((0, max(1.0, float(steps[-1]))), (0, top), x_ticks, nice_ticks(0, top), x_title=labels["x"],
                y_title=labels["y"], y_format="{:.0%}")
    return (f'<div class="gdn-toy" data-toy="repeat">{metrics_html(metrics)}'
            f'{line_chart(lines, axes, marks=marks, alt=alt)}</div>')
