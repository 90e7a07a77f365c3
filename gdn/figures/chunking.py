"""Figures of the chunking page: affine maps, the in-chunk triangular matrices, recurrent vs chunked,
and kernel timing. Pure functions: arrays in, plotly Figure out.

Names follow the app's convention: tokens are counted from 1 (t = 1, 2, ...), key and value
dimensions are "dim 1", "dim 2", ...; callers pass the words, the numbers are made here.
"""
from __future__ import annotations

import html
import re

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from gdn.figures.common import DIVERGING, base_layout, horizontal_titles, symmetric_range
from gdn.figures.tables import Panel, panels_table

CROSSOVER_COLOR = "#f59e0b"


def wrap_title(title: str, width: int = 14) -> str:
    """A panel title on two lines when it is long, broken after its colon ("merged:<br>token 1, then 2"),
    so four panels' titles never run into each other."""
    visible = re.sub(r"<[^>]+>", "", title)                 # <sub> tags take no room
    for colon in (": ", "："):
        head, sep, tail = title.partition(colon)
        if sep and len(visible) > width:
            return f"{head}{sep.strip()}<br>{tail}"
    return title


def matrix_row_html(matrices: list[np.ndarray], titles: list[str], *, ticks: list[str], row_title: str,
                    col_title: str, alt: str = "") -> str:
    """Signed matrices side by side as HTML tables (gdn.figures.tables), one shared colour range so colours
    compare: the page draws this and its download is this (a Plotly heatmap row drawn anew for each slider
    move was most of the wait). matrices: square [n, n], rows and columns indexed alike; ticks: n labels
    (key dims, or the tokens' numbers counted from 1); the first panel names its rows."""
    zmax = symmetric_range(*matrices)
    panels = [Panel(wrap_title(title), z, ticks[:z.shape[0]], ticks[:z.shape[1]], row_labels=i == 0, axis=col_title,
                    corner=row_title if i == 0 else "", name=f"m{i + 1}")
              for i, (title, z) in enumerate(zip(titles, matrices))]
    return (f'<div class="gdn-figure gdn-matrices" role="figure" aria-label="{html.escape(alt)}">'
            + panels_table(panels, zmax, "gdn-tables square") + "</div>")


def fig_kernel_agreement(o_rec: np.ndarray, o_chunk: np.ndarray, chunk_size: int, *, titles: list[str],
                         token: str, value: str, font_size: int = 14) -> go.Figure:
    """Outputs [T, V] of both kernels and log10 |difference|, chunk boundaries as dashed lines.
    Columns are tokens t = 1..T, rows value dims 1..V."""
    T, V = o_rec.shape
    diff = np.log10(np.abs(o_rec - o_chunk) + 1e-300).clip(min=-18)
    zmax = symmetric_range(o_rec, o_chunk)
    fig = make_subplots(rows=1, cols=3, subplot_titles=titles, horizontal_spacing=0.07)
    every = max(1, int(np.ceil(T * font_size * 1.2 / 300)))  # flat tick labels that never crowd a ~300 px panel
    for col, (z, scale) in enumerate(((o_rec, "signed"), (o_chunk, "signed"), (diff, "log")), start=1):
        signed = scale == "signed"
        fig.add_trace(go.Heatmap(
            z=z.T, x=np.arange(1, T + 1), y=np.arange(1, V + 1),
            zmin=-zmax if signed else -18, zmax=zmax if signed else max(-8.0, float(diff.max())),
            colorscale=DIVERGING if signed else "Greys", showscale=not signed, xgap=1, ygap=1,
            colorbar=dict(title="log₁₀|Δ|", len=0.9, x=1.02), name=titles[col - 1],
            hovertemplate=f"{token} = %{{x}}, {value} %{{y}}: %{{z:.3g}}<extra>{titles[col - 1]}</extra>"),
            row=1, col=col)
        for boundary in range(chunk_size, T, chunk_size):   # between token `boundary` and the next
            fig.add_vline(x=boundary + 0.5, line=dict(color=CROSSOVER_COLOR, width=2, dash="dash"), row=1, col=col)
        fig.update_xaxes(title_text=token, row=1, col=col, tickvals=list(range(1, T + 1, every)), tickangle=0,
                         title_standoff=6)
        fig.update_yaxes(autorange="reversed", tickvals=list(range(1, V + 1)), showticklabels=col == 1,
                         title_text=value if col == 1 else None, title_standoff=6, row=1, col=col)
    fig.update_annotations(font_size=font_size + 1)
    fig = base_layout(fig, height=330, font_size=font_size)
    fig = fig.update_layout(margin=dict(l=20 + 3 * font_size, r=10, t=50, b=20 + 2 * font_size))
    return horizontal_titles(fig, font_size)


