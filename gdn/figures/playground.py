"""The playground's figures: overwrite vs blur, repeated writes, key norm, capacity, half-life.

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
    wrapped,
)
from gdn.units import cell_text

RULE_COLORS = {"linear": "#64748b", "delta": "#1d4ed8", "gated": "#dc2626"}
PART_COLORS = ("#f59e0b", "#8b5cf6", "#94a3b8", "#0f172a", "#14b8a6")
ZONE_COLORS = {"shrink": "#dcfce7", "overshoot": "#fef3c7", "diverge": "#fee2e2"}


def _legend_top(fig: go.Figure) -> go.Figure:
    return fig.update_layout(legend=dict(orientation="h", yanchor="bottom", y=1.08, x=0))


def fig_overwrite(readout: np.ndarray, target: np.ndarray, old: np.ndarray, along: np.ndarray, error: np.ndarray, *,
                  rule_titles: list[str], part_labels: list[str], total_label: str, row_labels: list[str],
                  titles: tuple[str, str], value_axis: str = "", font_size: int = 14, height: int = 420) -> go.Figure:
    """readout: [3, V] per rule; target, old: [V]; along: [3 rules, 3 parts] signed components of the
    error's parts along the error (gdn.lessons.playground.Overwrite.along); error: [3].
    Left: the parts stacked with their signs, ending exactly at the total error (◆); right: old value,
    target and each rule's readout as rows. Built once per labels and size (from_skeleton); a slider
    move swaps only the numbers."""
    rows = np.vstack([old, target, readout])                           # [5, V]
    zmax, V = symmetric_range(rows), rows.shape[1]
    part_text = [[f"{b:+.0%}" if abs(b) >= 0.005 else "" for b in along[:, j]] for j in range(len(part_labels))]
    error_text = [f"{e:.0%}" for e in error]
    cells = cell_text(rows, 1) if V <= 8 else None

    def build():
        fig = make_subplots(rows=1, cols=2, column_widths=[0.55, 0.45], horizontal_spacing=0.2,
                            subplot_titles=titles)
        for j, label in enumerate(part_labels):
            fig.add_trace(go.Bar(x=rule_titles, y=along[:, j], name=label, marker_color=PART_COLORS[j],
                                 text=part_text[j],
                                 textposition="inside", insidetextanchor="middle", textfont=dict(size=font_size - 2),
                                 hovertemplate=f"{label}: %{{y:+.1%}}<extra></extra>"), row=1, col=1)
        fig.add_trace(go.Scatter(x=rule_titles, y=error, name=total_label, mode="markers+text",
                                 marker=dict(symbol="diamond", size=font_size + 2, color=PART_COLORS[3]),
                                 text=error_text, textposition="middle right", cliponaxis=False,
                                 textfont=dict(size=font_size), hovertemplate=f"{total_label}: %{{y:.1%}}<extra></extra>"),
                      row=1, col=1)
        fig.add_trace(go.Heatmap(z=rows, y=row_labels, x=numbered(V),
                                 zmid=0, zmax=zmax, zmin=-zmax,
                                 colorscale=DIVERGING, showscale=False, xgap=2, ygap=2,
                                 text=cells, texttemplate="%{text}",
                                 textfont=dict(size=font_size), hovertemplate="%{y}, %{x}: %{z:.2f}<extra></extra>"),
                      row=1, col=2)
        fig.update_yaxes(autorange="reversed", row=1, col=2)
        fig.update_xaxes(type="category", title_text=value_axis, title_standoff=2, row=1, col=2)
        fig.update_yaxes(tickformat=".0%", zeroline=True, zerolinewidth=2, zerolinecolor="#334155", row=1, col=1)
        fig.update_layout(barmode="relative", bargap=0.35)
        fig.update_annotations(font_size=font_size + 1)
        fig = _legend_top(base_layout(fig, height=height, font_size=font_size)).update_layout(margin=dict(l=70, r=20, t=110, b=60))
        return horizontal_titles(fig, font_size)

    key = ("overwrite", tuple(rule_titles), tuple(part_labels), total_label, tuple(row_labels), tuple(titles),
           value_axis, V, font_size, height)
    data = [{"y": along[:, j], "text": part_text[j]} for j in range(len(part_labels))]
    data.append({"y": error, "text": error_text})
    data.append({"z": rows, "zmax": zmax, "zmin": -zmax, **({"text": cells} if cells is not None else {})})
    return from_skeleton(key, build, data)


def fig_repeated(dist: dict[str, np.ndarray], *, rule_titles: dict[str, str], xlabel: str, ylabel: str,
                 log_y: bool = False, font_size: int = 14, height: int = 380) -> go.Figure:
    """dist: rule -> [T + 1] relative distance to v after each write (entry 0 = empty table).
    Built once per labels and length (from_skeleton); a slider move swaps only the numbers."""
    steps = np.arange(len(next(iter(dist.values()))))
    def build():
        fig = go.Figure()
        for rule, d in dist.items():
            fig.add_trace(go.Scatter(x=steps, y=d, mode="lines+markers", name=rule_titles[rule],
                                     line=dict(color=RULE_COLORS[rule], width=3, dash="dot" if rule == "gated" else None),
                                     hovertemplate="%{x}: %{y:.4g}<extra></extra>"))
        fig.update_xaxes(title_text=xlabel, dtick=1 if len(steps) <= 21 else None)
        fig.update_yaxes(title_text=ylabel, type="log" if log_y else "linear", tickformat=None if log_y else ".0%")
        fig = _legend_top(base_layout(fig, height=height, font_size=font_size)).update_layout(margin=dict(l=70, r=20, t=80, b=60))
        return horizontal_titles(fig, font_size)

    key = ("repeated", tuple(dist), tuple(sorted(rule_titles.items())), xlabel, ylabel, log_y, len(steps), font_size, height)
    return from_skeleton(key, build, [{"x": steps, "y": d} for d in dist.values()])

def fig_key_norm(c_grid: np.ndarray, factor: np.ndarray, c: float, errors: np.ndarray, *, clipped: bool,
                 labels: dict[str, str], font_size: int = 14, height: int = 420) -> go.Figure:
    """Left: the factor (1 - beta c^2) along k against the key norm c, zones shrink / overshoot /
    diverge, the current c marked. Right: |distance to v| per repeated write on a log axis
    (already clipped by gdn.lessons.playground.clip_for_display; `clipped` adds a visible warning).
    Built once per labels, size and y range (from_skeleton); a slider move swaps only the numbers."""
    lo, hi = min(-3.0, float(factor.min()) - 0.3), 1.3
    here = float(np.interp(c, c_grid, factor))
    steps, distance = np.arange(len(errors)), np.maximum(errors, 1e-16)

    def build():
        fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.12,
                            subplot_titles=(labels["factor_title"], labels["error_title"]))
        fig.add_trace(go.Scatter(x=c_grid, y=factor, mode="lines", line=dict(color="#0f172a", width=3),
                                 name=labels["factor"], showlegend=False), row=1, col=1)
        fig.add_trace(go.Scatter(x=[c], y=[here], mode="markers+text", marker=dict(size=14, color="#dc2626"),
                                 text=[f"{here:.2f}"], textposition="middle left", showlegend=False,
                                 textfont=dict(size=font_size + 2)), row=1, col=1)
        for zone, (y0, y1) in {"shrink": (0, 1), "overshoot": (-1, 0), "diverge": (lo, -1)}.items():
            fig.add_hrect(y0=y0, y1=y1, fillcolor=ZONE_COLORS[zone], line_width=0, layer="below", row=1, col=1,
                          annotation_text=labels[zone], annotation_position="bottom left",
                          annotation_font_size=font_size - 1)
        fig.update_yaxes(range=[lo, hi], title_text=labels["factor"], row=1, col=1)
        fig.update_xaxes(title_text=labels["knorm"], row=1, col=1)
        fig.add_trace(go.Scatter(x=steps, y=distance, mode="lines+markers",
                                 line=dict(color=RULE_COLORS["delta"], width=3), showlegend=False,
                                 hovertemplate="%{x}: %{y:.3g}<extra></extra>"), row=1, col=2)
        fig.update_yaxes(type="log", title_text=labels["distance"], exponentformat="power", row=1, col=2)
        fig.update_xaxes(title_text=labels["writes"], row=1, col=2)
        if clipped:
            fig.add_annotation(text=labels["clipped"], xref="x2 domain", yref="y2 domain", x=0.02, y=0.98,
                               showarrow=False, xanchor="left", yanchor="top", bgcolor="#fee2e2",
                               bordercolor="#dc2626", font=dict(size=font_size, color="#991b1b"))
        fig.update_annotations(font_size=font_size + 1, selector=dict(xref="paper"))
        fig = base_layout(fig, height=height, font_size=font_size).update_layout(margin=dict(l=70, r=20, t=60, b=60))
        return horizontal_titles(fig, font_size)

    key = ("key_norm", tuple(sorted(labels.items())), lo, clipped, len(c_grid), font_size, height)
    data = [{"x": c_grid, "y": factor}, {"x": [c], "y": [here], "text": [f"{here:.2f}"]}, {"x": steps, "y": distance}]
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
                                 text=[f"{y:.0%}" for y in ys], textposition="outside", cliponaxis=False,
                                 textfont=dict(size=font_size - 2)),
                          row=1, col=2)
        fig.update_yaxes(tickformat=".0%", rangemode="tozero", row=1, col=2)
        names = [rule_titles[r] for r in curves]               # horizontal, on as many lines as they need
        fig.update_xaxes(tickangle=0, tickvals=names, ticktext=[wrapped(n) for n in names], row=1, col=2)
        fig.update_layout(barmode="group")
        fig.update_annotations(font_size=font_size + 1)
        fig = _legend_top(base_layout(fig, height=height, font_size=font_size)).update_layout(margin=dict(l=70, r=20, t=110, b=60))
        return horizontal_titles(fig, font_size)

    key = ("capacity", tuple(np.asarray(Ns).tolist()), tuple(curves), tuple(sorted(rule_titles.items())),
           tuple(split_labels), tuple(sorted(labels.items())), K, N_sel, font_size, height)
    data = [{"y": c[:, 0]} for c in curves.values()] + [{"y": [0, top]}, {"y": [0, top]}]
    data += [{"y": ys, "text": [f"{y:.0%}" for y in ys]} for ys in split]
    return from_skeleton(key, build, data)

def fig_half_life(curves: np.ndarray, alphas: list[float], alpha: float, half: float, *,
                  labels: dict[str, str], font_size: int = 14, height: int = 380) -> go.Figure:
    """curves: [A, n + 1] alpha^n, the last row for the chosen alpha; half: its half-life in tokens.
    Built once per labels and length (from_skeleton); a slider move swaps only the numbers."""
    n = np.arange(curves.shape[1])
    marked = bool(np.isfinite(half) and half <= n[-1])
    half_text = [labels["half_at"].format(n=f"{half:.1f}")] if marked else None

    def build():
        fig = go.Figure()
        for a, y in zip(alphas, curves[:-1]):
            fig.add_trace(go.Scatter(x=n, y=y, mode="lines", name=f"α = {a:g}", line=dict(width=1.5, dash="dot"),
                                     hovertemplate="n=%{x}: %{y:.3f}<extra></extra>"))
        fig.add_trace(go.Scatter(x=n, y=curves[-1], mode="lines", name=f"α = {alpha:g}",
                                 line=dict(width=4, color="#dc2626"), hovertemplate="n=%{x}: %{y:.3f}<extra></extra>"))
        fig.add_hline(y=0.5, line=dict(color="#0f172a", dash="dash"), annotation_text="½",
                      annotation_position="top left")
        if marked:
            fig.add_trace(go.Scatter(x=[half], y=[0.5], mode="markers+text", marker=dict(size=13, color="#dc2626"),
                                     text=half_text, textposition="top right",
                                     showlegend=False, textfont=dict(size=font_size + 1)))
        fig.update_xaxes(title_text=labels["n"])
        fig.update_yaxes(title_text=labels["kept"], range=[0, 1.05])
        fig = _legend_top(base_layout(fig, height=height, font_size=font_size)).update_layout(margin=dict(l=70, r=20, t=80, b=60))
        return horizontal_titles(fig, font_size)

    key = ("half_life", tuple(alphas), tuple(sorted(labels.items())), len(n), marked, font_size, height)
    data = [{"y": y} for y in curves[:-1]] + [{"y": curves[-1], "name": f"α = {alpha:g}"}]
    data += [{"x": [half], "text": half_text}] if marked else []
    return from_skeleton(key, build, data)
