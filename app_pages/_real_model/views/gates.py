"""The first view: every head's gates over the prompt with the model's top-3 guesses under them, then the
per-layer overview of all heads. Every layer's gates and overview are built once per trace (LayerViews,
cached by the trace's identity and the language) and each goes to a tab once (swap.py)."""
from __future__ import annotations

import html
import time
from dataclasses import dataclass

import numpy as np
import streamlit as st

from gdn.figures.real_model import draws_as_html, fig_gates_predictions, gates_html, overview_html, token_cards_html
from gdn.qwen35.demo.stories import gate_marks, token_roles
from gdn.qwen35.predict import Predictions
from app_pages._real_model import keys
from app_pages._real_model.context import ViewContext
from app_pages._support import swap, ui
from app_pages._support.caches import BOUNDS
from app_pages._support.pack import Packed
from app_pages._support.turn import given_up

GUESS_CSS = f"<style>{(ui.ASSETS / 'real_model' / 'guess.css').read_text(encoding='utf-8').strip()}</style>"


def answers(c: ViewContext, p: Predictions) -> list[tuple[int, str, bool]]:
    """(t, expected answer, the first guess is right) for each answer slot of a task prompt."""
    return [(t, c.piece(a), int(p.top_ids[t, 0]) == a) for t, a in c.slots]


def guesses_html(c: ViewContext, p: Predictions, answers: dict, top_tokens: list[list[str]]) -> str:
    """Top-3 next tokens with probabilities after every token, one column per token; the expected answers
    of a task prompt coloured (green: the first choice is right; red: it is not, the answer named)."""
    esc = lambda x: html.escape(x.strip() or "␣")
    head = "".join(f'<th data-tok="{t - 1}">{t} {esc(tok)}</th>' for t, tok in enumerate(c.tokens, start=1))
    rows = []
    for k in range(p.top_ids.shape[1]):
        cells = []
        for t in range(c.T):
            cls = ""
            if t in answers and k == 0:
                cls = ' class="rm-ok"' if answers[t][1] else ' class="rm-bad"'
            extra = "" if t not in answers or answers[t][1] or k else f" ≠ {esc(answers[t][0])}"
            cells.append(f'<td{cls} data-tok="{t}">{esc(top_tokens[t][k])} {p.top_p[t, k]:.2f}{extra}</td>')
        rows.append(f"<tr><th>#{k + 1}</th>{''.join(cells)}</tr>")
    size = "1.1rem" if c.lecture else "0.8rem"
    return GUESS_CSS.replace("SIZE", size) + f'<div class="rm-guess"><table><tr><th></th>{head}</tr>{"".join(rows)}</table></div>'


def layer_figure(c: ViewContext, p: Predictions, top_tokens: list, right: list, layer: int, html_form: bool):
    """One layer's gates (HTML: with its hover cards first) and their alt text; Plotly for long prompts."""
    li = c.run.layers.index(layer)
    alpha, beta = np.exp(p.g[li]), p.beta[li]                              # [T, H] (the same numbers as run.g, run.beta)
    marks = gate_marks(token_roles(c.tokens), alpha, beta) if c.demo else []
    titles = {"alpha": ui.tr("real_model.heatmap_alpha", layer=layer), "beta": ui.tr("real_model.heatmap_beta", layer=layer),
              "predictions": ui.tr("real_model.predictions_title")}
    alt = ui.tr("real_model.alt_gates", layer=layer, T=c.T)
    kw = dict(tokens=c.tokens, layer=layer, top_tokens=top_tokens, top_p=p.top_p, titles=titles, labels=c.labels,
              marks=marks, answers=right)
    if not html_form:
        extra = 14 * max(0, len(c.heads) - 8)
        return fig_gates_predictions(alpha, beta, **kw, font_size=c.fs, height=(640 if c.lecture else 540) + 2 * extra), alt, marks
    # Hover a token in any figure (or a chip): its gates for every head and its guesses, in one card here.
    cards = token_cards_html(alpha, beta, tokens=c.tokens, top_tokens=top_tokens, top_p=p.top_p, labels=c.labels,
                             hint=ui.tr("real_model.hover_hint"))
    return cards + gates_html(alpha, beta, **kw, alt=alt), alt, marks


@dataclass(frozen=True)
class LayerViews:
    """Every GDN layer's views of one trace, by layer: the gates' HTML (with its hover cards), its alt text
    and story marks, and the overview's frame; each HTML also packed for the swapper."""
    gates: dict[int, str]
    alts: dict[int, str]
    marks: dict[int, list]
    overview: dict[int, str]
    gates_packed: dict[int, Packed]
    overview_packed: dict[int, Packed]


