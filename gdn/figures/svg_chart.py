"""Small line charts as SVG markup, for figures the explorer swaps in the browser (app_pages/_support/explorer.py).

A playground toy answers each slider value from a grid of frames Python drew in advance; a Plotly figure
per frame would cost the browser a new plot per move, an SVG string is swapped in one frame. Only what
the toys need: lines, markers with labels, a dashed reference line, linear axes with ticks, and axis
titles written horizontally (the y title above its axis, so it never sits on the tick labels).
Pure: numbers in, a string out; every label arrives translated; styled in assets/explorer/explorer.css.
"""
from __future__ import annotations

import html
from dataclasses import dataclass, field

import numpy as np

W, H = 720, 360                              # the drawing's units: about CSS px in a 720 px wide column
LEFT, RIGHT, TOP, BOTTOM = 56, 16, 34, 46    # plot margins: tick labels left and below, the y title above


@dataclass(frozen=True)
class Line:
    x: np.ndarray
    y: np.ndarray
    colour: str
    width: float = 2.0
    dash: str = ""
    label: str = ""                          # in the legend (none when empty)
    name: str = ""                           # data-series attribute, for tests and tools


@dataclass(frozen=True)
class Mark:
    x: float
    y: float
    text: str
    colour: str


@dataclass(frozen=True)
class Axes:
    x_range: tuple[float, float]
    y_range: tuple[float, float]
    x_ticks: tuple[float, ...]
    y_ticks: tuple[float, ...]
    x_title: str = ""
    y_title: str = ""
    y_format: str = "{:g}"
    x_format: str = "{:g}"
    hlines: tuple[tuple[float, str], ...] = field(default_factory=tuple)   # (y, label) dashed guides
    bands: tuple[tuple[float, float, str, str], ...] = field(default_factory=tuple)   # (y0, y1, fill, label)
    log_y: bool = False                      # y on a log10 scale (y_range and y_ticks as values)


def nice_ticks(lo: float, hi: float, n: int = 5) -> tuple[float, ...]:
    """About n round ticks (1, 2, 2.5 or 5 times a power of ten apart) covering [lo, hi]."""
    raw = max(hi - lo, 1e-12) / n
    power = 10.0 ** np.floor(np.log10(raw))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw)
    first = np.ceil(lo / step - 1e-9) * step
    return tuple(float(round(t, 12)) + 0.0 for t in np.arange(first, hi + step * 1e-9, step))   # never -0


SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def power_of_ten(y: float) -> str:
    """A log axis' tick: 10⁻³, 1, 10⁶."""
    k = int(round(np.log10(y)))
    return "1" if k == 0 else "10" if k == 1 else "10" + str(k).translate(SUPERSCRIPT)


def _scale(axes: Axes, W: int, H: int):
    (x0, x1), (y0, y1) = axes.x_range, axes.y_range
    f = (lambda y: np.log10(np.asarray(y, dtype=float))) if axes.log_y else (lambda y: np.asarray(y, dtype=float))
    px = lambda x: LEFT + (np.asarray(x, dtype=float) - x0) / (x1 - x0) * (W - LEFT - RIGHT)
    py = lambda y: H - BOTTOM - (f(y) - f(y0)) / (f(y1) - f(y0)) * (H - TOP - BOTTOM)
    return px, py


def _points(px, py, x, y) -> str:
    return " ".join(f"{a:.1f},{b:.1f}" for a, b in zip(px(x), py(y)))


def line_chart(lines: list[Line], axes: Axes, *, marks: tuple[Mark, ...] = (), alt: str = "",
               size: tuple[int, int] = (W, H)) -> str:
    """An SVG line chart: the lines drawn in order (the last on top), marks as dots with a label. size: the
    drawing's units (W x H); a chart drawn half as wide on the page gets about half of W, so its text
    keeps its size."""
    W, H = size
    px, py = _scale(axes, W, H)
    bottom, top = H - BOTTOM, TOP
    y_text = power_of_ten if axes.log_y else axes.y_format.format
    grid = "".join(f'<line class="grid" x1="{LEFT}" x2="{W - RIGHT}" y1="{py(t):.1f}" y2="{py(t):.1f}"/>'
                   f'<text class="tick y" x="{LEFT - 6}" y="{py(t) + 4:.1f}">{html.escape(y_text(t))}</text>'
                   for t in axes.y_ticks)
    grid += "".join(f'<text class="tick x" x="{px(t):.1f}" y="{bottom + 16}">{html.escape(axes.x_format.format(t))}</text>'
                    for t in axes.x_ticks)
    def band(y0, y1, fill, label):
        top, low = float(py(max(y0, y1))), float(py(min(y0, y1)))
        return (f'<rect class="band" x="{LEFT}" y="{top:.1f}" width="{W - LEFT - RIGHT}" height="{low - top:.1f}" '
                f'fill="{fill}"/><text class="band-label" x="{LEFT + 6}" y="{low - 6:.1f}">{html.escape(label)}</text>')
    bands = "".join(band(*b) for b in axes.bands)
    guides = "".join(f'<line class="guide" x1="{LEFT}" x2="{W - RIGHT}" y1="{py(y):.1f}" y2="{py(y):.1f}"/>'
                     f'<text class="guide-label" x="{W - RIGHT - 4}" y="{py(y) - 5:.1f}">{html.escape(label)}</text>'
                     for y, label in axes.hlines)
    curves = "".join(f'<polyline class="series" data-series="{html.escape(ln.name)}" fill="none" stroke="{ln.colour}" '
                     f'stroke-width="{ln.width}"{f" stroke-dasharray={chr(34)}{ln.dash}{chr(34)}" if ln.dash else ""} '
                     f'points="{_points(px, py, ln.x, ln.y)}"/>' for ln in lines)
    dots = "".join(f'<circle class="mark" cx="{px(m.x):.1f}" cy="{py(m.y):.1f}" r="6" fill="{m.colour}"/>'
                   f'<text class="mark-label" x="{px(m.x) + 10:.1f}" y="{py(m.y) - 10:.1f}" style="fill:{m.colour}">'
                   f'{html.escape(m.text)}</text>' for m in marks)
    frame = (f'<line class="axis" x1="{LEFT}" x2="{W - RIGHT}" y1="{bottom}" y2="{bottom}"/>'
             f'<line class="axis" x1="{LEFT}" x2="{LEFT}" y1="{top}" y2="{bottom}"/>'
             f'<text class="title x" x="{(LEFT + W - RIGHT) / 2}" y="{H - 8}">{html.escape(axes.x_title)}</text>'
             f'<text class="title y" x="{LEFT - 40}" y="{top - 14}">{html.escape(axes.y_title)}</text>')
    legend = "".join(f'<span class="key"><i style="background:{ln.colour}"></i>{html.escape(ln.label)}</span>'
                     for ln in lines if ln.label)
    return (f'<figure class="gdn-svgchart"><div class="legend">{legend}</div>'
            f'<svg viewBox="0 0 {W} {H}" role="img" aria-label="{html.escape(alt)}">'
            f'{bands}{grid}{guides}{frame}{curves}{dots}</svg></figure>')
