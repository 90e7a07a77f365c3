"""The memory-table figure: one token's update of one head as aligned panels.

Top row, tables [K x V]: S_{t-1} | alpha S_{t-1} | write k (beta*e)^T | S_t.
Bottom row, vectors: k_t and q_t (key dims) | v_hat, v, e, beta*e (value dims) | o_t.
The panels the current stage acts on get a coloured frame; panels of later stages are blank
("not computed yet"), so stepping reveals the update in the order the kernel runs it.
"""
from __future__ import annotations

import html

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from gdn.figures.common import (
    ACTIVE,
    DIVERGING,
    base_layout,
    dim_labels,
    from_skeleton,
    horizontal_titles,
    numbered,
    symmetric_range,
)
from gdn.figures.tables import Panel, panels_table, widest_number
from gdn.lessons.memory import changed_rows
from gdn.lessons.stream import STAGES, StepRecords
from gdn.units import cell_text

# panel name -> (row, col) in the 2 x 4 grid; "read" spans columns 2-3 of the bottom row.
PANELS = {"S_prev": (1, 1), "S_decayed": (1, 2), "write": (1, 3), "S_new": (1, 4),
          "keys": (2, 1), "read": (2, 2), "output": (2, 4)}
# the stage at which each panel's numbers first exist
REVEALED_AT = {"S_prev": "decay", "keys": "decay", "S_decayed": "decay", "read": "read",
               "write": "write", "S_new": "write", "output": "query"}
ACTIVE_PANELS = {"decay": {"S_prev", "S_decayed"}, "read": {"S_decayed", "keys", "read"},
                 "error": {"read"}, "write": {"keys", "read", "write", "S_new"},
                 "query": {"S_new", "keys", "output"}}


def panel_arrays(rec: StepRecords, t: int, dim: str = "dim") -> dict[str, tuple[np.ndarray, list[str]]]:
    """Each panel's array (rows x cols) and its row labels, for token t (0-based)."""
    s = rec.stream
    beta = s.beta[t] * np.ones(s.shape[2])
    keys = np.stack([s.k[t], s.q[t]])                                               # [2, K]
    read = np.stack([rec.prediction[t], s.v[t], rec.error[t], beta * rec.error[t]])  # [4, V]
    key_rows = dim_labels(s.shape[1], dim)
    return {"S_prev": (rec.S_prev[t], key_rows), "S_decayed": (rec.S_decayed[t], key_rows),
            "write": (rec.write[t], key_rows), "S_new": (rec.S_new[t], key_rows),
            "keys": (keys, ["k", "q"]), "read": (read, ["v̂", "v", "e", "β⊙e"]),
            "output": (rec.output[t][None, :], ["o"])}


def _step(rec: StepRecords, t: int, stage: str, dim: str):
    """What both drawings of one step start from: each panel's array and row labels, the shared |z| bound,
    and whether each panel is computed yet at this stage."""
    if stage not in STAGES:
        raise ValueError(f"stage must be one of {STAGES}, got {stage!r}")
    arrays = panel_arrays(rec, t, dim)
    zmax = symmetric_range(rec.S_prev, rec.S_new, rec.write, rec.stream.v, rec.prediction, rec.output)
    shown = {name: STAGES.index(REVEALED_AT[name]) <= STAGES.index(stage) for name in PANELS}
    return arrays, zmax, shown


