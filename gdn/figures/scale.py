"""A Plotly figure drawn for a 1280x720 lecture screen, redrawn for a larger one: every length it states in
pixels times the screen's scale (fonts, the figure's height, margins, shifts, standoffs, line widths, marker
sizes, cell gaps), so a 1920x1080 projector (scale 1.5) shows what 1280x720 shows, proportionally larger.

The figure code keeps drawing for 1280x720 (its text-width estimates assume a ~1000 px plot, common.PLOT_PX):
the plot, its text and its margins grow together, so what fitted there fits here. Browser zoom is no way
to do it: Plotly measures its box with getBoundingClientRect and a zoomed chart took the wrong width.
"""
from __future__ import annotations

import functools

import plotly.graph_objects as go

# Numbers in px wherever they appear: annotations' shifts and padding, axes' ticks and title standoffs,
# heatmap cell gaps, legends' and colour bars' spacings, every outline's and grid line's width.
PX_ANYWHERE = frozenset({
    "xshift", "yshift", "borderpad", "borderwidth", "arrowwidth", "standoff", "ticklen", "tickwidth",
    "linewidth", "gridwidth", "zerolinewidth", "xgap", "ygap", "tracegroupgap", "xpad", "ypad",
    "outlinewidth", "ticklabelstandoff", "ticklabelshift", "itemwidth"})
# A child object whose lengths are all in px: layout.margin, a title's pad.
PX_BOXES = frozenset({"margin", "pad"})
SIDES = frozenset({"l", "r", "t", "b", "pad"})


def scale_figure(fig: go.Figure, scale: float) -> go.Figure:
    """A new figure: `fig` with each length in px times `scale` (fig itself is left as it is: a shared
    figure is never mutated). scale 1 returns fig."""
    if scale == 1:
        return fig
    if not scale > 0:
        raise ValueError(f"scale_figure: the scale must be a positive number, not {scale!r}")
    spec = fig.to_plotly_json()
    # The expanded default template is most of validating a figure again; go.Figure applies the same default.
    template = spec["layout"].pop("template", None)
    layout = _scaled(spec["layout"], scale, "layout")
    for key in ("height", "width"):
        if isinstance(layout.get(key), (int, float)):
            layout[key] = round(layout[key] * scale)
    out = go.Figure(data=[_scaled(trace, scale, "trace") for trace in spec["data"]], layout=layout)
    if template is not None and template != _default_template():
        out.layout.template = template               # a figure's own template, kept as it was
    return out


@functools.cache
def _default_template() -> dict:
    return go.Figure().layout.template.to_plotly_json()


def _times(value, scale: float):
    """A length or a list of lengths (a marker size per point) times scale; anything else as it was."""
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)):
        return value * scale
    if isinstance(value, (list, tuple)):
        return [_times(v, scale) for v in value]
    return value


def _scaled(node, scale: float, name: str):
    """node (a plain JSON value reached by key `name`), with its px lengths scaled."""
    if isinstance(node, list):
        return [_scaled(item, scale, name) for item in node]
    if not isinstance(node, dict):
        return node
    return {key: _times(value, scale) if _in_px(node, key, name) else _scaled(value, scale, key)
            for key, value in node.items()}


def _in_px(node: dict, key: str, name: str) -> bool:
    """Whether node[key] is a length in px, node being reached by key `name`."""
    if key in PX_ANYWHERE:
        return True
    if key == "size":                          # a font's size, a marker's (a number or one per point)
        return name.endswith("font") or name == "marker"
    if key == "width":                         # a line's; a bar's width is in data units
        return name == "line"
    if name in PX_BOXES:
        return key in SIDES
    if key == "thickness":                     # a colour bar's, unless given as a fraction
        return node.get("thicknessmode", "pixels") == "pixels"
    if key == "len":
        return node.get("lenmode") == "pixels"
    if key in ("ax", "ay"):                    # an arrow's tail, in px from its head unless placed on an axis
        return name == "annotations" and node.get(f"{key}ref", "pixel") == "pixel"
    return False
