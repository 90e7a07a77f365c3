"""A figure drawn for 1280x720, shown on a larger lecture screen (gdn/figures/scale.py): every length in pixels
grows by the screen's scale, nothing else changes; the scale a tab reports is made safe before use
(app_pages/_support/screen.py)."""
import numpy as np
import plotly.graph_objects as go
import pytest

from gdn.figures.cost import fig_cost
from gdn.figures.scale import scale_figure
from gdn.lessons import cost
from app_pages._support.screen import valid


def cost_figure() -> go.Figure:
    """The cost page's chart at lecture size: fonts, a margin, annotations shifted in px, lines, a legend."""
    T = np.geomspace(1, 2 ** 18, 50)
    cfg = cost.load_sizes()["Qwen3.5-0.8B"]
    return fig_cost(T, cost.memory_curves(cfg, T), [(256.0, "a", "#000"), (768.0, "b", "#000")],
                    labels={k: k for k in ("state", "kv", "hybrid", "full", "x", "y")}, font_size=22, height=640)


def test_a_larger_screen_scales_every_pixel_length_and_leaves_the_data():
    fig = cost_figure()
    before = fig.to_plotly_json()
    big = scale_figure(fig, 1.5)
    assert fig.to_plotly_json() == before                                  # a shared figure is never changed
    assert big.layout.height == 960 and big.layout.font.size == 33
    for side in "lrtb":
        assert getattr(big.layout.margin, side) == pytest.approx(1.5 * getattr(fig.layout.margin, side))
    assert [a.font.size for a in big.layout.annotations if a.font.size] == \
        [1.5 * a.font.size for a in fig.layout.annotations if a.font.size]
    assert [a.yshift for a in big.layout.annotations] == [a.yshift and 1.5 * a.yshift for a in fig.layout.annotations]
    assert [a.text for a in big.layout.annotations] == [a.text for a in fig.layout.annotations]
    for old, new in zip(fig.data, big.data):
        assert new.line.width == pytest.approx(1.5 * old.line.width) if old.line.width else new.line.width is None
        assert np.array_equal(new.x, old.x) and np.array_equal(new.y, old.y)
    assert big.layout.xaxis.type == fig.layout.xaxis.type and big.layout.xaxis.range == fig.layout.xaxis.range


def test_what_is_not_in_pixels_stays():
    """A bar's width is in data units, a colour bar's length a fraction of the plot, an arrow placed on the
    axes in data units: all kept; a marker's size (one per point too) and a colour bar's thickness grow."""
    fig = go.Figure([go.Bar(x=[1, 2], y=[3, 4], width=0.4, textfont=dict(size=[10, 12])),
                     go.Scatter(x=[1], y=[2], marker=dict(size=[6], line=dict(width=2))),
                     go.Heatmap(z=[[1, 2]], xgap=2, colorbar=dict(len=0.5, thickness=20))],
                    layout=dict(annotations=[dict(x=1, y=1, ax=10, ay=-20, text="a"),
                                             dict(x=1, y=1, ax=2, ay=3, axref="x", ayref="y", text="b")]))
    big = scale_figure(fig, 2)
    bar, dots, heat = big.data
    assert bar.width == 0.4 and list(bar.textfont.size) == [20, 24]
    assert list(dots.marker.size) == [12] and dots.marker.line.width == 4
    assert heat.xgap == 4 and heat.colorbar.len == 0.5 and heat.colorbar.thickness == 40
    (pixels, on_axes) = big.layout.annotations
    assert (pixels.ax, pixels.ay) == (20, -40) and (on_axes.ax, on_axes.ay) == (2, 3)


def test_scale_one_is_the_figure_itself_and_a_bad_scale_is_refused():
    fig = cost_figure()
    assert scale_figure(fig, 1) is fig
    for bad in (0, -1.5, float("nan")):
        with pytest.raises(ValueError, match="positive number"):
            scale_figure(fig, bad)


@pytest.mark.parametrize("reported, used", [("1.5", 1.5), (2, 2.0), ("1.3", 1.25), ("0.5", 1.0), ("40", 3.0),
                                            (None, 1.0), ("", 1.0), ("nan", 1.0), ("inf", 1.0), ("1e999", 1.0),
                                            ("x; path=/", 1.0), ([1.5], 1.0)])
def test_a_reported_scale_is_eighths_from_1_to_3(reported, used):
    """The cookie and the tab's report are outside text: anything not a number is 1, a number is clamped
    and rounded down to eighths (few distinct figures to cache)."""
    assert valid(reported) == used
