"""The first view: every head's gates over the prompt with the model's top-3 guesses under them, then the
per-layer overview of all heads."""
from __future__ import annotations

import html
import time

import numpy as np
import streamlit as st

from gdn.figures.real_model import draws_as_html, fig_gates_predictions, gates_html, overview_html, token_cards_html
from gdn.qwen35.demo.stories import gate_marks, token_roles
from gdn.qwen35.predict import Predictions
from app_pages._real_model import keys
from app_pages._real_model.context import ViewContext
from app_pages._support import swap, ui
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


def gates(c: ViewContext) -> None:
    p = c.predictions()
    right = answers(c, p)
    top_tokens = [[c.piece(i) for i in row] for row in p.top_ids]
    if draws_as_html(c.T, len(c.heads)):
        # Every layer at once, swapped in the browser (no run per layer); HTML, not Plotly: a new layer would
        # mount a new chart, whose newPlot was most of a layer change's wait. The download is this layer's HTML.
        with given_up():        # every layer built at once: the other runs go on meanwhile
            drawn = {layer: layer_figure(c, p, top_tokens, right, layer, True) for layer in c.run.layers}
        swap.swap(keys.LAYER, {layer: body for layer, (body, _, _) in drawn.items()}, value=c.layer,
                  default=c.run.layers[0], bar_label=ui.tr("real_model.layer_bar", n=len(c.run.layers)),
                  name="gates")                               # buttons: the layer numbers, as on the axes
        body, alt, marks = drawn[c.layer]
        ui.html_download(keys.GATES_FIG, body, alt)
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
    overview(c)


def overview(c: ViewContext) -> None:
    st.markdown(ui.tr("real_model.overview_explain"))
    titles = {n: ui.tr(f"real_model.overview_{n}") for n in ("alpha", "beta", "half_life")}
    # HTML tables: a new layer only moves the frame, and Streamlit would mount a new Plotly chart for it
    # (a three-heatmap newPlot); the download is this HTML
    alt = ui.tr("real_model.alt_overview")
    frames = {layer: overview_html(c.summary, layers=c.run.layers, selected=layer, titles=titles, labels=c.labels, alt=alt)
              for layer in c.run.layers}
    # its framed row follows the layer picked above it (swapped with the gates, same key)
    swap.swap(keys.LAYER, frames, value=c.layer, default=c.run.layers[0], name="overview")
    ui.html_download(keys.OVERVIEW_FIG, frames[c.layer], alt)