def fig_memory_step(rec: StepRecords, t: int, stage: str, *, titles: dict[str, str],
                    axis: dict[str, str], font_size: int = 14, height: int = 560) -> go.Figure:
    """titles: panel name -> title; axis: {"key": ..., "value": ..., "dim": ...} axis titles and the word for
    one dimension (already translated). t is the 0-based token index."""
    T, K, V = rec.stream.shape
    arrays, zmax, shown = _step(rec, t, stage, axis.get("dim", "dim"))
    data = []                                             # per panel, in PANELS order: what a step changes
    for name in PANELS:
        z, _ = arrays[name]
        data.append({"z": z if shown[name] else np.zeros_like(z),
                     "text": cell_text(z) if shown[name] else np.full(z.shape, "?"), "zmin": -zmax, "zmax": zmax})

    def build():
        specs = [[{}, {}, {}, {}], [{}, {"colspan": 2}, None, {}]]
        # Between the rows: the top tables' tick labels and axis title, then the bottom panels' titles.
        gap = min(0.35, (6 * font_size + 16) / (height - 70))          # of the plot area (height less margins)
        fig = make_subplots(rows=2, cols=4, specs=specs, row_heights=[0.66, 0.34], vertical_spacing=gap,
                            horizontal_spacing=0.05, subplot_titles=[titles[n] for n in PANELS])
        for (name, (row, col)), panel in zip(PANELS.items(), data):
            # Top row: 1..V under a "value dim" title; the short bottom row has no room for titles, so its
            # ticks name the dims themselves.
            cols = (dim_labels(K if name == "keys" else V, axis.get("dim", "dim")) if row == 2 else numbered(V))
            fig.add_trace(go.Heatmap(
                **panel, x=cols, y=arrays[name][1], colorscale=DIVERGING, showscale=False, xgap=2, ygap=2,
                opacity=1.0 if shown[name] else 0.25, texttemplate="%{text}", textfont=dict(size=font_size + 2),
                name=titles[name], hovertemplate=f"{titles[name]}<br>%{{y}}, %{{x}}: %{{text}}<extra></extra>"),
                row=row, col=col)
            # The four tables share their rows (key dims): only the first one names them.
            fig.update_yaxes(autorange="reversed", showticklabels=row == 2 or col == 1, row=row, col=col)
            fig.update_xaxes(type="category", row=row, col=col)
            if name in ACTIVE_PANELS[stage]:
                _frame(fig, row, col)
        for col in range(1, 5):
            fig.update_xaxes(title_text=axis["value"], row=1, col=col, title_standoff=2)
        fig.update_annotations(font_size=font_size + 1)
        fig = base_layout(fig, height=height, font_size=font_size)
        fig.update_layout(margin=dict(l=4 * font_size + 8, b=font_size + 16))   # room for "dim 1" at any size
        return horizontal_titles(fig, font_size)

    # The stage sets the frames, the blank panels' opacity; the rows' labels depend only on K.
    key = ("memory_step", stage, tuple(sorted(titles.items())), tuple(sorted(axis.items())), K, V, font_size, height)
    return from_skeleton(key, build, data)


# Wider tables than this (a real head replayed with 5 to 8 dims) go two to a row: four 8-column tables in one
# row left a real head's "-0.03" about 20 px at 1440 px, its numbers clipped into one another.
WIDE_V = 4


def memory_step_html(rec: StepRecords, t: int, stage: str, *, titles: dict[str, str], axis: dict[str, str],
                     alt: str = "") -> str:
    """fig_memory_step's panels as HTML tables (gdn.figures.tables): what the page draws at every step.
    Same numbers, colours, "?" panels and frames; the Plotly figure stays for the offline player."""
    T, K, V = rec.stream.shape
    arrays, zmax, shown = _step(rec, t, stage, axis.get("dim", "dim"))

    marked = tuple(changed_rows(rec, t)) if stage == "write" else ()     # the rows the write changes

    def panel(name: str, cols: list[str], **kw) -> Panel:
        z, rows = arrays[name]
        return Panel(titles[name], z, rows, cols, shown=shown[name], active=name in ACTIVE_PANELS[stage],
                     name=name, marked=marked if name in ("write", "S_new") else (), **kw)

    dims = lambda n: dim_labels(n, axis.get("dim", "dim"))
    # Top row: the four [K x V] tables share their rows (key dims), named once at the left.
    names = ("S_prev", "S_decayed", "write", "S_new")
    rows = [names] if V <= WIDE_V else [names[:2], names[2:]]
    chars = stream_chars(rec)                     # the same for every step: the numbers' size never jumps
    tables = [panels_table([panel(n, numbered(V), row_labels=i == 0, axis=axis["value"]) for i, n in enumerate(row)],
                           zmax, "gdn-tables", chars) for row in rows]
    # "dim 1 ... dim 8" over narrow columns ran into one another: wide vectors are numbered like the tables
    vec_cols = dims if max(K, V) <= WIDE_V else numbered
    vectors = [panel("keys", vec_cols(K)), panel("read", vec_cols(V)), panel("output", vec_cols(V))]
    return (f'<div class="gdn-figure gdn-memory" role="figure" aria-label="{html.escape(alt)}">'
            + "".join(tables) + panels_table(vectors, zmax, "gdn-tables vectors", chars) + "</div>")


