"""Figures of the chunking page: affine maps, the in-chunk triangular matrices, recurrent vs chunked,
and kernel timing. Pure functions: arrays in, plotly Figure out."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from gdn.figures.common import DIVERGING, base_layout, symmetric_range
from gdn.lessons.fmt import cell_text


def fig_matrix_row(matrices: list[np.ndarray], titles: list[str], *, font_size: int = 14,
                   height: int = 330, row_label: str = "", col_label: str = "") -> go.Figure:
    """Annotated signed heatmaps side by side, one shared colour range so colours compare."""
    zmax = symmetric_range(*matrices)
    fig = make_subplots(rows=1, cols=len(matrices), subplot_titles=titles, horizontal_spacing=0.06)
    for i, z in enumerate(matrices, start=1):
        fig.add_trace(go.Heatmap(z=z, zmin=-zmax, zmax=zmax, zmid=0, colorscale=DIVERGING, showscale=False,
                                 xgap=1, ygap=1, text=cell_text(z), texttemplate="%{text}",
                                 textfont=dict(size=font_size), name=titles[i - 1],
                                 hovertemplate=f"{titles[i - 1]}<br>{row_label} %{{y}}, {col_label} %{{x}}: "
                                               "%{z:.4g}<extra></extra>"), row=1, col=i)
        fig.update_yaxes(autorange="reversed", dtick=1, row=1, col=i)
        fig.update_xaxes(dtick=1, row=1, col=i)
    fig.update_annotations(font_size=font_size + 1)
    return base_layout(fig, height=height, font_size=font_size)


def fig_kernel_agreement(o_rec: np.ndarray, o_chunk: np.ndarray, chunk_size: int, *, titles: list[str],
                         token: str, value: str, font_size: int = 14) -> go.Figure:
    """Outputs [T, V] of both kernels and log10 |difference|, chunk boundaries as dashed lines."""
    T = o_rec.shape[0]
    diff = np.log10(np.abs(o_rec - o_chunk) + 1e-300).clip(min=-18)
    zmax = symmetric_range(o_rec, o_chunk)
    fig = make_subplots(rows=1, cols=3, subplot_titles=titles, horizontal_spacing=0.08)
    for col, (z, scale) in enumerate(((o_rec, "signed"), (o_chunk, "signed"), (diff, "log")), start=1):
        signed = scale == "signed"
        fig.add_trace(go.Heatmap(
            z=z.T, zmin=-zmax if signed else -18, zmax=zmax if signed else max(-8.0, float(diff.max())),
            colorscale=DIVERGING if signed else "Greys", showscale=not signed, xgap=1, ygap=1,
            colorbar=dict(title="log₁₀|Δ|", len=0.9, x=1.02), name=titles[col - 1],
            hovertemplate=f"{token} %{{x}}, {value} %{{y}}: %{{z:.3g}}<extra>{titles[col - 1]}</extra>"),
            row=1, col=col)
        for boundary in range(chunk_size, T, chunk_size):
            fig.add_vline(x=boundary - 0.5, line=dict(color="#f59e0b", width=2, dash="dash"), row=1, col=col)
        fig.update_xaxes(title_text=token, row=1, col=col, dtick=1 if T <= 16 else None, title_standoff=4)
        fig.update_yaxes(autorange="reversed", dtick=1, row=1, col=col)
    fig.update_annotations(font_size=font_size + 1)
    return base_layout(fig, height=330, font_size=font_size)


def fig_timing(timing: dict[str, np.ndarray], crossover: int | None, *, labels: dict[str, str],
               font_size: int = 14) -> go.Figure:
    """Seconds per call vs T on log-log axes for both kernels, the crossover marked."""
    fig = go.Figure()
    for name, color in (("recurrent", "#64748b"), ("chunk", "#dc2626")):
        fig.add_trace(go.Scatter(x=timing["T"], y=timing[name], mode="lines+markers", name=labels[name],
                                 line=dict(color=color, width=3), marker=dict(size=9),
                                 hovertemplate=f"{labels[name]}<br>T = %{{x}}<br>%{{y:.3f}} s<extra></extra>"))
    if crossover is not None:
        fig.add_vline(x=crossover, line=dict(color="#f59e0b", width=2, dash="dash"),
                      annotation_text=labels["crossover"], annotation_position="top left")
    fig.update_layout(xaxis=dict(type="log", title=labels["T"]), yaxis=dict(type="log", title=labels["seconds"]),
                      legend=dict(orientation="h", y=1.12, x=0))
    return base_layout(fig, height=380, font_size=font_size)
