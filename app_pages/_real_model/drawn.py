"""A Run's figures, built in the worker that runs its forward pass: every GDN layer's gates (with their
hover cards) and overview frame, each packed for the swapper, the top-3 guesses and the task answers.
The page (views/gates.py) only places what comes back; nothing here is drawn twice for one prompt, since
the result is kept by the trace's identity and the language (the shared cache real_model.views).

    views(folder, ids, tokens, language, demo, plotly) -> RunViews    (a job: compute.run_job sends it to a worker)
    head_views(folder, ids, tokens, piece, layer, head, t, language, size) -> HeadViews    (the head view's too)

No streamlit: the workers import this module when their first such job arrives (unpickling names it),
and the Plotly figure modules with it; a worker that never draws one never imports them.
"""
from __future__ import annotations

import html
from dataclasses import dataclass

import numpy as np

from gdn import i18n
from gdn.figures.real_model import (
    draws_as_html,
    fig_gates_predictions,
    fig_head_detail,
    fig_head_params,
    fig_state_block,
    gates_html,
    overview_html,
    token_cards_html,
)
from gdn.qwen35.analysis import layer_state_norms
from gdn.qwen35.demo.stories import answer_slots, gate_marks, token_roles
from gdn.qwen35.gates import head_state, head_summary, top_block
from gdn.qwen35.predict import predict
from app_pages._support import work
from app_pages._support.pack import Packed, pack_json

LABELS = ("token", "layer", "head", "norm", "key", "value", "guess")      # real_model.lbl_<name>: axis / hover words
TABLE_DIMS = 16                # the state table shows this many key dims x value dims (largest first)


@dataclass(frozen=True)
class RunViews:
    """What the gates view places, per GDN layer where it says so. gates is empty for a prompt too long
    for HTML (draws_as_html): figure then holds the one layer asked for, as Plotly."""
    gates: dict[int, str]                   # layer -> its gates' HTML, hover cards first
    gates_packed: dict[int, Packed]         # the same, packed for the swapper
    overview: dict[int, str]                # layer -> the overview with that layer's row framed
    overview_packed: dict[int, Packed]
    alts: dict[int, str]                    # layer -> the gates' alt text
    marks: dict[int, list]                  # layer -> the story marks (t, head, "alpha" | "beta"), demo models
    guesses: str                            # the top-3 table after every token (the page adds its stylesheet)
    answers: list[tuple[int, str, bool]]    # (t, expected answer, the first guess is right) per task slot
    figure: object = None                   # a long prompt's layer: a plotly Figure, without a template (page_themed)


def page_themed(fig):
    """fig without a template, so that it takes the page's. Built in a worker (no Streamlit there) a figure
    embeds plain Plotly's default template; the page's own figures embed the one Streamlit installs as
    Plotly's default (its fonts, title place, grid). A figure with none is given the default of the process
    that unpickles it (plotly rebuilds a Figure from its JSON there): on the page, the page's."""
    if fig is not None:
        fig.layout.template = None
    return fig


def labels(language: str) -> dict[str, str]:
    return {n: i18n.t(f"real_model.lbl_{n}", language) for n in LABELS}


def translator(language: str):
    """tr(key, **fields) in `language`: what ui.tr says on the page, said here without a session."""
    return lambda key, **fields: i18n.t(key, language, **fields)


def guesses_html(tokens: list[str], top_tokens: list[list[str]], top_p: np.ndarray, answers: dict) -> str:
    """Top-3 next tokens with probabilities after every token, one column per token; the expected answers
    of a task prompt coloured (green: the first choice is right; red: it is not, the answer named)."""
    esc = lambda x: html.escape(x.strip() or "␣")
    head = "".join(f'<th data-tok="{i - 1}">{i} {esc(tok)}</th>' for i, tok in enumerate(tokens, start=1))
    rows = []
    for k in range(top_p.shape[1]):
        cells = []
        for i in range(len(tokens)):
            cls = ""
            if i in answers and k == 0:
                cls = ' class="rm-ok"' if answers[i][1] else ' class="rm-bad"'
            extra = "" if i not in answers or answers[i][1] or k else f" ≠ {esc(answers[i][0])}"
            cells.append(f'<td{cls} data-tok="{i}">{esc(top_tokens[i][k])} {top_p[i, k]:.2f}{extra}</td>')
        rows.append(f"<tr><th>#{k + 1}</th>{''.join(cells)}</tr>")
    return f'<div class="rm-guess"><table><tr><th></th>{head}</tr>{"".join(rows)}</table></div>'


