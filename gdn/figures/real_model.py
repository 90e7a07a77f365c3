"""Figures of the real-model page: gates of a real Qwen3.5 prompt. Pure functions, arrays in, Figure out.

Every hover names the token, the layer, the head and the value. T tokens, H value heads, L GDN layers.
`labels` carries the translated words: token, layer, head, alpha, beta, norm, half_life, key, value, ...
"""
from __future__ import annotations

import html

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from gdn.figures.common import (
    ACTIVE,
    DIVERGING,
    SEQUENTIAL,
    base_layout,
    from_skeleton,
    horizontal_titles,
    stacked,
    symmetric_range,
    wide,
)
from gdn.figures.tables import cell_style, gradient_css, scale_rgb

TICK_TOKENS = 48            # up to this many tokens, the token axis shows the tokens themselves
ALPHA_COLORS = "Blues"      # dark = remembers (α near 1)
BETA_COLORS = "Oranges"     # dark = writes hard (β near 1)


def token_axis(T: int) -> list[int]:
    """x of T tokens: they count from 1 (t = 1, 2, …) on every axis, hover and slider of the page, as in
    the guesses table and the HTML gates; arrays stay indexed from 0."""
    return list(range(1, T + 1))


def token_ticks(tokens, limit: int = TICK_TOKENS) -> dict:
    """Axis settings for a token axis (token_axis): the pieces themselves when there are few, else numbers.
    Pieces with CJK stand upright, one character a line under their number (never turned sideways);
    Latin pieces are turned by 60 degrees."""
    T = len(tokens)
    if T > limit:
        return dict(title_standoff=4)
    if _upright(tokens):
        text = [f"{i + 1}<br>{stacked(_show(p))}" for i, p in enumerate(tokens)]
        return dict(tickmode="array", tickvals=token_axis(T), ticktext=text, tickangle=0)
    text = [f"{i + 1}·{_show(p)}" for i, p in enumerate(tokens)]
    return dict(tickmode="array", tickvals=token_axis(T), ticktext=text, tickangle=-60)


def _upright(tokens) -> bool:
    return any(wide(ch) for p in tokens for ch in (p or ""))


def tick_depth(tokens, size: int, limit: int = TICK_TOKENS) -> int:
    """Pixels a token axis's tick labels (token_ticks) reach below the axis at font size `size`: the
    bottom margin to reserve for them. Measured here instead of Plotly's automargin, which lays the whole
    figure out twice when it is drawn (about half of a new gates figure's drawing time in Chromium)."""
    if len(tokens) > limit:
        return round(1.6 * size)                                        # horizontal indices
    if _upright(tokens):                                                # stacked lines: the number, then the piece
        return round(1.25 * size * (1 + max(stacked(_show(p)).count("<br>") + 1 for p in tokens)) + 8)
    width = max(sum(1.0 if ord(ch) > 0x2e7f else 0.62 for ch in f"{i + 1}·{_show(p)}") for i, p in enumerate(tokens))
    return round(size * (width * 0.866 + 0.5) + 8)                      # labels turned by 60 degrees


def _show(piece: str) -> str:
    """A token piece as it should read on an axis or in a hover: spaces and newlines made visible."""
    return (piece or "·").replace("\n", "↵").replace(" ", "␣")[:16]




OVERVIEW_CSS = """<style>
.rm-ov{display:flex;gap:1.2em;font-size:0.85em;color:#374151}
.rm-ov figure{margin:0;flex:1 1 0;min-width:0}
.rm-ov figcaption{font-weight:600;text-align:center;margin-bottom:0.2em}
.rm-ov table{border-collapse:separate;border-spacing:1px;width:100%;table-layout:fixed}
.rm-ov td{height:1.15em;padding:0}
.rm-ov th{font-weight:400;color:#6b7280;padding:0 0.3em 0 0;text-align:right;width:2.2em;white-space:nowrap}
.rm-ov thead th{text-align:center;padding:0;width:auto}
.rm-ov thead th:first-child{text-align:right;padding-right:0.3em;width:2.2em;overflow:visible}
.rm-ov tr.sel td{box-shadow:inset 0 3px 0 ACTIVE,inset 0 -3px 0 ACTIVE}
.rm-ov tr.sel td:first-of-type{box-shadow:inset 3px 3px 0 ACTIVE,inset 0 -3px 0 ACTIVE}
.rm-ov tr.sel td:last-of-type{box-shadow:inset -3px 3px 0 ACTIVE,inset 0 -3px 0 ACTIVE}
.rm-ov tr.sel th{color:ACTIVE;font-weight:700}
.rm-ov .bar{height:0.6em;margin:0.35em 0 0 2.2em;border-radius:2px}
.rm-ov .ticks{display:flex;justify-content:space-between;margin-left:2.2em;color:#6b7280}
.rm-ov .axis{text-align:center;color:#6b7280}
</style>""".replace("ACTIVE", ACTIVE)


