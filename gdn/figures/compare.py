"""The rules side by side on the same token: linear attention | DeltaNet | Gated DeltaNet (gdn.lessons.compare.RULES).

Top row, one table S per rule [K x V] at the current stage (decayed table up to "error", the new
table from "write" on). Bottom row, one vector panel per rule: rows v-hat, v, beta*e, o, target
[5 x V]; rows of later stages show "?" (as on the memory-table page), and linear attention's
v-hat shows "-" because that rule never reads before it writes (as every rule that is not a delta rule).
"""
from __future__ import annotations

import html

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from gdn.figures.common import (
    DIVERGING,
    base_layout,
    dim_labels,
    from_skeleton,
    horizontal_titles,
    numbered,
    symmetric_range,
)
from gdn.figures.tables import Panel, cell_style, panels_table, scale_rgb
from gdn.lessons.compare import RULES
from gdn.lessons.stream import STAGES, StepRecords
from gdn.units import cell_text

VECTOR_ROWS = ("prediction", "value", "written", "output", "target")
REVEALED_AT = {"prediction": "read", "value": "decay", "written": "error", "output": "query", "target": "decay"}


def vector_rows(rec: StepRecords, target: np.ndarray, t: int) -> np.ndarray:
    """[5, V]: v-hat, v, beta*e (what is written along k), o = S_t^T q_t, the target."""
    s = rec.stream
    beta = s.beta[t] * np.ones(s.shape[2])
    return np.stack([rec.prediction[t], s.v[t], beta * rec.error[t], rec.output[t], target[t]])


def _vector_text(rows: np.ndarray, stage: str, reads: bool) -> np.ndarray:
    text = cell_text(rows).astype(object)
    for i, name in enumerate(VECTOR_ROWS):
        if STAGES.index(REVEALED_AT[name]) > STAGES.index(stage):
            text[i] = "?"
    if not reads:
        text[0] = "—"
    return text


def _step(recs: dict[str, StepRecords], target: np.ndarray, t: int, stage: str):
    """What both drawings of one step start from: the shared |z| bound and, per rule, the table S [K, V]
    at this stage (decayed up to "error", new from "write"), its vector rows [5, V] and their texts."""
    if stage not in STAGES:
        raise ValueError(f"stage must be one of {STAGES}, got {stage!r}")
    zmax = symmetric_range(target, *(np.concatenate([r.S_new.ravel(), r.S_prev.ravel(), r.output.ravel()])
                                      for r in recs.values()))
    after_write = STAGES.index(stage) >= STAGES.index("write")
    shown = {}
    for rule, rec in recs.items():
        rows = vector_rows(rec, target, t)
        reads = rule not in RULES or RULES[rule].delta          # a variant's column runs the gated delta rule
        shown[rule] = (rec.S_new[t] if after_write else rec.S_decayed[t], rows, _vector_text(rows, stage, reads))
    return zmax, shown