def views(folder: str, ids: tuple, tokens: tuple, language: str, demo: bool, plotly: tuple | None) -> RunViews:
    """The prompt through every layer (its guesses), then every GDN layer's views in `language`. tokens:
    the prompt's pieces as the page shows them; demo: a shipped demo model (its task answers and story
    marks, guesses in the prompt's script); plotly: (layer, font size, height) of the Plotly figure a prompt
    too long for HTML shows (a new layer is a new job: a figure is a new prompt's heaviest build, ~0.4 s)."""
    model, tokens = work.model(folder), list(tokens)
    piece = lambda token_id: model.tokenizer.piece(int(token_id))
    slots = answer_slots(tokens, list(ids)) if demo else []
    p = predict(model, list(ids), ask=tuple(slots), same_script=demo)
    answers = [(i, piece(a), int(p.top_ids[i, 0]) == a) for i, a in slots]
    top_tokens = [[piece(i) for i in row] for row in p.top_ids]
    words, tr = labels(language), translator(language)
    html_form = draws_as_html(len(tokens), p.g.shape[-1])
    roles = token_roles(tokens) if demo else []
    gates, alts, marks = {}, {}, {}
    for li, layer in enumerate(p.layers):
        alpha, beta = np.exp(p.g[li]), p.beta[li]                         # [T, H] (the same numbers as the trace's)
        marks[layer] = gate_marks(roles, alpha, beta) if demo else []
        alts[layer] = tr("real_model.alt_gates", layer=layer, T=len(tokens))
        if html_form:
            # Hover a token in any figure (or a chip): its gates for every head and its guesses, in one card here.
            cards = token_cards_html(alpha, beta, tokens=tokens, top_tokens=top_tokens, top_p=p.top_p, labels=words,
                                     hint=tr("real_model.hover_hint"))
            titles = {"alpha": tr("real_model.heatmap_alpha", layer=layer), "beta": tr("real_model.heatmap_beta", layer=layer),
                      "predictions": tr("real_model.predictions_title")}
            gates[layer] = cards + gates_html(alpha, beta, tokens=tokens, layer=layer, top_tokens=top_tokens, top_p=p.top_p,
                                              titles=titles, labels=words, marks=marks[layer], answers=answers,
                                              alt=alts[layer])
    figure = None
    if not html_form and plotly is not None:
        layer, font_size, height = plotly
        li = p.layers.index(layer)
        titles = {"alpha": tr("real_model.heatmap_alpha", layer=layer), "beta": tr("real_model.heatmap_beta", layer=layer),
                  "predictions": tr("real_model.predictions_title")}
        figure = fig_gates_predictions(np.exp(p.g[li]), p.beta[li], tokens=tokens, layer=layer, top_tokens=top_tokens,
                                       top_p=p.top_p, titles=titles, labels=words, marks=marks[layer], answers=answers,
                                       font_size=font_size, height=height)
    titles = {n: tr(f"real_model.overview_{n}") for n in ("alpha", "beta", "half_life")}
    summary = head_summary(p.g, p.beta)                                   # [L, H] each
    overview = {layer: overview_html(summary, layers=p.layers, selected=layer, titles=titles, labels=words,
                                     alt=tr("real_model.alt_overview")) for layer in p.layers}
    pack = lambda body: pack_json(body, n_frames=1)                      # what swap.js unpacks: one JSON string
    return RunViews(gates=gates, gates_packed={layer: pack(body) for layer, body in gates.items()}, overview=overview,
                    overview_packed={layer: pack(body) for layer, body in overview.items()}, alts=alts, marks=marks,
                    guesses=guesses_html(tokens, top_tokens, p.top_p, {i: (a, r) for i, a, r in answers}),
                    answers=answers, figure=page_themed(figure))


@dataclass(frozen=True)
class HeadViews:
    """The head view's figures of one head with token t chosen (plotly Figures, built in the worker without a
    template: page_themed), and the numbers said under the state's table."""
    detail: object                          # α, β and ||S_t|| of the head over the prompt, t marked
    state: object                           # the largest TABLE_DIMS x TABLE_DIMS block of S_t
    params: object                          # the layer's fixed A and dt_bias, per head
    state_note: dict                        # n, K, V, norm, share: what the table shows of S_t


def head_views(folder: str, ids: tuple, tokens: tuple, piece: str, layer: int, head: int, t: int, language: str,
               size: tuple[int, bool]) -> HeadViews:
    """One value head of `layer` up close, token t (from 0) chosen. tokens: the pieces the page shows; piece:
    the one the state's title names for t (its character's, where several tokens make one); size: (font
    size, lecture mode)."""
    font_size, lecture = size
    x, words, tr = work.layer_inputs(folder, ids, layer), labels(language), translator(language)
    gates = x.head(head)
    detail = fig_head_detail(np.exp(gates["g"]), gates["beta"], layer_state_norms(x)[:, head], tokens=list(tokens),
                             layer=layer, head=head, marked=t, labels=words, font_size=font_size,
                             titles={"gates": tr("real_model.detail_gates"), "norm": tr("real_model.detail_norm")},
                             height=520 if lecture else 420)
    S = head_state(*x.tensors(), head=head, t=t)                                     # [K, V]
    n = min(TABLE_DIMS, *S.shape)
    rows, cols, block = top_block(S, n)
    state = fig_state_block(block, rows, cols, layer=layer, head=head, token=t + 1, labels=words, font_size=font_size,
                            title=tr("real_model.state_title", t=t + 1, piece=piece, n=n, K=S.shape[0], V=S.shape[1]),
                            height=560 if lecture else 460)
    attn = work.model(folder).model.layers[layer].linear_attn
    params = fig_head_params(attn.A_log.detach().float().exp().numpy(), attn.dt_bias.detach().float().numpy(),
                             layer=layer, labels=words, font_size=font_size,
                             titles={"A": tr("real_model.params_A"), "dt_bias": tr("real_model.params_dt")})
    norm = float(np.linalg.norm(S))
    note = dict(n=n, K=S.shape[0], V=S.shape[1], norm=f"{norm:.3f}",
                share=f"{100 * np.linalg.norm(block) ** 2 / max(norm ** 2, 1e-30):.0f}")
    return HeadViews(detail=page_themed(detail), state=page_themed(state), params=page_themed(params), state_note=note)