def overview_html(summary: dict[str, np.ndarray], *, layers: list[int], selected: int | None,
                  titles: dict[str, str], labels: dict[str, str], alt: str = "") -> str:
    """summary: {"alpha", "beta", "half_life"} -> [L, H] (gdn.qwen35.gates.head_summary over all GDN layers)
    as three HTML tables, GDN layers (rows) x heads (columns): mean α, mean β, half-life on a log colour
    scale; the chosen layer framed. The page draws this and its download is this (a new layer only moves
    the frame; a Plotly figure would be mounted anew). A cell's title (hover) names the layer, the head
    and the value; each panel's colour bar sits under it."""
    L, H = summary["alpha"].shape
    hl = summary["half_life"]
    hl_log = np.log10(np.clip(np.where(np.isfinite(hl), hl, 1e4), 0.1, 1e4))
    panels = [("alpha", summary["alpha"], ALPHA_COLORS, (0.0, 1.0), lambda x: f"{x:.3f}", ["0", "0.5", "1"]),
              ("beta", summary["beta"], BETA_COLORS, (0.0, 1.0), lambda x: f"{x:.3f}", ["0", "0.5", "1"]),
              ("half_life", hl_log, SEQUENTIAL, (-1.0, 4.0), lambda x: "∞" if not np.isfinite(x) else f"{x:.3g}",
               ["0.1", "1", "10", "100", "1k", "≥10k"])]
    esc = html.escape
    out = []
    for key, z, scale, (lo, hi), fmt, ticks in panels:
        rgb = np.rint(scale_rgb(scale, (z - lo) / (hi - lo))).astype(int)
        shown = hl if key == "half_life" else z
        head = "".join(f"<th>{h}</th>" for h in range(H))
        rows = []
        for r, layer in enumerate(layers):
            cells = "".join(
                f'<td style="background:rgb({rgb[r, h, 0]},{rgb[r, h, 1]},{rgb[r, h, 2]})" title="'
                f'{esc(labels["layer"])} {layer} · {esc(labels["head"])} {h}&#10;{esc(titles[key])} = '
                f'{fmt(shown[r, h])}"></td>' for h in range(H))
            rows.append(f'<tr{" class=sel" if layer == selected else ""}><th>{layer}</th>{cells}</tr>')
        out.append(f"<figure><figcaption>{esc(titles[key])}</figcaption><table><thead><tr><th>{esc(labels['layer'])}</th>"
                   f"{head}</tr></thead>"
                   f"<tbody>{''.join(rows)}</tbody></table><div class=axis>{esc(labels['head'])}</div>"
                   f'<div class=bar style="background:{gradient_css(scale)}"></div>'
                   f"<div class=ticks>{''.join(f'<span>{t}</span>' for t in ticks)}</div></figure>")
    return OVERVIEW_CSS + f'<div class="gdn-figure rm-ov" role="figure" aria-label="{esc(alt)}">' + "".join(out) + "</div>"


