"""The 2-D view of one delta-rule write: keys on the left plane, values and reads on the right."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from gdn.figures.common import base_layout, horizontal_titles
from gdn.lessons.geometry import Scene

K1, K2, ALONG, ACROSS, ERR = "#1d4ed8", "#f59e0b", "#dc2626", "#16a34a", "#dc2626"


def _arrow(fig, start, end, color, *, panel: int, width: float = 3, dash: bool = False, text: str = "",
           font_size: int = 14) -> None:
    """An arrow from start to end ([2] each) in panel 1 (keys) or 2 (values), labelled at its tip."""
    x, y = ("x", "y") if panel == 1 else ("x2", "y2")
    fig.add_annotation(x=end[0], y=end[1], ax=start[0], ay=start[1], xref=x, yref=y, axref=x, ayref=y,
                       showarrow=True, arrowhead=2, arrowsize=1.2, arrowwidth=width, arrowcolor=color,
                       opacity=0.45 if dash else 1.0, text="")
    if text:
        shift = np.asarray(end, float) * 0.12 + np.array([0.0, 0.06])
        fig.add_annotation(x=end[0] + shift[0], y=end[1] + shift[1], xref=x, yref=y, text=text, showarrow=False,
                           font=dict(color=color, size=font_size))


def _segment(fig, a, b, color, *, panel: int, name: str, dash: str = "dot", width: float = 3, opacity: float = 1.0,
             legend: bool = False) -> None:
    fig.add_trace(go.Scatter(x=[a[0], b[0]], y=[a[1], b[1]], mode="lines", line=dict(color=color, width=width, dash=dash),
                             opacity=opacity, name=name, hoverinfo="name", showlegend=legend), row=1, col=panel)


def fig_write_2d(s: Scene, *, labels: dict[str, str], font_size: int = 14, height: int = 460) -> go.Figure:
    """labels: key_plane, value_plane (panel titles), k1, k2, v1, v2, along, across, read1, read2, angle
    (with {deg} and {cos}), interference (with {x})."""
    fig = make_subplots(rows=1, cols=2, subplot_titles=(labels["key_plane"], labels["value_plane"]),
                        horizontal_spacing=0.08)
    circle = np.linspace(0, 2 * np.pi, 181)
    fig.add_trace(go.Scatter(x=np.cos(circle), y=np.sin(circle), mode="lines", line=dict(color="#cbd5e1", width=1),
                             hoverinfo="skip", showlegend=False), row=1, col=1)
    # keys, and k1 split into the part the write rewrites (along k2) and the part it leaves alone
    _segment(fig, (0, 0), s.along, ALONG, panel=1, name=labels["along"], width=16, dash="solid", opacity=0.35, legend=True)
    _segment(fig, s.along, s.k1, ACROSS, panel=1, name=labels["across"], width=4, legend=True)
    _arrow(fig, (0, 0), s.k1, K1, panel=1, text=labels["k1"], font_size=font_size)
    _arrow(fig, (0, 0), s.k2, K2, panel=1, text=labels["k2"], font_size=font_size)
    a1, a2 = np.arctan2(s.k1[1], s.k1[0]), np.arctan2(s.k2[1], s.k2[0])
    sweep = (a2 - a1 + np.pi) % (2 * np.pi) - np.pi                 # the short way round, signed
    arc = a1 + np.linspace(0, sweep, 40)
    fig.add_trace(go.Scatter(x=0.3 * np.cos(arc), y=0.3 * np.sin(arc), mode="lines", line=dict(color="#475569", width=2),
                             hoverinfo="skip", showlegend=False), row=1, col=1)
    mid = a1 + sweep / 2
    fig.add_annotation(x=0.5 * np.cos(mid), y=0.5 * np.sin(mid), xref="x", yref="y", showarrow=False,
                       text=labels["angle"].format(deg=f"{s.angle:.0f}", cos=f"{s.cos:.2f}"),
                       font=dict(size=font_size - 2, color="#334155"), bgcolor="rgba(255,255,255,0.8)")
    # values: the targets, and each key's read before (faint) and after (solid) the write
    for v, name, color, where in ((s.v1, labels["v1"], K1, "bottom right"), (s.v2, labels["v2"], K2, "middle left")):
        fig.add_trace(go.Scatter(x=[v[0]], y=[v[1]], mode="markers+text", text=[name + " "], textposition=where,
                                 marker=dict(size=18, symbol="circle-open", color=color, line=dict(width=3)),
                                 textfont=dict(color=color, size=font_size), hoverinfo="skip", showlegend=False),
                      row=1, col=2)
    before1, after1 = s.read_k1
    before2, after2 = s.read_k2
    _arrow(fig, (0, 0), before2, K2, panel=2, dash=True, width=2)
    _arrow(fig, (0, 0), after2, K2, panel=2, text=labels["read2"], font_size=font_size)
    _arrow(fig, (0, 0), after1, K1, panel=2, text=labels["read1"], font_size=font_size)
    if s.interference > 1e-9:
        _segment(fig, before1, after1, ERR, panel=2, name=labels["interference"].format(x=f"{s.interference:.2f}"))
        fig.add_annotation(x=(before1[0] + after1[0]) / 2, y=-0.25, xref="x2", yref="y2", showarrow=False,
                           font=dict(color=ERR, size=font_size - 2), bgcolor="rgba(255,255,255,0.8)",
                           text=labels["interference"].format(x=f"{s.interference:.2f}"))
    for i in (1, 2):
        fig.update_xaxes(range=[-1.45, 1.45], zeroline=True, zerolinecolor="#94a3b8", showgrid=True,
                         gridcolor="#f1f5f9", title_text=labels["dim1"], row=1, col=i)
        fig.update_yaxes(range=[-1.3, 1.45], zeroline=True, zerolinecolor="#94a3b8", showgrid=True,
                         gridcolor="#f1f5f9", scaleanchor="x" if i == 1 else "x2", title_text=labels["dim2"],
                         row=1, col=i)
    fig.update_annotations(selector=dict(text=labels["key_plane"]), font_size=font_size)
    fig.update_annotations(selector=dict(text=labels["value_plane"]), font_size=font_size)
    fig = base_layout(fig, height=height, font_size=font_size)
    fig.update_layout(margin=dict(l=50, r=20, t=50, b=90), legend=dict(orientation="h", x=0, y=0, yref="container",
                                                                       yanchor="bottom", font_size=font_size - 2))
    return horizontal_titles(fig, font_size)