def fig_compare_step(recs: dict[str, StepRecords], target: np.ndarray, t: int, stage: str, *,
                     titles: dict[str, str], row_labels: dict[str, str], axis: dict[str, str],
                     font_size: int = 14, height: int = 560, value_names: list[str] | None = None) -> go.Figure:
    """recs: rule -> records of the same stream (gdn.lessons.compare.run_all); target: [T, V];
    value_names: optional names of the value dims (e.g. the city story's labels) for the x axes.
    titles: rule -> column title (may hold "<br>" for a second line); row_labels: VECTOR_ROWS name -> label; axis: {"key", "value"}.
    Built once per labels and sizes (from_skeleton); a step swaps only the numbers."""
    rules = list(recs)
    T, K, V = recs[rules[0]].stream.shape
    zmax, shown = _step(recs, target, t, stage)
    panels = []                                                                    # (z, text) per trace
    for S, rows, text in shown.values():
        panels += [(S, cell_text(S)), (np.where(np.isin(text, ("?", "—")), 0.0, rows), text)]

    def build():
        fig = make_subplots(rows=2, cols=len(rules), row_heights=[0.55, 0.45], vertical_spacing=0.14,
                            horizontal_spacing=0.06, subplot_titles=[titles[r] for r in rules])
        x = list(value_names) if value_names else numbered(V)
        dims = dim_labels(K, axis.get("dim", "dim"))
        for col, rule in enumerate(rules, start=1):
            (S, S_text), (shown, text) = panels[2 * col - 2:2 * col]
            fig.add_trace(_heatmap(S, S_text, x, dims, zmax, font_size, titles[rule]), row=1, col=col)
            fig.add_trace(_heatmap(shown, text, x, [row_labels[n] for n in VECTOR_ROWS], zmax, font_size,
                                   titles[rule]), row=2, col=col)
            fig.update_xaxes(title_text=axis["value"], title_standoff=2, row=1, col=col)
        fig.update_yaxes(autorange="reversed")
        for col in range(2, len(rules) + 1):                     # row labels once, at the left: no overlap
            fig.update_yaxes(showticklabels=False, row=1, col=col)
            fig.update_yaxes(showticklabels=False, row=2, col=col)
        fig.update_yaxes(title_text=axis["key"], row=1, col=1)
        fig.update_xaxes(type="category")                         # dims 1..V are names, not positions
        fig.update_annotations(font_size=font_size + 1)
        fig = base_layout(fig, height=height, font_size=font_size).update_layout(margin=dict(l=120, t=80))
        return horizontal_titles(fig, font_size)

    key = ("compare_step", tuple(rules), tuple(sorted(titles.items())), tuple(sorted(row_labels.items())),
           tuple(sorted(axis.items())), K, V, tuple(value_names or ()), font_size, height)
    return from_skeleton(key, build, [{"z": z, "text": text, "zmin": -zmax, "zmax": zmax} for z, text in panels])


def compare_step_html(recs: dict[str, StepRecords], target: np.ndarray, t: int, stage: str, *,
                      titles: dict[str, str], row_labels: dict[str, str], axis: dict[str, str],
                      value_names: list[str] | None = None, alt: str = "") -> str:
    """fig_compare_step's panels as HTML tables (gdn.figures.tables), what the page draws at every step:
    the rules' tables S side by side, their vector rows under them, the same numbers and "?"."""
    T, K, V = next(iter(recs.values())).stream.shape
    zmax, shown = _step(recs, target, t, stage)
    cols = list(value_names) if value_names else numbered(V)
    dims = dim_labels(K, axis.get("dim", "dim"))
    tables, vectors = [], []
    for i, (rule, (S, rows, text)) in enumerate(shown.items()):
        tables.append(Panel(titles[rule], S, dims, cols, row_labels=i == 0, axis=axis["value"], name=f"S_{rule}"))
        vectors.append(Panel("", rows, [row_labels[n] for n in VECTOR_ROWS], cols, row_labels=i == 0,
                             text=text, name=f"vectors_{rule}"))
    return (f'<div class="gdn-figure gdn-compare" role="figure" aria-label="{html.escape(alt)}">'
            + panels_table(tables, zmax, "gdn-tables") + panels_table(vectors, zmax, "gdn-tables vectors") + "</div>")


def _heatmap(z, text, x, y, zmax, font_size, name) -> go.Heatmap:
    return go.Heatmap(z=z, x=x, y=y, zmin=-zmax, zmax=zmax, colorscale=DIVERGING, showscale=False,
                      xgap=2, ygap=2, text=text, texttemplate="%{text}", textfont=dict(size=font_size + 2),
                      name=name, hovertemplate=f"{name}<br>%{{y}}, %{{x}}: %{{text}}<extra></extra>")