def stream_chars(rec: StepRecords) -> int:
    """The widest number any step of the stream shows, in characters (at least 3: "0.5")."""
    arrays = (rec.S_prev, rec.S_decayed, rec.write, rec.S_new, rec.prediction, rec.error, rec.output,
              rec.stream.k, rec.stream.v, rec.stream.q, rec.stream.beta)
    return max(3, widest_number(*arrays))


def _frame(fig: go.Figure, row: int, col: int) -> None:
    """A thick rounded frame around one subplot's domain (paper coordinates)."""
    sub = fig.get_subplot(row, col)
    x0, x1 = sub.xaxis.domain
    y0, y1 = sub.yaxis.domain
    fig.add_shape(type="rect", xref="paper", yref="paper", x0=x0 - 0.006, x1=x1 + 0.006,
                  y0=y0 - 0.012, y1=y1 + 0.012, line=dict(color=ACTIVE, width=4))


def fig_timeline(rec: StepRecords, t: int, *, labels: dict[str, str], font_size: int = 14,
                 token_names: list[str] | None = None) -> go.Figure:
    """alpha_t and beta_t of every token as bars, token t (0-based) marked: the scrub bar's context.
    Tokens are numbered from 1, like everywhere in the app. token_names: each token's text (real prompts).
    The mark is a trace, not a layout shape, so a step swaps only data (from_skeleton)."""
    T = rec.stream.shape[0]
    tokens = list(range(1, T + 1))
    beta = rec.stream.beta if rec.stream.beta.ndim == 1 else rec.stream.beta.mean(axis=1)
    data = [{"x": [t + 1]}, {"y": rec.stream.alpha}, {"y": beta}]

    def build():
        fig = go.Figure([        # the mark: a full-width bar drawn first, under the others (an offset keeps it out of the group)
            go.Bar(**data[0], y=[1.05], width=1, offset=-0.5, marker=dict(color=ACTIVE, opacity=0.18, line_width=0),
                   hoverinfo="skip", showlegend=False),
            go.Bar(x=tokens, **data[1], name=labels["alpha"], marker_color="#64748b"),
            go.Bar(x=tokens, **data[2], name=labels["beta"], marker_color="#f59e0b")])
        ticks = dict(tickvals=tokens, ticktext=[f"{i} {n}" for i, n in zip(tokens, token_names)]) if token_names else {}
        fig.update_layout(barmode="group", yaxis_range=[0, 1.05],
                          xaxis=dict(title=labels["token"], dtick=1, range=[0.5, T + 0.5], **ticks),
                          # above the plot area, right-aligned: never over the first token's bars
                          legend=dict(orientation="h", y=1.0, yanchor="bottom", x=1.0, xanchor="right"))
        fig.update_xaxes(title_standoff=4)
        fig = base_layout(fig, height=150 + 2 * font_size, font_size=font_size).update_layout(
            margin=dict(l=50, t=28, b=2 * font_size + 18))
        return horizontal_titles(fig, font_size)

    key = ("memory_timeline", tuple(sorted(labels.items())), font_size, T, tuple(token_names or ()))
    return from_skeleton(key, build, data)


def fig_memory_player(rec: StepRecords, *, titles: dict[str, str], axis: dict[str, str], step_label,
                      play: str, pause: str, font_size: int = 14, height: int = 620) -> go.Figure:
    """Every (token, stage) of fig_memory_step as client-side frames with a slider and play button:
    a self-contained animation for slides (fig.to_html(include_plotlyjs=True) plays offline).
    step_label(t, stage) -> the slider's label of one step."""
    T = rec.stream.shape[0]
    steps = [(t, s) for t in range(T) for s in STAGES]
    figs = [fig_memory_step(rec, t, s, titles=titles, axis=axis, font_size=font_size, height=height)
            for t, s in steps]
    fig = go.Figure(figs[0])
    # Heatmap frames must redraw (plotly.js cannot tween heatmaps); shapes carry the stage frame.
    fig.frames = [go.Frame(data=f.data, layout=dict(shapes=f.layout.shapes), name=str(i))
                  for i, f in enumerate(figs)]
    animate = lambda names, mode: dict(method="animate", args=[names, dict(
        mode=mode, frame=dict(duration=900, redraw=True), transition=dict(duration=0), fromcurrent=True)])
    fig.update_layout(
        height=height + 90, margin=dict(b=110),
        updatemenus=[dict(type="buttons", direction="left", x=0, y=-0.08, xanchor="left", yanchor="top",
                          buttons=[dict(label=play, **animate(None, "immediate")),
                                   dict(label=pause, **animate([None], "immediate"))])],
        sliders=[dict(active=0, x=0.15, len=0.85, y=-0.05, yanchor="top", currentvalue=dict(prefix=""),
                      steps=[dict(label=step_label(t, s), **animate([str(i)], "immediate"))
                             for i, (t, s) in enumerate(steps)])])
    return fig


