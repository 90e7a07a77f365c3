"""Memory against context length, log-log: fixed GDN state, growing KV cache, their sum, and an
all-attention model of the same depth; vertical marks for crossovers and the user's prompt."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from gdn.figures.common import base_layout, from_skeleton, title_note
from gdn.units import fmt_bytes

CURVE_STYLE = {"state": dict(color="#1d4ed8", width=3), "kv": dict(color="#f59e0b", width=3),
               "hybrid": dict(color="#0f172a", width=4), "full": dict(color="#dc2626", width=3, dash="dash")}
BYTE_TICKS = [2.0 ** p for p in range(0, 56, 5)]           # 1 B, 32 B, 1 KiB, 32 KiB, 1 MiB, ...


def fig_cost(T: np.ndarray, curves: dict[str, np.ndarray], marks: list[tuple[float, str, str]], *,
             labels: dict[str, str], font_size: int = 14, height: int = 480, stacked_legend: bool = False) -> go.Figure:
    """T: [n] context lengths; curves: name -> [n] bytes (names as in CURVE_STYLE, labels[name] the
    legend text); marks: (T, text, colour) vertical lines, drawn only inside the T range; stacked_legend:
    one legend row per curve (a narrow chart in lecture mode, where two rows would wrap into more).

    Each mark's label sits above the plot area, one row per mark, so no label ever lies on a curve or
    on another label; the legend goes under the x axis to leave that space free. Everything around the
    plot is placed in pixels (the labels by their shift above the plot, the legend from the figure's bottom
    edge), so the figure may be drawn at another height (lecture mode sizes it to the window)."""
    finite = np.concatenate([y[y > 0] for y in curves.values()])
    lo, hi = float(finite.min()) / 3, float(finite.max()) * 3
    inside = [m for m in marks if T[0] <= m[0] <= T[-1]]
    # Under the plot: tick labels and the axis title (~3 text lines), then the legend's two rows.
    axis_below = 3 * font_size + 24
    legend_rows = len(curves) * (font_size + 6) if stacked_legend else 2 * (font_size + 10)
    # Above the plot: the y title, horizontal (never turned sideways), on the first row, the marks' rows over it,
    # the lowest a full row up: the title's line box reaches ~1.5 rows, and a mark in the left third (the
    # prompt's, say) starts its label right where the title ends.
    top, bottom = 20 + (len(inside) + 1.5) * (font_size + 10), axis_below + legend_rows + 10
    parts = [_mark(x, text, color, row=len(inside) - i + 1, T=T, y=(lo, hi), row_px=font_size + 10, font_size=font_size)
             for i, (x, text, color) in enumerate(inside)]
    y_title = title_note(labels["y"], font_size)

    def build() -> go.Figure:
        fig = go.Figure()
        for name, y in curves.items():
            fig.add_trace(go.Scatter(x=T, y=np.maximum(y, 1.0), mode="lines", name=labels[name], line=CURVE_STYLE[name],
                                     hovertemplate="T=%{x:,.0f}: %{customdata}<extra>" + labels[name] + "</extra>",
                                     customdata=[fmt_bytes(b) for b in y]))
        fig.add_annotation(y_title)
        for line, label in parts:
            fig.add_trace(go.Scatter(line))
            fig.add_annotation(label)
        ticks = [t for t in BYTE_TICKS if lo <= t <= hi]
        decades = [10 ** p for p in range(0, 7) if T[0] <= 10 ** p <= T[-1]]       # 1, 10, 100, 1k, ... tokens
        fig.update_xaxes(type="log", title_text=labels["x"], range=[np.log10(T[0]), np.log10(T[-1])], title_standoff=8,
                         tickvals=decades, ticktext=[f"{d // 1000:,}k" if d >= 1000 else str(d) for d in decades])
        tick_text = [fmt_bytes(t) for t in ticks]
        fig.update_yaxes(type="log", range=[np.log10(lo), np.log10(hi)],
                         tickvals=ticks or None, ticktext=tick_text or None)
        fig.update_layout(legend=dict(orientation="v" if stacked_legend else "h", yref="container", yanchor="bottom", y=0, x=0,
                                      font=dict(size=font_size - 1)))
        # The left margin fits the longest tick label (~0.6 em a character; the y title is above the plot), measured here
        # rather than by Plotly's automargin, which lays the figure out twice when it is drawn: about 20 of
        # the 50 ms of this figure's newPlot in Chromium, paid again at every context-slider move.
        left = round(0.6 * font_size * max(map(len, tick_text), default=4) + 22)
        return base_layout(fig, height=height, font_size=font_size).update_layout(
            margin=dict(l=max(left, 20 + 3 * font_size), r=20, t=top, b=bottom))

    # A context-slider move only moves the marks: one skeleton per model setting (its curves) and look,
    # the marks' lines and labels swapped in.
    key = ("cost", T.tobytes(), tuple((n, y.tobytes()) for n, y in curves.items()), tuple(sorted(labels.items())),
           tuple(color for _, _, color in inside), font_size, height, stacked_legend)
    data = [{} for _ in curves] + [{"x": line["x"]} for line, _ in parts]
    return from_skeleton(key, build, data, layout={"annotations": [y_title] + [label for _, label in parts]})


def _mark(x: float, text: str, color: str, *, row: float, T: np.ndarray, y: tuple[float, float], row_px: int,
          font_size: int) -> tuple[dict, dict]:
    """One vertical mark at T = x: its line (a trace: exact on log axes) and its label above the plot
    area, `row` label rows (row_px pixels each) up, as plotly stores them."""
    # Anchored by where the mark sits: left third -> the label runs right, right third -> left,
    # middle -> centred on the line; so a label never runs past the plot's edge.
    where = (np.log(x) - np.log(T[0])) / (np.log(T[-1]) - np.log(T[0]))
    anchor = "left" if where < 1 / 3 else "right" if where > 2 / 3 else "center"
    line = dict(type="scatter", x=[x, x], y=list(y), mode="lines", showlegend=False, hoverinfo="skip",
                line=dict(color=color, width=2, dash="dot"))
    # An annotation's x on a log axis is log10 of the value (plotly's rule for annotations).
    label = dict(x=float(np.log10(x)), xref="x", y=1, yref="paper", yshift=round(row * row_px),
                 text={"left": f"┆ {text}", "right": f"{text} ┆", "center": text}[anchor], showarrow=False,
                 xanchor=anchor, yanchor="middle", font=dict(size=font_size - 1, color=color))
    return line, label