def log_range(values: np.ndarray, pad: float = 1.5) -> list[float]:
    """A log axis range (log10 units) that holds the positive values with a small margin, never more."""
    positive = np.asarray(values, dtype=float)
    positive = positive[np.isfinite(positive) & (positive > 0)]
    return [float(np.log10(positive.min() / pad)), float(np.log10(positive.max() * pad))]


def seconds_text(s: float) -> str:
    """0.001 -> '1 ms', 0.1 -> '100 ms', 1 -> '1 s' (tick labels people read without exponents)."""
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if s >= scale * 0.999:
            return f"{s / scale:g} {unit}"
    return f"{s:g} s"


def fig_timing(reference: dict[str, np.ndarray], live: dict[str, np.ndarray] | None, crossover: int | None, *,
               labels: dict[str, str], font_size: int = 14, height: int = 400) -> go.Figure:
    """Seconds per call against T on log-log axes: the shipped reference curve (dashed), the live
    measurement on top (solid) when there is one, and the crossover as a vertical line.

    reference, live: {"T": [n], "recurrent": [n], "chunk": [n]} seconds; labels: recurrent, chunk,
    reference, live, crossover, T, seconds. Both axes are set from the data (the line and its label
    are traces, not shapes or annotations, whose log-axis coordinates differ)."""
    fig = go.Figure()
    series = [(reference, labels["reference"], "dash", 0.55)] + ([(live, labels["live"], "solid", 1.0)] if live else [])
    for timing, source, dash, opacity in series:
        for name, color in (("recurrent", "#475569"), ("chunk", "#dc2626")):
            fig.add_trace(go.Scatter(
                x=timing["T"], y=timing[name], mode="lines+markers", name=f"{labels[name]} · {source}",
                line=dict(color=color, width=3, dash=dash), marker=dict(size=8), opacity=opacity,
                hovertemplate=f"{labels[name]} ({source})<br>T = %{{x}}<br>%{{y:.3g}} s<extra></extra>"))
    times = np.concatenate([t[n] for t, *_ in series for n in ("recurrent", "chunk")])
    lengths = np.concatenate([t["T"] for t, *_ in series])
    y_range, x_range = log_range(times), log_range(lengths, pad=1.3)
    if crossover is not None:
        lo, hi = 10 ** y_range[0], 10 ** y_range[1]
        fig.add_trace(go.Scatter(x=[crossover, crossover], y=[lo, hi], mode="lines", showlegend=False,
                                 hoverinfo="skip", line=dict(color=CROSSOVER_COLOR, width=2, dash="dot")))
        fig.add_trace(go.Scatter(x=[crossover], y=[hi / 1.25], mode="text", text=[f" {labels['crossover']}"],
                                 textposition="bottom right", showlegend=False, hoverinfo="skip",
                                 textfont=dict(size=font_size, color="#b45309")))
    T_ticks = [2 ** p for p in range(0, 20, 2) if x_range[0] <= p * np.log10(2) <= x_range[1]]
    fig.update_xaxes(type="log", range=x_range, title_text=labels["T"], tickvals=T_ticks,
                     ticktext=[f"{t // 1024}k" if t >= 1024 else str(t) for t in T_ticks])
    s_ticks = [10.0 ** p for p in range(-6, 3) if y_range[0] <= p <= y_range[1]]
    fig.update_yaxes(type="log", range=y_range, title_text=labels["seconds"], tickvals=s_ticks,
                     ticktext=[seconds_text(t) for t in s_ticks], automargin=True, title_standoff=8)
    fig.update_layout(legend=dict(orientation="h", yanchor="bottom", y=1.02, x=0, font=dict(size=font_size - 1)))
    fig = base_layout(fig, height=height, font_size=font_size)
    legend_rows = len(series)                                   # one row per source (the legend sits above the plot)
    # the legend hangs from the figure's top edge; under it, one row for the y title (horizontal_titles)
    fig.update_layout(legend=dict(yref="container", y=1, yanchor="top"),
                      margin=dict(l=30 + 3 * font_size, r=10, t=16 + legend_rows * (font_size + 14) + font_size + 8,
                                  b=20 + 2 * font_size))
    return horizontal_titles(fig, font_size)