# ---- the player's HTML parts (app_pages/_support/player.py): notation, the side rules, the timeline -----

def _m(text: str) -> str:
    """Math in the app's notation as HTML: <sub>/<sup> marks, set in a math face."""
    return f'<span class="gdn-math">{text}</span>'


# Each stage's rule, the same notation as the LaTeX of gdn.lessons.memory.STAGE_SYMBOLS: S is d_k x d_v,
# reads are S^T k.
STAGE_HTML = {
    "decay": _m("S̃ = α<sub>t</sub> S<sub>t−1</sub>"),
    "read": _m("v̂ = S̃<sup>⊤</sup>k<sub>t</sub>"),
    "error": _m("e = v<sub>t</sub> − v̂"),
    "write": _m("S<sub>t</sub> = S̃ + k<sub>t</sub> (β<sub>t</sub> ⊙ e)<sup>⊤</sup>"),
    "query": _m("o<sub>t</sub> = S<sub>t</sub><sup>⊤</sup>q<sub>t</sub>"),
}
CLOSED_FORM_HTML = _m("S<sub>t</sub> = α<sub>t</sub> (I − β<sub>t</sub> k<sub>t</sub>k<sub>t</sub><sup>⊤</sup>) "
                      "S<sub>t−1</sub> + β<sub>t</sub> k<sub>t</sub>v<sub>t</sub><sup>⊤</sup>")


def rules_html(stage: str, *, explain: str, closed_label: str, note: str) -> str:
    """Beside the panels: what this stage does (explain), the five rules with this stage's highlighted,
    and the whole update in one line. Texts are plain (escaped here)."""
    lines = "".join(f'<div class="{"now" if s == stage else ""}">{STAGE_HTML[s]}</div>' for s in STAGES)
    return (f"<div>{html.escape(explain)}</div><div class=\"rules\">{lines}</div>"
            f'<div class="note">{html.escape(closed_label)}</div><div>{CLOSED_FORM_HTML}</div>'
            f'<div class="note">{html.escape(note)}</div>')


def timeline_html(rec: StepRecords, *, labels: dict[str, str], token_names: list[str] | None = None) -> str:
    """alpha_t and beta_t of every token as bars in one column per token (data-token: the 0-based index,
    which the player frames when it is the current token, and scrubs to on a click). Tokens count from 1.
    labels: {"alpha", "beta", "token"} (translated)."""
    s = rec.stream
    alpha = s.alpha if s.alpha.ndim == 1 else s.alpha.mean(axis=1)
    beta = s.beta if s.beta.ndim == 1 else s.beta.mean(axis=1)
    a_txt, b_txt = cell_text(alpha), cell_text(beta)
    columns = []
    for t in range(s.shape[0]):
        name = f" · {token_names[t]}" if token_names and t < len(token_names) else ""
        hover = html.escape(f"{labels['token']} = {t + 1}{name} · α = {a_txt[t]} · β = {b_txt[t]}", quote=True)
        columns.append(
            f'<div class="tok" data-token="{t}" title="{hover}"><div class="bars">'
            f'<div class="bar alpha" style="height:{100 * float(alpha[t]):.1f}%"></div>'
            f'<div class="bar beta" style="height:{100 * float(beta[t]):.1f}%"></div></div>'
            f'<div class="lab">{t + 1}</div></div>')
    legend = (f'<div class="gdn-timeline-legend"><span><span class="sw" style="background:#2563eb"></span>'
              f'{html.escape(labels["alpha"])}</span><span><span class="sw" style="background:#f59e0b"></span>'
              f'{html.escape(labels["beta"])}</span><span>{html.escape(labels["token"])}</span></div>')
    return f'{legend}<div class="gdn-timeline" role="img" aria-label="{html.escape(labels.get("alt", ""), quote=True)}">' \
           + "".join(columns) + "</div>"