def fig_head_detail(alpha: np.ndarray, beta: np.ndarray, norms: np.ndarray, *, tokens, layer: int, head: int,
                    marked: int | None, titles: dict[str, str], labels: dict[str, str], font_size: int = 14,
                    height: int = 420) -> go.Figure:
    """alpha, beta, norms: [T] of one head. Top: α_t and β_t; bottom: ||S_t||. `marked` (a token index,
    from 0) draws a line."""
    T = len(alpha)
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.1, row_heights=[0.55, 0.45],
                        subplot_titles=[titles["gates"], titles["norm"]])
    pieces = [_show(p) for p in tokens]
    where = f"{labels['token']} %{{x}} «%{{customdata}}»<br>{labels['layer']} {layer} · {labels['head']} {head}<br>"
    mode = "lines+markers" if T <= 128 else "lines"
    for y, name, color, row in ((alpha, "α", "#1d4ed8", 1), (beta, "β", "#ea580c", 1),
                                (norms, labels["norm"], "#059669", 2)):
        fig.add_trace(go.Scatter(x=token_axis(T), y=y, name=name, mode=mode, line=dict(color=color, width=2),
                                 marker=dict(size=5), customdata=pieces,
                                 hovertemplate=where + f"{name} = %{{y:.3~g}}<extra></extra>"), row=row, col=1)
    fig.update_yaxes(range=[0, 1.05], row=1, col=1)
    fig.update_yaxes(rangemode="tozero", row=2, col=1)
    fig.update_xaxes(title_text=labels["token"], row=2, col=1, **{"title_standoff": 10, **token_ticks(tokens)})
    if marked is not None:
        fig.add_vline(x=marked + 1, line=dict(color="#f59e0b", width=2, dash="dot"))
    fig.update_annotations(font_size=font_size)
    # the legend on its own row at the top of the figure, above the first plot's title (at lecture size the
    # two ran into each other)
    fig.update_layout(legend=dict(orientation="h", yref="container", y=1, yanchor="top", x=1, xanchor="right"),
                      hovermode="x unified")
    # the turned token labels, the standoff and the axis title below the plot (they ran into each other);
    # the figure grows by what they need, so the plots keep their height
    top, bottom = round(3 * font_size) + 16, tick_depth(tokens, font_size) + 10 + round(1.4 * font_size) + 8
    fig = base_layout(fig, height=height + bottom - 55 + top - 60, font_size=font_size).update_layout(
        margin=dict(l=70, t=top, b=bottom))
    return horizontal_titles(fig, font_size)


def fig_state_block(block: np.ndarray, rows: np.ndarray, cols: np.ndarray, *, title: str, labels: dict[str, str],
                    layer: int, head: int, token: int, font_size: int = 14, height: int = 460) -> go.Figure:
    """block: [n, n] = S_t[rows][:, cols] of one head (gdn.qwen35.gates.top_block); rows are key dims, cols value
    dims; token: the token's number as the page shows it (from 1)."""
    zmax = symmetric_range(block)
    hover = (f"{labels['token']} {token} · {labels['layer']} {layer} · {labels['head']} {head}<br>"
             f"{labels['key']} %{{y}} · {labels['value']} %{{x}}<br>S = %{{z:.3~g}}<extra></extra>")
    fig = go.Figure(go.Heatmap(z=block, x=[f"v{j}" for j in cols], y=[f"k{i}" for i in rows], zmin=-zmax, zmax=zmax,
                               colorscale=DIVERGING, zmid=0, xgap=1, ygap=1, hovertemplate=hover,
                               colorbar=dict(thickness=12)))
    fig.update_xaxes(title_text=labels["value"], type="category")
    fig.update_yaxes(title_text=labels["key"], autorange="reversed", type="category")
    fig.update_layout(title=dict(text=title))
    fig = base_layout(fig, height=height, font_size=font_size).update_layout(margin=dict(l=60, b=60))
    return horizontal_titles(fig, font_size)


def fig_head_params(A: np.ndarray, dt_bias: np.ndarray, *, layer: int, titles: dict[str, str],
                    labels: dict[str, str], font_size: int = 14, height: int = 300) -> go.Figure:
    """A = exp(A_log) [H] (fixed forgetting speed: bigger forgets faster) and dt_bias [H] of one layer."""
    H = len(A)
    fig = make_subplots(rows=1, cols=2, subplot_titles=[titles["A"], titles["dt_bias"]], horizontal_spacing=0.1)
    for col, (y, color, name) in enumerate(((A, "#7c3aed", "exp(A_log)"), (dt_bias, "#0891b2", "dt_bias")), start=1):
        fig.add_trace(go.Bar(x=list(range(H)), y=y, marker_color=color, name=name, showlegend=False,
                             hovertemplate=f"{labels['layer']} {layer} · {labels['head']} %{{x}}<br>{name} = "
                                           f"%{{y:.3~g}}<extra></extra>"), row=1, col=col)
        fig.update_xaxes(title_text=labels["head"], dtick=1 if H <= 32 else None, row=1, col=col)
    fig.update_annotations(font_size=font_size)
    fig = base_layout(fig, height=height, font_size=font_size).update_layout(margin=dict(l=55, b=50))
    return horizontal_titles(fig, font_size)


