"""The start page's figures: attention -> one table (three panels), the Gated DeltaNet block as a
clickable diagram, and the hybrid layer stack of a Qwen3.5 model."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from gdn.figures.common import DIVERGING, base_layout, horizontal_titles, numbered, symmetric_range
from gdn.units import cell_text

# ---- 1. attention -> linear attention -> one table ------------------------------------------

SOFTMAX, LINEAR, TABLE = "#7c3aed", "#1d4ed8", "#dc2626"


def fig_attention_to_table(weights: np.ndarray, o_sum: np.ndarray, o_table: np.ndarray, S: np.ndarray, *,
                           labels: dict[str, str], font_size: int = 14, height: int = 360) -> go.Figure:
    """weights: [T] softmax weights over the past; o_sum, o_table: [V] the linear read computed both ways;
    S: [K, V] the table. labels: panel titles t1..t3 (t2 with {sum} and {table}: the two formulas, drawn in
    their bars' colours), token (a tick, with {j}), token_axis, sum, table (hover), value_axis, key_axis,
    diff (under the middle panel)."""
    T, (K, V) = len(weights), S.shape
    paint = lambda color, text: f'<span style="color:{color}">{text}</span>'
    t2 = labels["t2"].format(sum=paint(LINEAR, "Σⱼ (q·kⱼ) vⱼ"), table=paint(TABLE, "Sᵀq"))   # the bars' colours
    fig = make_subplots(rows=1, cols=3, subplot_titles=(labels["t1"], t2, labels["t3"]),
                        horizontal_spacing=0.11, column_widths=[0.36, 0.36, 0.28])
    fig.update_annotations(font_size=font_size)                       # the three titles
    small = dict(size=max(10, font_size - 6))
    tokens = [labels["token"].format(j=j + 1) for j in range(T)]
    fig.add_trace(go.Bar(x=tokens, y=weights, marker_color=SOFTMAX, text=[f"{w:.2f}" for w in weights],
                         textposition="outside", cliponaxis=False, showlegend=False, textfont=small,
                         hovertemplate="%{x}: %{y:.3f}<extra></extra>"), row=1, col=1)
    dims = numbered(V)                                                # ticks 1..V under "value dim"
    for y, name, color in ((o_sum, labels["sum"], LINEAR), (o_table, labels["table"], TABLE)):
        fig.add_trace(go.Bar(x=dims, y=y, name=name, marker_color=color, text=[f"{a:.2f}" for a in y],
                             textposition="outside", cliponaxis=False, textfont=small, showlegend=False,
                             hovertemplate="%{x}: %{y:.17g}<extra>" + name + "</extra>"), row=1, col=2)
    zmax = symmetric_range(S)
    fig.add_trace(go.Heatmap(z=S[::-1], x=dims, y=numbered(K)[::-1],
                             colorscale=DIVERGING, zmid=0, zmin=-zmax, zmax=zmax, showscale=False,
                             text=cell_text(S[::-1]), texttemplate="%{text}", textfont=dict(size=font_size),
                             hovertemplate="%{y}, %{x}: %{z:.3f}<extra></extra>"), row=1, col=3)
    fig.update_xaxes(type="category")
    fig.update_yaxes(type="category", row=1, col=3)
    fig.update_xaxes(title_text=labels["token_axis"], row=1, col=1)
    fig.update_xaxes(title_text=labels["value_axis"], row=1, col=2)
    # the check under the middle panel's title, a line of its own (a second title line sat on the ticks)
    fig.add_annotation(text=labels["diff"], showarrow=False, xref="x2 domain", x=0.5, yref="y2 domain", y=0,
                       yanchor="top", yshift=-round(3.3 * font_size), font=small)
    fig.update_xaxes(title_text=labels["value_axis"], row=1, col=3)
    fig.update_yaxes(title_text=labels["key_axis"], row=1, col=3)
    fig.update_yaxes(range=[0, 1.3 * weights.max()], row=1, col=1, showticklabels=False)
    lim = 1.3 * max(np.abs(o_sum).max(), 1e-9)
    fig.update_yaxes(range=[-lim, lim], row=1, col=2, zeroline=True, zerolinecolor="#94a3b8")
    fig.update_xaxes(automargin=True)
    fig.update_layout(barmode="group")
    fig = base_layout(fig, height=height, font_size=font_size)
    fig = fig.update_layout(margin=dict(l=10, r=10, t=3 * font_size + 30, b=4 * font_size + 10))
    return horizontal_titles(fig, font_size)


# ---- 2. the Gated DeltaNet block -------------------------------------------------------------

# box id -> (centre x, centre y, width, height, colour group) on a grid of columns 1.2 apart.
# Rows: z on top (it runs straight to the gated norm), then q/k/v, a, b; the delta rule spans those.
LAYOUT = {
    "x": (0.0, -1.5, 1.0, 3.6, "stream"),
    "in_z": (1.2, 0.0, 1.0, 0.8, "proj"), "in_qkv": (1.2, -1.0, 1.0, 0.8, "proj"),
    "in_a": (1.2, -2.0, 1.0, 0.8, "proj"), "in_b": (1.2, -3.0, 1.0, 0.8, "proj"),
    "conv": (2.4, -1.0, 1.0, 0.8, "conv"), "l2": (3.6, -1.0, 1.0, 0.8, "conv"),
    "alpha": (3.0, -2.0, 2.2, 0.8, "gate"), "beta": (3.0, -3.0, 2.2, 0.8, "gate"),   # g -> alpha in one wide box
    "delta": (4.8, -2.0, 1.0, 2.8, "delta"),
    "chunk": (4.8, -4.05, 1.0, 0.7, "chunk"), "norm": (6.0, -0.5, 1.0, 1.8, "norm"),
    "out": (7.2, -0.5, 1.0, 0.8, "norm"), "residual": (7.2, -2.0, 1.0, 0.8, "stream"),
}
COLOURS = {"stream": ("#f1f5f9", "#475569"), "proj": ("#dbeafe", "#1d4ed8"), "conv": ("#dcfce7", "#15803d"),
           "gate": ("#ffedd5", "#c2410c"), "delta": ("#fee2e2", "#b91c1c"), "chunk": ("#fff1f2", "#e11d48"),
           "norm": ("#ede9fe", "#6d28d9")}
# arrows left to right between boxes: (from, to, y of the arrow; None = the from box's centre)
ARROWS = [("x", "in_z", 0.0), ("x", "in_qkv", -1.0), ("x", "in_a", -2.0), ("x", "in_b", -3.0),
          ("in_qkv", "conv", None), ("conv", "l2", None), ("l2", "delta", -1.0), ("in_a", "alpha", None),
          ("alpha", "delta", -2.0), ("in_b", "beta", None), ("beta", "delta", -3.0),
          ("in_z", "norm", 0.0), ("delta", "norm", -1.0), ("norm", "out", -0.5)]


def _edge(box: str, side: str) -> float:
    cx, cy, w, h, _ = LAYOUT[box]
    return {"left": cx - w / 2, "right": cx + w / 2, "top": cy + h / 2, "bottom": cy - h / 2}[side]


def _arrow(x0, y0, x1, y1, color: str = "#334155") -> dict:
    return dict(x=x1, y=y1, ax=x0, ay=y0, xref="x", yref="y", axref="x", ayref="y", showarrow=True, arrowhead=2,
                arrowwidth=1.6, arrowcolor=color, text="")


def fig_block(texts: dict[str, str], hovers: dict[str, str], *, title: str = "", skip_label: str = "",
              chunk_label: str = "", font_size: int = 12, height: int = 520) -> go.Figure:
    """texts: box id -> its text (title, shape, live value; <br> between lines); hovers: box id -> what a
    click opens. Every box is a click target: a few invisible markers per box, customdata = box id.
    Shapes and annotations are collected as plain dicts and set once (adding ~40 one by one took 100 ms)."""
    shapes, notes = [], []
    for box, (cx, cy, w, h, group) in LAYOUT.items():
        fill, line = COLOURS[group]
        shapes.append(dict(type="rect", x0=cx - w / 2, x1=cx + w / 2, y0=cy - h / 2, y1=cy + h / 2, fillcolor=fill,
                           line=dict(color=line, width=2), layer="below"))
        notes.append(dict(x=cx, y=cy, text=texts[box], showarrow=False, font=dict(size=font_size, color="#0f172a"),
                          align="center"))
    for a, b, y in ARROWS:
        y = LAYOUT[a][1] if y is None else y
        notes.append(_arrow(_edge(a, "right"), y, _edge(b, "left"), y))
    notes.append(_arrow(7.2, _edge("out", "bottom"), 7.2, _edge("residual", "top")))
    # the residual connection around the layer, and the chunked kernel: the same step computed another way
    top, right = 0.78, 7.95
    skip = go.Scatter(x=[0, 0, right, right], y=[_edge("x", "top"), top, top, -2.0], mode="lines", hoverinfo="skip",
                      line=dict(color="#475569", width=1.6, dash="dot"), showlegend=False)
    notes.append(_arrow(right, -2.0, _edge("residual", "right"), -2.0, "#475569"))
    notes.append(dict(x=3.6, y=top, text=skip_label, showarrow=False, font=dict(size=font_size, color="#475569"),
                      bgcolor="white"))
    chunk = go.Scatter(x=[4.8, 4.8], y=[_edge("delta", "bottom"), _edge("chunk", "top")], mode="lines",
                       hoverinfo="skip", showlegend=False, line=dict(color="#e11d48", width=2, dash="dot"))
    notes.append(dict(x=5.35, y=-4.05, text=chunk_label, showarrow=False, xanchor="left",
                      font=dict(size=font_size, color="#e11d48")))
    # click targets: invisible markers spread over each box, about one per 0.25 x 0.25 of a box unit (a
    # click selects the nearest marker within hoverdistance, so every point of a box is near one)
    xs, ys, ids = [], [], []
    for box, (cx, cy, w, h, _) in LAYOUT.items():
        nx, ny = max(3, round(w / 0.25)), max(1, round(h / 0.3))
        for fx in np.linspace(-0.4, 0.4, nx):
            for fy in (np.linspace(-0.4, 0.4, ny) if ny > 1 else (0.0,)):
                xs.append(cx + fx * w), ys.append(cy + fy * h), ids.append(box)
    targets = go.Scatter(x=xs, y=ys, mode="markers", customdata=ids, hovertext=[hovers[b] for b in ids],
                         hoverinfo="text", marker=dict(size=30, symbol="square", color="rgba(0,0,0,0)"),
                         selected=dict(marker=dict(opacity=0)), unselected=dict(marker=dict(opacity=0)),
                         showlegend=False, name="boxes")
    fig = go.Figure([skip, chunk, targets], layout=dict(
        shapes=shapes, annotations=notes, dragmode=False, hovermode="closest", clickmode="event+select", hoverdistance=30,
        xaxis=dict(range=[-0.55, 8.05], visible=False, fixedrange=True),
        yaxis=dict(range=[-4.45, 0.98], visible=False, fixedrange=True)))
    fig = base_layout(fig, height=height, font_size=font_size)
    fig = fig.update_layout(margin=dict(l=4, r=4, t=36 if title else 4, b=4), title=dict(text=title, x=0.01))
    return horizontal_titles(fig, font_size)


# ---- 3. the hybrid stack ---------------------------------------------------------------------

KIND_COLOURS = {"linear_attention": ("#fee2e2", "#b91c1c"), "full_attention": ("#e0e7ff", "#3730a3")}


def fig_stack(layer_types: list[str], *, names: dict[str, str], notes: dict[str, str], font_size: int = 14,
              row_px: int = 22) -> go.Figure:
    """layer_types: one kind per layer, bottom (layer 0) to top; names: kind -> short name (with {i});
    notes: kind -> its memory per token, written beside the first layer of that kind."""
    L = len(layer_types)
    shapes, labels = [], []
    for i, kind in enumerate(layer_types):
        fill, line = KIND_COLOURS[kind]
        shapes.append(dict(type="rect", x0=0, x1=1.3, y0=i + 0.08, y1=i + 0.92, fillcolor=fill,
                           line=dict(color=line, width=1.5)))
        labels.append(dict(x=0.65, y=i + 0.5, text=names[kind].format(i=i), showarrow=False,
                           font=dict(size=font_size - 2, color=line)))
    for kind, note in notes.items():
        first = [i for i, k in enumerate(layer_types) if k == kind]
        if first:
            labels.append(dict(x=1.4, y=first[0] + 0.5, text=note, showarrow=False, xanchor="left", align="left",
                               font=dict(size=font_size - 2, color=KIND_COLOURS[kind][1])))
    hover = go.Scatter(x=[0.65] * L, y=np.arange(L) + 0.5, mode="markers", marker=dict(opacity=0), showlegend=False,
                       hovertext=[names[k].format(i=i) for i, k in enumerate(layer_types)], hoverinfo="text")
    fig = go.Figure([hover], layout=dict(shapes=shapes, annotations=labels,
                                         xaxis=dict(range=[-0.05, 3.4], visible=False, fixedrange=True),
                                         yaxis=dict(range=[-0.2, L + 0.2], visible=False, fixedrange=True)))
    fig = base_layout(fig, height=max(160, row_px * L + 20), font_size=font_size)
    return horizontal_titles(fig.update_layout(margin=dict(l=4, r=4, t=4, b=4)), font_size)
