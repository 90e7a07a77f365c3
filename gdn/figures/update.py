"""Figures of the update page (a key's value changes): the shipped results, a live quick run, and how a
trained model's answer for a rewritten key moves from value to value. Arrays in, plotly Figure out; the
rules keep the recall page's colours; `labels` carries the translated words."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from gdn.figures.common import base_layout, fitted_titles, horizontal_titles
from gdn.figures.recall import RULE_DASH, legend_top
from gdn.rules import RULE_COLORS

OLD_DASH = "dot"                # the old-value rate, beside the accuracy's solid line
VALUE_SHADES = ("#9ca3af", "#6b7280", "#374151", "#111827")   # older values lighter; the latest is drawn in the rule's colour


def fig_update_results(right: np.ndarray, old: np.ndarray, seeds_right: np.ndarray, seeds_old: np.ndarray, *,
                       rules, layers, updates, names: dict[str, str], titles: list[str], labels: dict[str, str],
                       unsettled: np.ndarray | None = None, font_size: int = 14, height: int = 520) -> go.Figure:
    """right, old: [rules, layers, updates] mean over seeds of the main score (the latest value read right; at
    0 rewrites, the plain recall) and of the old-value rate (NaN at 0 rewrites); seeds_*: [..., S] every seed.
    Top row: the accuracy, bottom row: the old-value rate, one column per depth. A cell not settled gets an
    open marker."""
    titles, extra = fitted_titles(titles, font_size, spacing=0.08)
    fig = make_subplots(rows=2, cols=len(layers), subplot_titles=titles, shared_xaxes=True, shared_yaxes=True,
                        horizontal_spacing=0.08, vertical_spacing=0.2)
    unsettled = np.zeros(right.shape, bool) if unsettled is None else unsettled
    xs = np.arange(len(updates), dtype=float)
    for i, rule in enumerate(rules):
        nudge = (i - (len(rules) - 1) / 2) * 0.06
        for j in range(len(layers)):
            for row, mean, seeds in ((1, right, seeds_right), (2, old, seeds_old)):
                fig.add_trace(go.Scatter(
                    x=xs + nudge, y=mean[i, j] * 100, name=names[rule], legendgroup=rule,
                    showlegend=(row == 1 and j == 0), mode="lines+markers",
                    line=dict(color=RULE_COLORS[rule], width=3, dash=RULE_DASH.get(rule)),
                    marker=dict(size=10, color=RULE_COLORS[rule],
                                symbol=["circle-open" if u else "circle" for u in unsettled[i, j]],
                                line=dict(width=2, color=RULE_COLORS[rule])),
                    text=[labels["seeds_list"].format(seeds=" · ".join(f"{a * 100:.0f}" for a in s if np.isfinite(a)))
                          for s in seeds[i, j]],
                    hovertemplate=f"{names[rule]}<br>%{{y:.3~g}} %<br>%{{text}}<extra></extra>"), row=row, col=j + 1)
                S = seeds.shape[-1]
                fig.add_trace(go.Scatter(x=np.repeat(xs + nudge, S), y=seeds[i, j].reshape(-1) * 100, mode="markers",
                                         legendgroup=rule, showlegend=False, hoverinfo="skip",
                                         marker=dict(size=5, color=RULE_COLORS[rule], opacity=0.55)), row=row, col=j + 1)
    for j in range(len(layers)):
        fig.update_xaxes(tickvals=list(xs), ticktext=[str(u) for u in updates], range=[-0.4, len(updates) - 0.6],
                         row=2, col=j + 1, title_text=labels["updates"])
    fig.update_xaxes(zeroline=False)                  # x = 0 is the first setting, not an origin worth a line
    fig.update_yaxes(range=[-3, 103], title_text=labels["right_pct"], row=1, col=1)
    fig.update_yaxes(range=[-3, 103], title_text=labels["old_pct"], row=2, col=1)
    fig.update_annotations(font_size=font_size)
    fig.update_layout(legend=dict(orientation="h", yref="container", y=1, yanchor="top", x=0, xanchor="left"))
    fig = base_layout(fig, height=height, font_size=font_size).update_layout(
        margin=dict(l=60, t=legend_top(font_size, len(rules)) + round(1.25 * font_size * extra), b=50))
    return horizontal_titles(fig, font_size)


def fig_update_training(curves: dict[str, dict], *, names: dict[str, str], labels: dict[str, str], steps: int,
                        font_size: int = 14, height: int = 340) -> go.Figure:
    """curves: rule -> {"steps": [...], "updated": [...], "old": [...]} (fractions) of a quick run: the latest
    value read right (solid) and an old value named (dotted), per rule, as the evals arrive."""
    fig = go.Figure()
    for rule, c in curves.items():
        for what, dash in (("updated", None), ("old", OLD_DASH)):
            fig.add_trace(go.Scatter(x=c["steps"], y=np.asarray(c[what], float) * 100, mode="lines+markers",
                                     name=f"{names[rule]} · {labels[what]}", legendgroup=rule,
                                     line=dict(color=RULE_COLORS[rule], width=3 if dash is None else 2, dash=dash),
                                     marker=dict(size=7, color=RULE_COLORS[rule])))
    fig.update_xaxes(range=[0, steps * 1.02], title_text=labels["step"])
    fig.update_yaxes(range=[-3, 103], title_text=labels["share_pct"])
    fig.update_layout(legend=dict(orientation="h", yref="container", y=1, yanchor="top", x=0, xanchor="left"))
    fig = base_layout(fig, height=height, font_size=font_size).update_layout(
        margin=dict(l=60, t=legend_top(font_size, 2 * len(curves)) + 2 * font_size, b=50))
    return horizontal_titles(fig, font_size)


def fig_answer_paths(paths: dict[str, object], *, names: dict[str, str], titles: list[str], labels: dict[str, str],
                     font_size: int = 14, height: int = 360) -> go.Figure:
    """paths: rule -> update_inspect.AnswerPath of one key on one sequence. One panel per rule: x = the token
    after which the key is asked, y = the model's probability of each value the key has held (the latest in
    the rule's colour, older ones grey), a dotted line at each write."""
    titles, extra = fitted_titles(titles, font_size, spacing=0.06)
    fig = make_subplots(rows=1, cols=len(paths), subplot_titles=titles, shared_yaxes=True, horizontal_spacing=0.06)
    for j, (rule, path) in enumerate(paths.items()):
        n = len(path.values)
        for v in range(n):
            latest = v == n - 1
            color = RULE_COLORS[rule] if latest else VALUE_SHADES[min(v, len(VALUE_SHADES) - 1)]
            name = labels["value_latest" if latest else "value_old"].format(n=v + 1)
            fig.add_trace(go.Scatter(x=path.steps, y=path.probs[:, v] * 100, mode="lines", name=name,
                                     legendgroup=f"v{v}", showlegend=False,
                                     line=dict(color=color, width=3 if latest else 2, shape="hv", dash=None if latest else "dash"),
                                     hovertemplate=f"{name}<br>t %{{x}}<br>%{{y:.3~g}} %<extra></extra>"), row=1, col=j + 1)
        for v, at in enumerate(path.written_at):
            fig.add_vline(x=at, line=dict(color="#9ca3af", width=1, dash="dot"), row=1, col=j + 1)
            fig.add_annotation(x=at, y=103, text=labels["write_n"].format(n=v + 1), showarrow=False, yanchor="bottom",
                               font=dict(size=round(font_size * 0.8), color="#4b5563"), row=1, col=j + 1)
        fig.update_xaxes(title_text=labels["asked_after"], row=1, col=j + 1)
    fig.update_yaxes(range=[-3, 112], title_text=labels["prob_pct"], row=1, col=1)
    fig.update_xaxes(zeroline=False)
    fig.update_annotations(font_size=font_size)
    fig = base_layout(fig, height=height, font_size=font_size).update_layout(
        margin=dict(l=60, t=round(3 * font_size) + round(1.25 * font_size * extra), b=50), showlegend=False)
    return horizontal_titles(fig, font_size)