# ---- the page's main figure: α and β of one layer, and the model's next-token guesses, on one token axis

MARK_COLORS = {"alpha": "#dc2626", "beta": "#16a34a"}   # ### where α drops; value words where β spikes
TEXT_TOKENS = 20            # up to this many tokens the guesses are written in their cells


def fig_gates_predictions(alpha: np.ndarray, beta: np.ndarray, *, tokens, layer: int, top_tokens, top_p: np.ndarray,
                          titles: dict[str, str], labels: dict[str, str], marks=(), answers=(),
                          font_size: int = 14, height: int = 560) -> go.Figure:
    """alpha, beta: [T, H] of one GDN layer; top_tokens: [T][3] next-token pieces, top_p: [T, 3] their
    probabilities (after token t). Three rows on one token axis: α (heads x tokens), β, and the top-3 guesses.

    marks: (t, head, "alpha" | "beta") cells to circle (gdn.qwen35.demo.stories.gate_marks).
    answers: (t, expected piece, right) for task prompts: a ✓ or ✗ over the guess after token t.
    """
    T, H = alpha.shape
    guess = np.array([[_show(p) for p in row] for row in top_tokens], dtype=object)          # [T, 3]
    pieces = [_show(p) for p in tokens]
    guess_hover = np.array([[f"{labels['token']} {t + 1} «{pieces[t]}» →<br>" + "<br>".join(
        f"{k + 1}. «{guess[t, k]}» {top_p[t, k]:.2f}" for k in range(guess.shape[1])) for t in range(T)]] * guess.shape[1],
        dtype=object)

    def build() -> go.Figure:
        fig = make_subplots(rows=3, cols=1, shared_xaxes=True, vertical_spacing=0.09, row_heights=[0.37, 0.37, 0.26],
                            subplot_titles=[titles["alpha"], titles["beta"], titles["predictions"]])
        for row, (name, z, scale) in enumerate((("α", alpha, ALPHA_COLORS), ("β", beta, BETA_COLORS)), start=1):
            hover = (f"{labels['token']} %{{x}} «%{{customdata}}»<br>{labels['layer']} {layer} · "
                     f"{labels['head']} %{{y}}<br>{name} = %{{z:.3~g}}<extra></extra>")
            fig.add_trace(go.Heatmap(z=z.T, x=token_axis(T), y=list(range(H)), customdata=np.broadcast_to(
                np.array(pieces, dtype=object), (H, T)), zmin=0, zmax=1, colorscale=scale, hovertemplate=hover,
                xgap=1 if T <= 64 else 0, ygap=1, colorbar=dict(title=dict(text=name), thickness=12)), row=row, col=1)
            lo, hi = fig.layout["yaxis" if row == 1 else f"yaxis{row}"].domain                  # the colour bar beside its row
            fig.data[-1].colorbar.update(y=(lo + hi) / 2, len=hi - lo)
            fig.update_yaxes(title_text=labels["head"], autorange="reversed", dtick=1 if H <= 16 else None,
                             showticklabels=True, row=row, col=1)
        for t, h, gate in marks:
            fig.add_shape(type="rect", x0=t + 0.5, x1=t + 1.5, y0=h - 0.5, y1=h + 0.5, row=1 if gate == "alpha" else 2,
                          col=1, line=dict(color=MARK_COLORS[gate], width=3))
        show_text = T <= TEXT_TOKENS                                              # else the table under the figure has them
        fig.add_trace(go.Heatmap(z=top_p.T, x=token_axis(T), y=[f"#{k + 1}" for k in range(guess.shape[1])],
                                 text=guess.T if show_text else None, texttemplate="%{text}" if show_text else None,
                                 textfont=dict(size=max(9, font_size - 4)), customdata=guess_hover,
                                 hovertemplate="%{customdata}<extra></extra>", zmin=0, zmax=1, colorscale="Greens",
                                 showscale=False, xgap=1 if T <= 64 else 0, ygap=1), row=3, col=1)
        fig.update_yaxes(autorange="reversed", type="category", row=3, col=1)      # the row title says what it is
        for t, expected, right in answers:
            fig.add_annotation(x=t + 1, y=-0.5, yref="y3", text="✓" if right else f"✗ {_show(expected)}", showarrow=False,
                               yshift=10, font=dict(color="#15803d" if right else "#b91c1c", size=font_size), row=3, col=1)
        tick_size = max(10, font_size - (8 if T > 24 else 2))
        fig.update_xaxes(**token_ticks(tokens), tickfont=dict(size=tick_size), row=3, col=1)
        fig.update_xaxes(title_text=labels["token"], title_standoff=10, row=3, col=1)
        fig.update_annotations(font_size=font_size)
        bottom = tick_depth(tokens, tick_size) + 10 + round(1.4 * font_size) + 8        # ticks, standoff, title
        fig = base_layout(fig, height=height, font_size=font_size).update_layout(margin=dict(l=60, r=10, t=40, b=bottom))
        return horizontal_titles(fig, font_size)

    # Built once per prompt and layer (the marks and hovers name the layer): going back to a layer swaps only
    # the gates and the guesses into its skeleton.
    key = ("gates_predictions", tuple(tokens), H, layer, tuple(sorted(titles.items())), tuple(sorted(labels.items())),
           tuple(tuple(m) for m in marks), tuple(tuple(a) for a in answers), font_size, height)
    guesses = {"z": top_p.T, "customdata": guess_hover, **({"text": guess.T} if T <= TEXT_TOKENS else {})}
    return from_skeleton(key, build, [{"z": alpha.T}, {"z": beta.T}, guesses])