def fig_transpose_bug(S_right: np.ndarray, S_bug: np.ndarray, *, titles: tuple[str, str, str],
                      axis: dict[str, str], font_size: int = 14, height: int = 320) -> go.Figure:
    """Correct final S | transposed-write final S | their difference, all [K x V] (K == V here)."""
    panels = (S_right, S_bug, S_bug - S_right)
    zmax = symmetric_range(*panels)
    K, V = S_right.shape
    fig = make_subplots(rows=1, cols=3, subplot_titles=titles, horizontal_spacing=0.06)
    for col, z in enumerate(panels, start=1):
        fig.add_trace(_heatmap(z, cell_text(z), numbered(V), dim_labels(K, axis.get("dim", "dim")),
                               zmax, font_size, titles[col - 1]), row=1, col=col)
        if col > 1:                                          # the three tables share their rows
            fig.update_yaxes(showticklabels=False, row=1, col=col)
        fig.update_xaxes(title_text=axis["value"], title_standoff=2, row=1, col=col)
    fig.update_yaxes(autorange="reversed")
    fig.update_yaxes(title_text=axis["key"], title_standoff=6, row=1, col=1)
    fig.update_xaxes(type="category")
    fig.update_annotations(font_size=font_size + 1)
    fig = base_layout(fig, height=height, font_size=font_size).update_layout(margin=dict(l=110, b=2 * font_size + 24))
    return horizontal_titles(fig, font_size)


def fig_two_calls(panels: dict[str, np.ndarray], cut: int, *, titles: dict[str, str], token_labels: list[str],
                  axis: dict[str, str], font_size: int = 14, height: int = 360) -> go.Figure:
    """axis: {"value"}: the x axis title."""
    """Every token's output o_t [T x V] for each way of feeding the stream (panels: name -> [T, V]), one
    heatmap each, side by side; a line between token cut - 1 and cut marks where the second call starts."""
    names = list(panels)
    T, V = panels[names[0]].shape
    zmax = symmetric_range(*panels.values())
    fig = make_subplots(rows=1, cols=len(names), subplot_titles=[titles[n] for n in names], horizontal_spacing=0.05)
    x = numbered(V)
    fig.update_xaxes(type="category")
    for col, name in enumerate(names, start=1):
        z = panels[name]
        fig.add_trace(_heatmap(z, cell_text(z), x, token_labels, zmax, font_size, titles[name]), row=1, col=col)
        fig.add_shape(type="line", x0=-0.5, x1=V - 0.5, y0=cut - 0.5, y1=cut - 0.5, line=dict(color="#111827", width=3),
                      row=1, col=col)
        fig.update_xaxes(title_text=axis["value"], title_standoff=2, row=1, col=col)
        if col > 1:
            fig.update_yaxes(showticklabels=False, row=1, col=col)
    fig.update_yaxes(autorange="reversed")                    # the tick labels name the tokens: no axis title
    fig.update_annotations(font_size=font_size + 1)
    fig = base_layout(fig, height=height, font_size=font_size).update_layout(margin=dict(l=70, t=60))
    return horizontal_titles(fig, font_size)


def error_grid_html(errors: dict[str, np.ndarray], disagree: np.ndarray, *, names: dict[str, str],
                    corner: str, alt: str = "") -> str:
    """Small multiples under the player: one row per rule, one column per token (data-token, 0-based: the
    player frames the current token and scrubs to a clicked one), each cell the readout error
    ||o_t - target_t|| in white (0) to red; columns where the rules disagree (gdn.lessons.compare.disagreements)
    carry class "disagree"."""
    top = max(1e-9, max(float(np.max(e)) for e in errors.values()))
    T = len(disagree)
    head = "".join(f'<th class="col{" disagree" if disagree[t] else ""}" data-token="{t}">{t + 1}</th>' for t in range(T))
    rows = []
    for rule, err in errors.items():
        text, colours = cell_text(err), scale_rgb("Reds", np.asarray(err) / top * 0.85)
        cells = "".join(f'<td class="cell{" disagree" if disagree[t] else ""}" data-token="{t}" data-rule="{rule}" '
                        f'style="{cell_style(colours[t])}">{html.escape(str(text[t]))}</td>' for t in range(T))
        rows.append(f'<tr><th class="row">{html.escape(names[rule])}</th>{cells}</tr>')
    return (f'<table class="gdn-grid" role="figure" aria-label="{html.escape(alt, quote=True)}">'
            f'<tr><th class="corner">{html.escape(corner)}</th>{head}</tr>{"".join(rows)}</table>')
