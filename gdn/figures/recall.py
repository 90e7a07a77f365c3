"""Figures of the recall page: the shipped MQAR results, a live training run, the write as a gradient
step, and the decay gate's initial half-lives. Arrays in, plotly Figure out. `labels` carries the
translated words. The gates of a trained model reuse gdn.figures.real_model.fig_head_detail."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from gdn.figures.common import DIVERGING, base_layout, fitted_titles, horizontal_titles, log_ticks, symmetric_range
from gdn.rules import RULE_COLORS
from gdn.units import cell_text

RULE_DASH = {"softmax": "dot"}
DODGE = 1.07           # the results figure moves rule i of n by DODGE^(i - (n-1)/2) along its log pairs axis


def legend_top(font_size: int, entries: int = 2) -> int:
    """Top margin for a legend row above the subplot titles; at lecture sizes five rule names wrap to a
    second row (1280 px), which ran into the titles, so five or more entries get room for two rows."""
    return round(4.5 * font_size) + (round(1.8 * font_size) if font_size > 16 and entries >= 5 else 0)


def fig_results(acc: np.ndarray, *, rules, widths, pairs, names: dict[str, str], titles: list[str],
                labels: dict[str, str], seeds: np.ndarray | None = None, status: np.ndarray | None = None,
                status_names: dict[str, str] | None = None, chance: float | None = None, font_size: int = 14,
                height: int = 400) -> go.Figure:
    """acc: [rules, widths, pairs] best-lr mean accuracy over seeds (NaN: not run); seeds [rules, widths,
    pairs, S] every seed's accuracy at that rate, drawn as small dots beside the mean so a cell whose seeds
    disagree shows it; status [rules, widths, pairs] of results.STATUSES: a cell not settled, or whose
    seeds disagree, has an open marker. One panel per width, x = pairs; a dashed line where the pairs equal
    the width (past it a width-d memory holds more pairs than it has dims) and a dotted one at chance.
    A title wider than its panel on a 1280 px projector is broken into lines (three widths at 22 px ran into
    each other), the top margin growing by the lines added."""
    titles, extra_lines = fitted_titles(titles, font_size, spacing=0.06)
    fig = make_subplots(rows=1, cols=len(widths), subplot_titles=titles, shared_yaxes=True, horizontal_spacing=0.06)
    status = np.full(acc.shape, "settled", dtype=object) if status is None else status
    status_names = status_names or {}
    for i, rule in enumerate(rules):
        xs = [n * DODGE ** (i - (len(rules) - 1) / 2) for n in pairs]      # each rule nudged sideways (log axis)
        for j in range(len(widths)):
            cell_seeds = [" · ".join(f"{a * 100:.0f}" for a in seeds[i, j, k] if np.isfinite(a)) if seeds is not None
                          else "" for k in range(len(pairs))]
            text = [labels["seeds_list"].format(seeds=t) + f"<br>{status_names.get(st, st)}"
                    for t, st in zip(cell_seeds, status[i, j])]
            if j == 0:                      # the legend's own entry: a filled marker, whatever the first cell's status
                fig.add_trace(go.Scatter(x=[None], y=[None], name=names[rule], legendgroup=rule, mode="lines+markers",
                                         line=dict(color=RULE_COLORS[rule], width=3, dash=RULE_DASH.get(rule)),
                                         marker=dict(size=10, color=RULE_COLORS[rule])), row=1, col=1)
            fig.add_trace(go.Scatter(
                x=xs, y=acc[i, j] * 100, name=names[rule], legendgroup=rule, showlegend=False, mode="lines+markers",
                line=dict(color=RULE_COLORS[rule], width=3, dash=RULE_DASH.get(rule)),
                marker=dict(size=10, symbol=["circle" if st in ("settled", "at_chance") else "circle-open" for st in status[i, j]],
                            line=dict(width=2, color=RULE_COLORS[rule])),
                customdata=np.asarray(pairs, float), text=text,
                hovertemplate=f"{names[rule]}<br>{labels['pairs']} %{{customdata:.0f}}<br>{labels['accuracy']} "
                              f"%{{y:.3~g}} %<br>%{{text}}<extra></extra>"),
                row=1, col=j + 1)
            if seeds is not None:                                           # every seed, a small dot by its mean
                S = seeds.shape[-1]
                fig.add_trace(go.Scatter(
                    x=np.repeat(xs, S), y=seeds[i, j].reshape(-1) * 100, mode="markers", legendgroup=rule,
                    showlegend=False, hoverinfo="skip", marker=dict(size=5, color=RULE_COLORS[rule], opacity=0.55)),
                    row=1, col=j + 1)
    for j, d in enumerate(widths):
        fig.update_xaxes(type="log", tickvals=list(pairs), ticktext=[str(p) for p in pairs],
                         title_text=labels["pairs"], row=1, col=j + 1)
        if min(pairs) <= d <= max(pairs):
            fig.add_vline(x=d, line=dict(color="#9ca3af", width=1.5, dash="dash"), row=1, col=j + 1)
        if chance is not None:
            fig.add_hline(y=chance * 100, line=dict(color="#9ca3af", width=1, dash="dot"), row=1, col=j + 1)
    fig.update_yaxes(range=[-3, 103], title_text=labels["accuracy_pct"], row=1, col=1)
    fig.update_annotations(font_size=font_size)
    fig.update_layout(legend=dict(orientation="h", yref="container", y=1, yanchor="top", x=0, xanchor="left"))
    fig = base_layout(fig, height=height, font_size=font_size).update_layout(
        margin=dict(l=60, t=legend_top(font_size, len(rules)) + round(1.25 * font_size * extra_lines), b=50))
    return horizontal_titles(fig, font_size)


def fig_training(curves: dict[str, dict], *, names: dict[str, str], titles: list[str], labels: dict[str, str],
                 steps: int, font_size: int = 14, height: int = 340) -> go.Figure:
    """curves: rule -> {"loss": [step losses], "acc_steps": [...], "acc": [...]}. Left: loss; right: accuracy."""
    fig = make_subplots(rows=1, cols=2, subplot_titles=titles, horizontal_spacing=0.1)
    for rule, c in curves.items():
        color = RULE_COLORS[rule]
        fig.add_trace(go.Scatter(x=list(range(1, len(c["loss"]) + 1)), y=c["loss"], name=names[rule], legendgroup=rule,
                                 mode="lines", line=dict(color=color, width=2)), row=1, col=1)
        fig.add_trace(go.Scatter(x=c["acc_steps"], y=np.asarray(c["acc"]) * 100, name=names[rule], legendgroup=rule,
                                 showlegend=False, mode="lines+markers", line=dict(color=color, width=3)), row=1, col=2)
    for col in (1, 2):
        fig.update_xaxes(range=[0, steps], title_text=labels["step"], row=1, col=col)
    fig.update_yaxes(title_text=labels["loss"], rangemode="tozero", row=1, col=1)
    fig.update_yaxes(title_text=labels["accuracy_pct"], range=[0, 102], row=1, col=2)
    fig.update_annotations(font_size=font_size)
    fig.update_layout(legend=dict(orientation="h", yref="container", y=1, yanchor="top", x=0, xanchor="left"))
    fig = base_layout(fig, height=height, font_size=font_size).update_layout(margin=dict(l=60, t=legend_top(font_size), b=50))
    return horizontal_titles(fig, font_size)


def fig_recall(recall: list[np.ndarray], *, titles: list[str], labels: dict[str, str], font_size: int = 14,
               height: int = 300) -> go.Figure:
    """recall: per layer [N] cos(S^T k_i, v_i) of each stored pair."""
    fig = make_subplots(rows=1, cols=len(recall), subplot_titles=titles, shared_yaxes=True, horizontal_spacing=0.06)
    for j, r in enumerate(recall):
        fig.add_trace(go.Bar(x=[f"{labels['pair']} {i + 1}" for i in range(len(r))], y=r, marker_color="#059669",
                             showlegend=False, hovertemplate="%{x}: cos = %{y:.3~g}<extra></extra>"), row=1, col=j + 1)
    fig.update_yaxes(range=[min(0.0, float(np.min(np.concatenate(recall)))) - 0.02, 1.02],
                     title_text=labels["recall"], row=1, col=1)
    fig.update_annotations(font_size=font_size)
    fig = base_layout(fig, height=height, font_size=font_size).update_layout(margin=dict(l=60, b=60))
    return horizontal_titles(fig, font_size)


def fig_write_step(tables: list[np.ndarray], *, titles: list[str], labels: dict[str, str], font_size: int = 14,
                   height: int = 270) -> go.Figure:
    """tables: [K, V] matrices side by side (S before, the gradient, -beta x gradient, S after), one colour scale."""
    zmax = symmetric_range(*tables)
    fig = make_subplots(rows=1, cols=len(tables), subplot_titles=titles, horizontal_spacing=0.05)
    for j, z in enumerate(tables):
        K, V = z.shape
        text = [[f"{x:.2f}".replace("-0.00", "0.00") for x in row] for row in z]
        fig.add_trace(go.Heatmap(z=z, x=[f"{labels['value']} {i + 1}" for i in range(V)],
                                 y=[f"{labels['key']} {i + 1}" for i in range(K)], zmin=-zmax, zmax=zmax, zmid=0,
                                 colorscale=DIVERGING, showscale=False, text=text, texttemplate="%{text}",
                                 textfont=dict(size=font_size + 2), xgap=2, ygap=2,
                                 hovertemplate="%{y} · %{x}: %{z:.3~g}<extra></extra>"), row=1, col=j + 1)
        fig.update_yaxes(autorange="reversed", showticklabels=j == 0, row=1, col=j + 1)
    fig.update_annotations(font_size=font_size)
    fig = base_layout(fig, height=height, font_size=font_size).update_layout(margin=dict(l=70, t=70, b=40))
    return horizontal_titles(fig, font_size)


def fig_half_lives(series: dict[str, np.ndarray], *, labels: dict[str, str], font_size: int = 14,
                   height: int = 330) -> go.Figure:
    """series: name -> half-lives in tokens (one per head). Histograms on a log axis, shared bins."""
    colors = ["#dc2626", "#2563eb", "#059669"]
    edges = np.logspace(-2, 3.5, 34)
    fig = go.Figure()
    centres = np.sqrt(edges[:-1] * edges[1:])
    shown = cell_text(np.array([float(f"{c:.3g}") for c in centres]), digits=4)   # 3 digits, no exponent: 2370
    for (name, h), color in zip(series.items(), colors):
        counts, _ = np.histogram(np.clip(h, edges[0], edges[-1]), bins=edges)
        fig.add_trace(go.Bar(x=centres, y=counts / max(1, len(h)) * 100, width=np.diff(edges) * 0.9, name=name,
                             marker_color=color, opacity=0.7, customdata=shown,
                             hovertemplate=f"{name}<br>{labels['half_life']} ≈ %{{customdata}}<br>%{{y:.3~g}} %<extra></extra>"))
    fig.add_vline(x=1, line=dict(color="#111827", width=1, dash="dot"))
    fig.update_xaxes(type="log", title_text=labels["half_life"], **log_ticks(edges[0], edges[-1], steps=(1,)))
    fig.update_yaxes(title_text=labels["share_pct"])
    fig.update_layout(barmode="overlay", legend=dict(orientation="h", yref="container", y=1, yanchor="top", x=0))
    fig = base_layout(fig, height=height, font_size=font_size).update_layout(margin=dict(l=60, t=60, b=50))
    return horizontal_titles(fig, font_size)