# The page draws the gates as HTML (gates_html) up to 128 tokens and 4,480 cells (128 tokens x 16 heads x 2
# gates + 3 guess rows: ~0.5 MB, sent again at every layer change); beyond, as Plotly (smaller for many cells).
HTML_TOKENS, HTML_CELLS = 128, 4480


def draws_as_html(T: int, H: int) -> bool:
    """Whether the page draws the gates of T tokens and H heads as HTML (gates_html) or as Plotly."""
    return T <= HTML_TOKENS and T * (2 * H + 3) <= HTML_CELLS


GATES_CSS = """<style>
.rm-gates table{border-collapse:separate;border-spacing:1px;width:100%;table-layout:fixed;font-size:0.85em;color:#374151}
.rm-gates col.lab{width:3.2em}
.rm-gates td{padding:0;height:var(--row,1.2em)}
.rm-gates th{font-weight:400;color:#6b7280;text-align:right;padding:0 0.35em 0 0;white-space:nowrap}
.rm-gates tr.title th{font-weight:600;color:#1f2937;text-align:left;padding:0.5em 0 0.15em 0}
.rm-gates tr.title th:first-child{font-weight:400;color:#6b7280;text-align:right;padding-right:0.35em;vertical-align:bottom}
.rm-gates .scale{float:right;font-weight:400;color:#6b7280}
.rm-gates .scale i{display:inline-block;width:6em;height:0.7em;margin:0 0.3em;vertical-align:middle;border-radius:2px}
.rm-gates td.mark-alpha{box-shadow:inset 0 0 0 3px MARK_ALPHA}
.rm-gates td.mark-beta{box-shadow:inset 0 0 0 3px MARK_BETA}
.rm-gates tr.guess td{height:1.5em;text-align:center;overflow:hidden;text-overflow:ellipsis;white-space:nowrap;font-size:0.85em}
.rm-gates tr.answer td{text-align:center;font-weight:700;overflow:visible;white-space:nowrap;height:1.3em}
.rm-gates tr.answer td.right{color:#15803d}
.rm-gates tr.answer td.wrong{color:#b91c1c}
.rm-gates tr.ticks th{vertical-align:top}
.rm-gates tr.ticks th.tok{text-align:center;padding:0.2em 0 0 0;overflow:hidden}
.rm-gates tr.ticks.sparse th.tok{overflow:visible}
.rm-gates tr.ticks th.tok span{writing-mode:vertical-rl;text-orientation:sideways;transform:rotate(180deg);white-space:nowrap}
.rm-gates tr.ticks th.tok span.up{text-orientation:mixed;transform:none}
</style>""".replace("MARK_ALPHA", MARK_COLORS["alpha"]).replace("MARK_BETA", MARK_COLORS["beta"])


