"""The 2-D view of one delta-rule write as SVG markup, one frame of the explorer's grid (app_pages/_geometry_view.py).

Keys on the left plane, values and reads on the right. SVG, not Plotly: a string is swapped in one animation
frame, a Plotly figure per slider move would be a new plot (it replaced gdn/figures/geometry.py's).
Pure: a Scene in, a string out; every label arrives translated; styled in assets/explorer/explorer.css.
"""
from __future__ import annotations

import html

import numpy as np

from gdn.figures.playground_html import metrics_html
from gdn.lessons.geometry import Scene

K1, K2, ALONG, ACROSS, ERR = "#1d4ed8", "#d97706", "#dc2626", "#16a34a", "#dc2626"
X_RANGE, Y_RANGE = (-1.45, 1.45), (-1.3, 1.45)      # both planes, in key / value units
SCALE = 112                                         # drawing units per key / value unit
PANEL_W, PANEL_H = int(SCALE * 2.9), int(SCALE * 2.75)
GAP, TOP = 40, 30                                   # between the planes; above them, the planes' titles
W, H = 2 * PANEL_W + GAP, PANEL_H + TOP + 4


def _to_px(panel: int):
    """(x, y) in key / value units -> drawing units of panel 0 (keys) or 1 (values)."""
    left = panel * (PANEL_W + GAP)
    return lambda p: (left + (p[0] - X_RANGE[0]) * SCALE, TOP + (Y_RANGE[1] - p[1]) * SCALE)


def _arrow(px, start, end, colour: str, *, width: float = 3.5, faint: bool = False, name: str = "") -> str:
    """A line from start to end with a filled head at end; nothing when shorter than the head."""
    (x0, y0), (x1, y1) = px(start), px(end)
    d = np.hypot(x1 - x0, y1 - y0)
    if d < 1.0:
        return ""
    ux, uy = (x1 - x0) / d, (y1 - y0) / d
    head = min(14.0, 0.6 * d)
    bx, by = x1 - head * ux, y1 - head * uy
    wing = head * 0.45
    points = f"{x1:.1f},{y1:.1f} {bx - wing * uy:.1f},{by + wing * ux:.1f} {bx + wing * uy:.1f},{by - wing * ux:.1f}"
    opacity = ' opacity="0.4"' if faint else ""
    return (f'<g class="arrow" data-arrow="{name}"{opacity}><line x1="{x0:.1f}" y1="{y0:.1f}" x2="{bx:.1f}" y2="{by:.1f}" '
            f'stroke="{colour}" stroke-width="{width}"/><polygon points="{points}" fill="{colour}"/></g>')


def _label(px, at, text: str, colour: str, *, push: float = 0.16) -> str:
    """A label just beyond `at`, pushed outward from the origin."""
    at = np.asarray(at, float)
    r = np.hypot(*at)
    x, y = px(at * (1 + push / max(r, 1e-9)) if r > 1e-9 else at + np.array([0.05, 0.08]))
    return (f'<text class="vec-label" x="{x:.1f}" y="{y + 5:.1f}" style="fill:{colour}">{html.escape(text)}</text>')


def _plane(panel: int, title: str, dims: tuple[str, str]) -> str:
    """The axes through the origin, a light grid every 0.5, the title above, the dims' names in the right-hand
    corners with an arrow along their axis: at the axes' ends the labels of unit vectors on the axes
    (k1 = (1, 0), a read of v2 = (0, 1)) sat on them, and the top left holds the angle."""
    px = _to_px(panel)
    lines = []
    for t in np.arange(-1.0, 1.01, 0.5):
        (xa, ya), (xb, yb) = px((t, Y_RANGE[0])), px((t, Y_RANGE[1]))
        lines.append(f'<line class="grid" x1="{xa:.1f}" x2="{xb:.1f}" y1="{ya:.1f}" y2="{yb:.1f}"/>')
        (xa, ya), (xb, yb) = px((X_RANGE[0], t)), px((X_RANGE[1], t))
        lines.append(f'<line class="grid" x1="{xa:.1f}" x2="{xb:.1f}" y1="{ya:.1f}" y2="{yb:.1f}"/>')
    (xa, ya), (xb, yb) = px((X_RANGE[0], 0)), px((X_RANGE[1], 0))
    (xc, yc), (xd, yd) = px((0, Y_RANGE[0])), px((0, Y_RANGE[1]))
    left = panel * (PANEL_W + GAP)
    return ("".join(lines) + f'<line class="axis" x1="{xa:.1f}" x2="{xb:.1f}" y1="{ya:.1f}" y2="{yb:.1f}"/>'
            f'<line class="axis" x1="{xc:.1f}" x2="{xd:.1f}" y1="{yc:.1f}" y2="{yd:.1f}"/>'
            f'<text class="tick dim1" x="{xb - 2:.1f}" y="{yc - 6:.1f}">{html.escape(dims[0])} →</text>'
            f'<text class="tick dim2" x="{xb - 2:.1f}" y="{yd + 14:.1f}">↑ {html.escape(dims[1])}</text>'
            f'<text class="title plane" x="{left + PANEL_W / 2:.1f}" y="{TOP - 10}">{html.escape(title)}</text>')


