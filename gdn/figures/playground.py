"""The playground's Plotly figures: overwrite vs blur and capacity (the half-life, repeated-writes and
key-norm toys are HTML answered in the browser: playground_html.py).

Pure builders: arrays from gdn.lessons.playground in, a plotly Figure out; every label arrives translated.
"""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from gdn.figures.common import (
    DIVERGING,
    base_layout,
    from_skeleton,
    horizontal_titles,
    numbered,
    symmetric_range,
    text_px,
    wrapped,
)
from gdn.units import cell_text

RULE_COLORS = {"linear": "#64748b", "delta": "#1d4ed8", "gated": "#dc2626"}
PART_COLORS = ("#f59e0b", "#8b5cf6", "#94a3b8", "#0f172a", "#14b8a6")


def _legend_top(fig: go.Figure) -> go.Figure:
    return fig.update_layout(legend=dict(orientation="h", yanchor="bottom", y=1.08, x=0))


def widest(labels: list[str], font_size: int) -> int:
    """About how wide the longest label is drawn, in px."""
    return int(max((text_px(label, font_size) for label in labels), default=0))


def fig_overwrite(readout: np.ndarray, target: np.ndarray, old: np.ndarray, along: np.ndarray, error: np.ndarray, *,
                  rule_titles: list[str], part_labels: list[str], total_label: str, row_labels: list[str],
                  titles: tuple[str, str], value_axis: str = "", bars_axis: str = "", font_size: int = 14,
                  height: int = 420) -> go.Figure:
    """readout: [3, V] per rule; target, old: [V]; along: [3 rules, 3 parts] signed components of the
    error's parts along the error (gdn.lessons.playground.Overwrite.along); error: [3].
    Left: per rule a staircase (a waterfall, drawn sideways): each part is a bar that starts where the one
    above it ended, right when it adds to the error, left when it takes away, and under them the total as a
    bar from zero, which ends where the last step does: the total is visibly the sum. Right: old value, target and each
    rule's readout as rows. Built once per labels and size (from_skeleton); a slider move swaps only the numbers."""
    rows = np.vstack([old, target, readout])                           # [5, V]
    zmax, V = symmetric_range(rows), rows.shape[1]
    starts = np.hstack([np.zeros((len(along), 1)), np.cumsum(along, axis=1)[:, :-1]])     # [3 rules, 3 parts]
    # a step under 5 % is too thin to carry a label without crowding its neighbours' (its hover still says it)
    part_text = [[f"{b:+.0%}" if abs(b) >= 0.05 else "" for b in along[:, j]] for j in range(len(part_labels))]
    error_text = [f"{e:.0%}" for e in error]
    cells = cell_text(rows, 1) if V <= 8 else None
    ends = np.concatenate([starts.ravel(), (starts + along).ravel(), error, [0.0]])
    span = max(float(ends.max() - ends.min()), 0.1)
    reach = [min(0.0, float(ends.min()) - 0.3 * span), float(ends.max()) + 0.3 * span]   # room for the labels
    # Horizontal bars, one row each: every label has the room right of its bar's end, beside no other label,
    # at the page's size (never shrunk: constraintext off, uniformtext "show" below)
    outside = dict(orientation="h", textposition="outside", constraintext="none", cliponaxis=False,
                   textfont=dict(size=font_size - 1))

    def build():
        fig = make_subplots(rows=1, cols=2, column_widths=[0.55, 0.45], horizontal_spacing=0.12,
                            subplot_titles=titles)
        for j, label in enumerate(part_labels):
            fig.add_trace(go.Bar(y=rule_titles, x=along[:, j], base=starts[:, j], name=label, marker_color=PART_COLORS[j],
                                 offsetgroup=str(j), text=part_text[j], **outside,
                                 hovertemplate=f"{label}: %{{x:+.1%}}<extra></extra>"), row=1, col=1)
        fig.add_trace(go.Bar(y=rule_titles, x=error, base=np.zeros_like(error), name=total_label, offsetgroup="total",
                             marker_color=PART_COLORS[3], text=error_text, **outside,
                             hovertemplate=f"{total_label}: %{{x:.1%}}<extra></extra>"), row=1, col=1)
        # two unseen points that stretch the axis past the longest bar, so the label beyond its end has room
        fig.add_trace(go.Scatter(y=[rule_titles[0]] * 2, x=reach, mode="markers", marker=dict(opacity=0), showlegend=False,
                                 hoverinfo="skip"), row=1, col=1)
        fig.add_trace(go.Heatmap(z=rows, y=row_labels, x=numbered(V),
                                 zmid=0, zmax=zmax, zmin=-zmax,
                                 colorscale=DIVERGING, showscale=False, xgap=2, ygap=2,
                                 text=cells, texttemplate="%{text}",
                                 textfont=dict(size=font_size), hovertemplate="%{y}, %{x}: %{z:.3~g}<extra></extra>"),
                      row=1, col=2)
        fig.update_yaxes(autorange="reversed", side="right", row=1, col=2)   # row names right: clear of the bars' labels
        # the title below the tick labels with room to spare: at the lecture font it sat on them
        fig.update_xaxes(type="category", title_text=value_axis, title_standoff=10, automargin=True, row=1, col=2)
        fig.update_xaxes(tickformat=".0%", zeroline=True, zerolinewidth=2, zerolinecolor="#334155", title_text=bars_axis,
                         title_standoff=2, row=1, col=1)
        fig.update_yaxes(autorange="reversed", row=1, col=1)                 # rules top to bottom, steps in order
        fig.update_layout(barmode="group", bargap=0.2, bargroupgap=0.05,
                          uniformtext=dict(minsize=font_size - 1, mode="show"))
        fig.update_annotations(font_size=font_size + 1)
        fig = _legend_top(base_layout(fig, height=height, font_size=font_size)).update_layout(
            margin=dict(l=max(70, widest(rule_titles, font_size) + 16), r=widest(row_labels, font_size) + 16, t=110,
                        b=max(60, 3 * font_size + 14)))
        return horizontal_titles(fig, font_size)

    key = ("overwrite", tuple(rule_titles), tuple(part_labels), total_label, tuple(row_labels), tuple(titles),
           value_axis, bars_axis, V, font_size, height)
    data = [{"x": along[:, j], "base": starts[:, j], "text": part_text[j]} for j in range(len(part_labels))]
    data.append({"x": error, "text": error_text})
    data.append({"x": reach})
    data.append({"z": rows, "zmax": zmax, "zmin": -zmax, **({"text": cells} if cells is not None else {})})
    return from_skeleton(key, build, data)


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
                                     line=dict(color=RULE_COLORS[rule], width=3), legendgroup=rule,
                                     hovertemplate="N=%{x}: %{y:.1%}<extra></extra>"), row=1, col=1)
        for x, text, style in ((K, labels["knee"], dict(color="#0f172a", dash="dash", width=2)),
                               (N_sel, "", dict(color="#f59e0b", width=6))):     # lines as traces: exact on log axes
            fig.add_trace(go.Scatter(x=[x, x], y=[0, top], mode="lines+text", text=["", text], line=style,
                                     textposition="bottom left", showlegend=False, hoverinfo="skip",
                                     opacity=1.0 if text else 0.4, textfont=dict(size=font_size)), row=1, col=1)
        fig.update_xaxes(type="log", title_text=labels["N"], row=1, col=1)
        fig.update_yaxes(tickformat=".0%", title_text=labels["error"], rangemode="tozero", row=1, col=1)
        for j, name in enumerate(split_labels):
            ys = split[j]
            fig.add_trace(go.Bar(x=[rule_titles[r] for r in curves], y=ys, name=name, marker_color=PART_COLORS[j + 2],
                                 text=[f"{y:.0%}" for y in ys], textposition="outside", constraintext="none", cliponaxis=False,
                                 textfont=dict(size=font_size - 2)),
                          row=1, col=2)
        fig.update_yaxes(tickformat=".0%", rangemode="tozero", row=1, col=2)
        names = [rule_titles[r] for r in curves]               # horizontal, on as many lines as they need
        fig.update_xaxes(tickangle=0, tickvals=names, ticktext=[wrapped(n) for n in names], row=1, col=2)
        fig.update_layout(barmode="group")
        fig.update_annotations(font_size=font_size + 1)
        fig = _legend_top(base_layout(fig, height=height, font_size=font_size)).update_layout(
            margin=dict(l=70, r=20, t=110, b=max(60, 3 * font_size + 14)))
        return horizontal_titles(fig, font_size)

    key = ("capacity", tuple(np.asarray(Ns).tolist()), tuple(curves), tuple(sorted(rule_titles.items())),
           tuple(split_labels), tuple(sorted(labels.items())), K, N_sel, font_size, height)
    data = [{"y": c[:, 0]} for c in curves.values()] + [{"y": [0, top]}, {"y": [0, top]}]
    data += [{"y": ys, "text": [f"{y:.0%}" for y in ys]} for ys in split]
    return from_skeleton(key, build, data)