def gates_html(alpha: np.ndarray, beta: np.ndarray, *, tokens, layer: int, top_tokens, top_p: np.ndarray,
               titles: dict[str, str], labels: dict[str, str], marks=(), answers=(), alt: str = "") -> str:
    """fig_gates_predictions as one HTML table (what the page draws where draws_as_html allows): Streamlit
    mounts a new Plotly chart for every new layer, and this figure's newPlot was most of a layer change's
    time in the browser. Same rows on one token axis: α (heads x tokens), β, the top-3 guesses with the
    answers' ✓ / ✗ over them; same colour scales and circled marks. A cell's title (hover) names the token
    (counted from 1, as on the axis), the layer, the head and the value."""
    T, H = alpha.shape
    esc = html.escape
    pieces = [esc(_show(p)) for p in tokens]
    where = [f"{esc(labels['token'])} {t + 1} «{pieces[t]}»" for t in range(T)]
    layer_head = f"{esc(labels['layer'])} {layer} · {esc(labels['head'])}"
    marked = {(t, h, gate) for t, h, gate in marks}

    def bar(scale) -> str:
        return f'<span class="scale">0<i style="background:{gradient_css(scale)}"></i>1</span>'

    def title_row(text: str, corner: str, scale=None) -> str:
        return (f'<tr class="title"><th>{esc(corner)}</th><th colspan="{T}">{esc(text)}'
                f'{bar(scale) if scale else ""}</th></tr>')

    rows = []
    for gate, name, z, scale in (("alpha", "α", alpha, ALPHA_COLORS), ("beta", "β", beta, BETA_COLORS)):
        rgb = np.rint(scale_rgb(scale, z)).astype(int)                                  # [T, H, 3]
        rows.append(title_row(titles[gate], labels["head"], scale))
        for h in range(H):
            cells = "".join(
                f'<td data-tok="{t}"{" class=mark-" + gate if (t, h, gate) in marked else ""} style="background:#{rgb[t, h, 0]:02x}'
                f'{rgb[t, h, 1]:02x}{rgb[t, h, 2]:02x}" title="{where[t]} · {layer_head} {h}&#10;{name} = '
                f'{z[t, h]:.3f}"></td>' for t in range(T))
            rows.append(f'<tr data-gate="{gate}"><th>{h}</th>{cells}</tr>')
    rows.append(title_row(titles["predictions"], ""))
    if answers:
        said = {t: (expected, right) for t, expected, right in answers}
        rows.append('<tr class="answer"><th></th>' + "".join(
            "<td></td>" if t not in said else f'<td class="right" data-tok="{t}">✓</td>' if said[t][1]
            else f'<td class="wrong" data-tok="{t}">✗ {esc(_show(said[t][0]))}</td>' for t in range(T)) + "</tr>")
    rgb = np.rint(scale_rgb("Greens", top_p)).astype(int)                              # [T, 3, 3]
    for k in range(top_p.shape[1]):
        cells = []
        for t in range(T):
            guess = esc(_show(top_tokens[t][k]))
            hover = f"{where[t]} →&#10;" + "&#10;".join(f"{j + 1}. «{esc(_show(top_tokens[t][j]))}» {top_p[t, j]:.2f}"
                                                      for j in range(top_p.shape[1]))
            cells.append(f'<td data-tok="{t}" style="{cell_style(rgb[t, k])}" title="{hover}">{guess if T <= TEXT_TOKENS else ""}</td>')
        rows.append(f'<tr class="guess" data-k="{k + 1}"><th>#{k + 1}</th>{"".join(cells)}</tr>')
    step = 1 if T <= TICK_TOKENS else max(5, 5 * round(T / 24 / 5))                 # every token, or every 5th, 10th...
    # a piece with CJK is written upright, top to bottom (class "up"); Latin text is turned to read upwards
    up = lambda t: ' class="up"' if step == 1 and any(map(wide, tokens[t] or "")) else ""
    label = lambda t: f"{t + 1}·{pieces[t]}" if step == 1 else t + 1 if (t + 1) % step == 0 else ""
    ticks = "".join(f'<th class="tok" data-tok="{t}"><span{up(t)}>{label(t)}</span></th>' for t in range(T))
    # every 5th or 10th index is wider than its column: shown over the empty neighbours
    rows.append(f'<tr class="ticks{" sparse" if step > 1 else ""}"><th>{esc(labels["token"])}</th>{ticks}</tr>')
    height = max(0.9, min(1.9, 16 / H))                                  # a few heads get tall rows, 16 heads short ones
    return (GATES_CSS + f'<div class="gdn-figure rm-gates" role="figure" aria-label="{esc(alt)}" style="--row:{height:.2f}em">'
            f'<table><colgroup><col class="lab">{"<col>" * T}</colgroup>{"".join(rows)}</table></div>')