def write_2d_html(s: Scene, *, labels: dict[str, str], metrics: list[tuple[str, str, str]], alt: str = "") -> str:
    """labels: key_plane, value_plane, k1, k2, v1, v2, along, across, read1, read2, angle (with {deg}, {cos}),
    interference (with {x}), dim1, dim2. metrics: (name, label, value) cards above the planes."""
    keys, vals = _to_px(0), _to_px(1)
    dims = (labels["dim1"], labels["dim2"])
    circle = " ".join(f"{x:.1f},{y:.1f}" for x, y in (keys((np.cos(a), np.sin(a))) for a in np.linspace(0, 2 * np.pi, 73)))
    parts = [_plane(0, labels["key_plane"], dims), _plane(1, labels["value_plane"], dims),
             f'<polyline class="unit-circle" fill="none" points="{circle}"/>']
    # keys, and k1 split into the part the write rewrites (along k2) and the part it leaves alone
    (ox, oy), (ax, ay), (kx, ky) = keys((0, 0)), keys(s.along), keys(s.k1)
    parts.append(f'<line class="along" data-part="along" x1="{ox:.1f}" y1="{oy:.1f}" x2="{ax:.1f}" y2="{ay:.1f}" '
                 f'stroke="{ALONG}" stroke-width="14" stroke-linecap="round" opacity="0.3"/>')
    parts.append(f'<line class="across" data-part="across" x1="{ax:.1f}" y1="{ay:.1f}" x2="{kx:.1f}" y2="{ky:.1f}" '
                 f'stroke="{ACROSS}" stroke-width="4" stroke-dasharray="3 5" stroke-linecap="round"/>')
    parts += [_arrow(keys, (0, 0), s.k1, K1, name="k1"), _arrow(keys, (0, 0), s.k2, K2, name="k2"),
              _label(keys, s.k1, labels["k1"], K1), _label(keys, s.k2, labels["k2"], K2)]
    a1, a2 = np.arctan2(s.k1[1], s.k1[0]), np.arctan2(s.k2[1], s.k2[0])
    sweep = (a2 - a1 + np.pi) % (2 * np.pi) - np.pi                   # the short way round, signed
    arc = " ".join(f"{x:.1f},{y:.1f}" for x, y in (keys((0.3 * np.cos(a), 0.3 * np.sin(a)))
                                                   for a in a1 + np.linspace(0, sweep, 25)))
    mx, my = keys((0.45 * np.cos(a1 + sweep / 2), 0.45 * np.sin(a1 + sweep / 2)))
    tx, ty = keys((X_RANGE[0] + 0.05, Y_RANGE[1] - 0.12))          # the angle's numbers: top left, clear of the arrows
    parts.append(f'<polyline class="angle-arc" fill="none" points="{arc}"/>'
                 f'<text class="angle-mark" x="{mx:.1f}" y="{my + 5:.1f}">θ</text><text class="angle-label" x="{tx:.1f}" '
                 f'y="{ty:.1f}">θ = {html.escape(labels["angle"].format(deg=f"{s.angle:.0f}", cos=f"{s.cos:.2f}"))}</text>')
    # values: the targets, and each key's read before (faint) and after (solid) the write
    for v, name, colour, dx, dy in ((s.v1, labels["v1"], K1, 0, 30), (s.v2, labels["v2"], K2, -24, 6)):
        x, y = vals(v)                                                # v1 below its ring, v2 left of it
        parts.append(f'<circle class="target" cx="{x:.1f}" cy="{y:.1f}" r="9" fill="none" stroke="{colour}" stroke-width="3"/>'
                     f'<text class="vec-label" x="{x + dx:.1f}" y="{y + dy:.1f}" style="fill:{colour}">{html.escape(name)}</text>')
    (before1, after1), (before2, after2) = s.read_k1, s.read_k2
    parts += [_arrow(vals, (0, 0), before2, K2, width=2.5, faint=True, name="read2_before"),
              _arrow(vals, (0, 0), after2, K2, name="read2"), _arrow(vals, (0, 0), after1, K1, name="read1"),
              _label(vals, after2, labels["read2"], K2, push=0.3), _label(vals, after1, labels["read1"], K1, push=0.3)]
    if s.interference > 1e-9:
        (bx, by), (cx, cy) = vals(before1), vals(after1)
        text = labels["interference"].format(x=f"{s.interference:.2f}")
        parts.append(f'<line class="interference" x1="{bx:.1f}" y1="{by:.1f}" x2="{cx:.1f}" y2="{cy:.1f}" stroke="{ERR}" '
                     f'stroke-width="3" stroke-dasharray="2 5" stroke-linecap="round"/>'
                     f'<text class="interference-label" x="{(bx + cx) / 2:.1f}" y="{vals((0, -0.45))[1]:.1f}">'
                     f'{html.escape(text)}</text>')
    legend = (f'<span class="key"><i style="background:{ALONG};opacity:0.45"></i>{html.escape(labels["along"])}</span>'
              f'<span class="key"><i style="background:{ACROSS}"></i>{html.escape(labels["across"])}</span>')
    return (f'<div class="gdn-toy gdn-write2d" data-toy="write2d">{metrics_html(metrics)}'
            f'<figure class="gdn-svgchart"><div class="legend">{legend}</div>'
            f'<svg viewBox="0 0 {W} {H}" role="img" aria-label="{html.escape(alt)}">{"".join(parts)}</svg></figure></div>')