@st.cache_resource(max_entries=BOUNDS["real_model.layers"], show_spinner=False)
def layer_views(folder: str, ids: tuple, language: str, _c: ViewContext) -> LayerViews:
    """Built once per trace (folder and token ids: what real_model.run caches it by) and language; the
    other arguments of the drawing (the predictions, the tokens, the heads, demo or not) follow from those."""
    p = _c.predictions()
    right = answers(_c, p)
    top_tokens = [[_c.piece(i) for i in row] for row in p.top_ids]
    drawn = {layer: layer_figure(_c, p, top_tokens, right, layer, True) for layer in _c.run.layers}
    titles = {n: ui.tr(f"real_model.overview_{n}") for n in ("alpha", "beta", "half_life")}
    alt = ui.tr("real_model.alt_overview")
    overview = {layer: overview_html(_c.summary, layers=_c.run.layers, selected=layer, titles=titles, labels=_c.labels,
                                     alt=alt) for layer in _c.run.layers}
    gates = {layer: body for layer, (body, _, _) in drawn.items()}
    return LayerViews(gates=gates, alts={layer: a for layer, (_, a, _) in drawn.items()},
                      marks={layer: m for layer, (_, _, m) in drawn.items()}, overview=overview,
                      gates_packed={layer: swap.pack(body) for layer, body in gates.items()},
                      overview_packed={layer: swap.pack(body) for layer, body in overview.items()})


def gates(c: ViewContext) -> None:
    p = c.predictions()
    right = answers(c, p)
    top_tokens = [[c.piece(i) for i in row] for row in p.top_ids]
    views = None
    if draws_as_html(c.T, len(c.heads)):
        # Every layer at once, swapped in the browser (no run per layer); HTML, not Plotly: a new layer would
        # mount a new chart, whose newPlot was most of a layer change's wait. The download is this layer's HTML.
        with given_up():        # every layer built at once (once per trace): the other runs go on meanwhile
            views = layer_views(c.folder, c.ids, ui.lang(), c)
        swap.swap(keys.LAYER, views.gates_packed, value=c.layer, default=c.run.layers[0],
                  bar_label=ui.tr("real_model.layer_bar", n=len(c.run.layers)),
                  name="gates")                               # buttons: the layer numbers, as on the axes
        alt, marks = views.alts[c.layer], views.marks[c.layer]
        ui.html_download(keys.GATES_FIG, views.gates[c.layer], alt)
    else:
        with given_up():        # the Plotly build of a long prompt: ~0.5 s of Python (bench/README.md)
            fig, alt, marks = layer_figure(c, p, top_tokens, right, c.layer, False)
        ui.show_figure(fig, key=keys.GATES_FIG, alt=alt)
    st.caption(ui.tr("real_model.guesses_caption_same_script" if c.demo else "real_model.guesses_caption"))
    st.html(guesses_html(c, p, dict((t, (a, r)) for t, a, r in right), top_tokens))
    line = [ui.tr("real_model.ran", T=c.T, **c.loaded.counts, s=f"{time.perf_counter() - c.started:.2f}")]
    if right:
        line.append(ui.tr("real_model.accuracy", right=sum(r for _, _, r in right), n=len(right)))
    if marks:
        line.append(ui.tr("real_model.marks_legend"))
    st.caption(" · ".join(line))
    ui.note(ui.tr("real_model.gates_explain"))
    overview(c, views)


def overview(c: ViewContext, views: LayerViews | None) -> None:
    st.markdown(ui.tr("real_model.overview_explain"))
    # HTML tables: a new layer only moves the frame, and Streamlit would mount a new Plotly chart for it
    # (a three-heatmap newPlot); the download is this HTML
    alt = ui.tr("real_model.alt_overview")
    if views is None:           # a long prompt (its layer picked by a selectbox): this layer's frame only
        titles = {n: ui.tr(f"real_model.overview_{n}") for n in ("alpha", "beta", "half_life")}
        frame = overview_html(c.summary, layers=c.run.layers, selected=c.layer, titles=titles, labels=c.labels, alt=alt)
        frames, packed = {c.layer: frame}, {c.layer: swap.pack(frame)}
    else:
        frames, packed = views.overview, views.overview_packed
    # its framed row follows the layer picked above it (swapped with the gates, same key)
    swap.swap(keys.LAYER, packed, value=c.layer, default=c.run.layers[0], name="overview")
    ui.html_download(keys.OVERVIEW_FIG, frames[c.layer], alt)