def fig_gate_pair(before: np.ndarray, after: np.ndarray, *, tokens, layer: int, name: str, titles: list[str],
                  labels: dict[str, str], colorscale=ALPHA_COLORS, changed: tuple = (), font_size: int = 14,
                  height: int = 360) -> go.Figure:
    """before, after: [T, H] one gate of one layer without and with an intervention, side by side;
    changed: the heads the intervention set (framed in the right panel)."""
    T, H = before.shape
    fig = make_subplots(rows=1, cols=2, shared_yaxes=True, horizontal_spacing=0.04, subplot_titles=titles)
    for col, z in enumerate((before, after), start=1):
        fig.add_trace(go.Heatmap(z=z.T, x=token_axis(T), y=list(range(H)), zmin=0, zmax=1, colorscale=colorscale,
                                 showscale=col == 2, colorbar=dict(title=dict(text=name), thickness=12),
                                 xgap=1 if T <= 64 else 0, ygap=1,
                                 hovertemplate=f"{labels['token']} %{{x}} · {labels['head']} %{{y}}<br>{name} = "
                                               f"%{{z:.3~g}}<extra></extra>"), row=1, col=col)
        fig.update_xaxes(title_text=labels["token"], row=1, col=col)
    for h in changed:
        fig.add_shape(type="rect", x0=0.5, x1=T + 0.5, y0=h - 0.5, y1=h + 0.5, line=dict(color=ACTIVE, width=3),
                      row=1, col=2)
    fig.update_yaxes(title_text=labels["head"], autorange="reversed", dtick=1 if H <= 16 else None, row=1, col=1)
    fig.update_annotations(font_size=font_size)
    fig = base_layout(fig, height=height, font_size=font_size).update_layout(margin=dict(l=60, r=10, t=50, b=40))
    return horizontal_titles(fig, font_size)


def fig_kernel_outputs(outputs: dict[str, np.ndarray], *, tokens, layer: int, head: int, titles: dict[str, str],
                       labels: dict[str, str], font_size: int = 14, height: int = 340) -> go.Figure:
    """outputs: kernel name -> o [T, V] of one head (recurrent first); one panel per kernel, then |Δ| of
    each further kernel against the first. Value dims are rows, tokens columns."""
    names = list(outputs)
    ref = outputs[names[0]]
    panels = [(titles[n], outputs[n], False) for n in names] + [(titles["diff_" + n], np.abs(outputs[n] - ref), True)
                                                                  for n in names[1:]]
    fig = make_subplots(rows=1, cols=len(panels), shared_yaxes=True, horizontal_spacing=0.03,
                        subplot_titles=[p[0] for p in panels])
    zmax = symmetric_range(ref)
    for col, (title, z, is_diff) in enumerate(panels, start=1):
        fig.add_trace(go.Heatmap(z=z.T, x=token_axis(z.shape[0]), zmin=0 if is_diff else -zmax,
                                 zmax=float(z.max()) or 1e-30 if is_diff else zmax,
                                 colorscale="Greys" if is_diff else DIVERGING, showscale=is_diff,   # values: hover
                                 colorbar=dict(thickness=10, len=0.8, x=col / len(panels) - 0.005),
                                 hovertemplate=f"{labels['token']} %{{x}} · {labels['value']} %{{y}}<br>"
                                               f"%{{z:.3g}}<extra>{title}</extra>"), row=1, col=col)
        fig.update_xaxes(title_text=labels["token"], row=1, col=col)
    fig.update_yaxes(title_text=labels["value"], autorange="reversed", row=1, col=1)
    fig.update_annotations(font_size=font_size)
    fig = base_layout(fig, height=height, font_size=font_size).update_layout(margin=dict(l=60, r=10, t=50, b=40))
    return horizontal_titles(fig, font_size)


