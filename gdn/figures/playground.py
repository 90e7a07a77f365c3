"""The playground's Plotly figure: capacity (the overwrite, half-life, repeated-writes and key-norm toys are
HTML answered in the browser: playground_html.py).

Pure builders: arrays from gdn.lessons.playground in, a plotly Figure out; every label arrives translated.
"""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from gdn.figures.common import (
    base_layout,
    from_skeleton,
    horizontal_titles,
    legend_rows,
    log_ticks,
    text_px,
    wrapped,
)
from gdn.lessons.compare import rule_of

PART_COLORS = ("#f59e0b", "#8b5cf6", "#94a3b8", "#0f172a", "#14b8a6")
CHART_EM = 34           # the capacity chart's narrowest width beside its sliders, in font sizes (1280 px lecture: ~770 px)
ROW_EM = 1.9            # a legend row's height, in font sizes


def _legends_top(fig: go.Figure, rules: list[str], parts: list[str], font_size: int, height: int) -> tuple[go.Figure, int]:
    """Two legends in the figure's top rows, over the subplot titles, never on them: the rules' lines, then
    the split's bars under them (one legend at a fixed height above the plots ran into the titles once it
    wrapped); and the top margin that holds their rows and the titles under them."""
    width = CHART_EM * font_size
    first, second = legend_rows(rules, font_size, width), legend_rows(parts, font_size, width)
    row = dict(orientation="h", xref="container", yref="container", x=0, xanchor="left", yanchor="top")
    fig.update_layout(legend=dict(row, y=1), legend2=dict(row, y=1 - first * ROW_EM * font_size / height))
    return fig, round(font_size * (ROW_EM * (first + second) + 2.2))


def widest(labels: list[str], font_size: int) -> int:
    """About how wide the longest label is drawn, in px."""
    return int(max((text_px(label, font_size) for label in labels), default=0))


def fig_capacity(Ns: np.ndarray, curves: dict[str, np.ndarray], K: int, N_sel: int, *,
                 rule_titles: dict[str, str], split_labels: list[str], labels: dict[str, str],
                 font_size: int = 14, height: int = 440) -> go.Figure:
    """curves: rule -> [len(Ns), 3] mean relative error (all, recent, oldest) per N.
    Left: mean error vs N on a log axis with N = d_k marked; right: the split at N_sel.
    Built once per labels, sizes and selection (from_skeleton); a slider move swaps only the numbers."""
    i = int(np.flatnonzero(np.asarray(Ns) == N_sel)[0])
    top = max(1.0, max(float(c[:, 0].max()) for c in curves.values())) * 1.08
    split = [[curves[r][i, j] for r in curves] for j in range(len(split_labels))]
    def build():
        fig = make_subplots(rows=1, cols=2, column_widths=[0.6, 0.4], horizontal_spacing=0.1,
                            subplot_titles=(labels["curve_title"], labels["split_title"]))
        for rule, c in curves.items():
            fig.add_trace(go.Scatter(x=Ns, y=c[:, 0], mode="lines+markers", name=rule_titles[rule],
                                     line=dict(color=rule_of(rule).colour, width=3), legendgroup=rule,
                                     hovertemplate="N=%{x}: %{y:.1%}<extra></extra>"), row=1, col=1)
        for x, text, style in ((K, labels["knee"], dict(color="#0f172a", dash="dash", width=2)),
                               (N_sel, "", dict(color="#f59e0b", width=6))):     # lines as traces: exact on log axes
            fig.add_trace(go.Scatter(x=[x, x], y=[0, top], mode="lines+text", text=["", text], line=style,
                                     textposition="bottom left", showlegend=False, hoverinfo="skip",
                                     opacity=1.0 if text else 0.4, textfont=dict(size=font_size)), row=1, col=1)
        fig.update_xaxes(type="log", title_text=labels["N"], row=1, col=1, **log_ticks(min(Ns), max(Ns)))
        fig.update_yaxes(tickformat=".0%", title_text=labels["error"], rangemode="tozero", row=1, col=1)
        for j, name in enumerate(split_labels):
            ys = split[j]
            fig.add_trace(go.Bar(x=[rule_titles[r] for r in curves], y=ys, name=name, marker_color=PART_COLORS[j + 2], legend="legend2",
                                 text=[f"{y:.0%}" for y in ys], textposition="outside", constraintext="none", cliponaxis=False,
                                 textfont=dict(size=font_size - 2)),
                          row=1, col=2)
        fig.update_yaxes(tickformat=".0%", rangemode="tozero", row=1, col=2)
        names = [rule_titles[r] for r in curves]               # horizontal, on as many lines as they need
        fig.update_xaxes(tickangle=0, tickvals=names, ticktext=[wrapped(n) for n in names], row=1, col=2)
        fig.update_layout(barmode="group")
        fig.update_annotations(font_size=font_size + 1)
        fig, margin_top = _legends_top(base_layout(fig, height=height, font_size=font_size),
                                       [rule_titles[r] for r in curves], list(split_labels), font_size, height)
        fig.update_layout(margin=dict(l=70, r=20, t=margin_top, b=max(60, 3 * font_size + 14)))
        return horizontal_titles(fig, font_size)

    key = ("capacity", tuple(np.asarray(Ns).tolist()), tuple(curves), tuple(sorted(rule_titles.items())),
           tuple(split_labels), tuple(sorted(labels.items())), K, N_sel, font_size, height)
    data = [{"y": c[:, 0]} for c in curves.values()] + [{"y": [0, top]}, {"y": [0, top]}]
    data += [{"y": ys, "text": [f"{y:.0%}" for y in ys]} for ys in split]
    return from_skeleton(key, build, data)