def token_cards_html(alpha: np.ndarray, beta: np.ndarray, *, tokens, top_tokens, top_p: np.ndarray,
                     labels: dict[str, str], hint: str) -> str:
    """What hovering token t shows above the gates (the page's hover linker, app_pages/_support/player.py,
    swaps the visible card): the token, its α and β for every head of the layer as coloured cells with
    their numbers, and its top-3 next-token guesses. alpha, beta: [T, H]; hint: the text shown before any
    hover. Every number comes from the same arrays as the figure."""
    T, H = alpha.shape
    esc = html.escape
    heads = "".join(f"<th>{h}</th>" for h in range(H))
    cards = [f'<div class="gdn-tok-card" data-card="none">{esc(hint)}</div>']
    for t in range(T):
        rows = []
        for name, z, scale in (("α", alpha, ALPHA_COLORS), ("β", beta, BETA_COLORS)):
            rgb = scale_rgb(scale, z[t])                                                  # [H, 3]
            rows.append(f"<tr><th>{name}</th>" + "".join(f'<td style="{cell_style(rgb[h])}">{z[t, h]:.2f}</td>'
                                                          for h in range(H)) + "</tr>")
        guesses = " · ".join(f"«{esc(_show(top_tokens[t][k]))}» {top_p[t, k]:.2f}" for k in range(top_p.shape[1]))
        cards.append(f'<div class="gdn-tok-card" data-card="{t}" hidden><b>{esc(labels["token"])} {t + 1} '
                     f'«{esc(_show(tokens[t]))}»</b> → {guesses}<table><tr><th>{esc(labels["head"])}</th>{heads}</tr>'
                     f'{"".join(rows)}</table></div>')
    return f'<div class="gdn-tok-slot" aria-live="polite">{"".join(cards)}</div>'


CALLOUT_CSS = """<style>
.rm-callouts{display:flex;flex-wrap:wrap;gap:0.8em;margin:0.3em 0 0.8em 0}
.rm-callout{border:1px solid #e5e7eb;border-radius:0.6em;padding:0.45em 0.9em;background:#ffffff}
.rm-callout .where{color:#6b7280;font-size:0.85em}
.rm-callout .flip{font-size:1.6em;line-height:1.3;white-space:nowrap}
.rm-callout .ok{color:#15803d}.rm-callout .bad{color:#b91c1c}.rm-callout .arrow{color:#9ca3af;padding:0 0.25em}
.rm-callout .p{font-size:0.6em;color:#4b5563;font-variant-numeric:tabular-nums}
</style>"""


def callouts_html(slots: list[dict], *, labels: dict[str, str]) -> str:
    """The intervention's result in large type: for each answer slot, the model's first guess before → after,
    each with its probability and a ✓ when it is the expected answer. slots: {"t" (0-based), "token",
    "expected", "before": (guess, p), "after": (guess, p)}; labels: {"token", "expected"} (translated)."""
    esc = html.escape

    def guess(g: str, p: float, expected: str) -> str:
        right = g == expected
        return (f'<span class="{"ok" if right else "bad"}">{"✓" if right else "✗"} «{esc(_show(g))}»'
                f' <span class="p">{p:.2f}</span></span>')

    cards = [f'<div class="rm-callout" data-tok="{s["t"]}"><div class="where">{esc(labels["token"])} {s["t"] + 1} '
             f'«{esc(_show(s["token"]))}» · {esc(labels["expected"])} «{esc(_show(s["expected"]))}»</div>'
             f'<div class="flip">{guess(*s["before"], s["expected"])}<span class="arrow">→</span>'
             f'{guess(*s["after"], s["expected"])}</div></div>' for s in slots]
    return CALLOUT_CSS + f'<div class="rm-callouts">{"".join(cards)}</div>'
