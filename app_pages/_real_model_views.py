"""The views of the real-model page (gates and predictions, interventions, one head, both kernels, replay,
export), each drawn from one ViewContext: what the page has already loaded and traced. Only the chosen
view runs."""
from __future__ import annotations

import html
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
import streamlit as st

from gdn.figures.real_model import (ALPHA_COLORS, BETA_COLORS, draws_as_html, fig_gate_pair, fig_gates_predictions,
                                    fig_head_detail, fig_head_params, fig_kernel_outputs, fig_overview,
                                    fig_state_block, gates_html, overview_html)
from gdn.ops import CHUNK_SIZE
from gdn.qwen35.analysis import GateRun, layer_state_norms
from gdn.qwen35.demo.stories import STORIES, answer_slots, find_story, gate_marks, token_roles
from gdn.qwen35.gates import (KERNEL_RTOL, REPLAY_MAX_DIM, REPLAY_MAX_TOKENS, gates_csv, gates_json, head_state,
                              kernels_side_by_side, replay_payload, top_block)
from gdn.qwen35.predict import Predictions, predict
from app_pages._support import compute, ui
from app_pages._support.path import go

PROMPTS = json.loads((ui.ASSETS / "prompts" / "real_model.json").read_text(encoding="utf-8"))
TABLE_DIMS = 16                # the state table shows this many key dims x value dims (largest first)


def preset_text(preset: str, lang: str | None = None) -> str:
    return PROMPTS[preset][lang or ui.lang()] if preset != "custom" else ""


@dataclass
class ViewContext:
    folder: str                # checkpoint folder
    request: dict              # {"folder", "text", "max_tokens"} of the run shown
    enc: object                # the tokenizer's Encoded (ids, pieces, group)
    run: GateRun               # every GDN layer's gates for this prompt
    layer: int                 # chosen decoder layer (a GDN layer)
    head: int                  # chosen value head
    dims: tuple[int, int]      # (K, V): the checkpoint's key and value head dims
    summary: dict              # head_summary(run.g, run.beta): [L, H] arrays
    labels: dict               # translated axis / hover words
    fs: int                    # figure font size
    lecture: bool
    inputs: Callable           # () -> LayerInputs of the chosen layer (cached, computed on first use)
    model: object = None       # the loaded Qwen35ForCausalLM (shared: never mutated)
    kind: str = "real"         # "trained" | "random" (the shipped demos) | "real"
    started: float = 0.0       # time.perf_counter() when the page started this run (for the timing caption)

    @property
    def ids(self) -> tuple:
        return tuple(self.enc.ids)

    @property
    def tokens(self) -> list[str]:
        return self.enc.pieces

    @property
    def T(self) -> int:
        return len(self.enc.ids)

    @property
    def li(self) -> int:
        return self.run.layers.index(self.layer)                          # index among GDN layers

    @property
    def heads(self) -> list[int]:
        return list(range(self.run.g.shape[-1]))

    @property
    def g(self) -> np.ndarray:
        return self.run.g[self.li]                                        # [T, H]

    @property
    def beta(self) -> np.ndarray:
        return self.run.beta[self.li]                                     # [T, H]

    @property
    def norms(self) -> np.ndarray:
        """||S_t|| of the chosen layer [T, H], computed on first use (shared cache, pool slot)."""
        key = (self.folder, self.ids, self.layer)
        return compute.cached("norms", key, lambda: layer_state_norms(self.inputs()))

    @property
    def alpha(self) -> np.ndarray:
        return np.exp(self.g)                                             # [T, H]


    @property
    def demo(self) -> bool:
        return self.kind != "real"

    @property
    def slots(self) -> list[tuple[int, int]]:
        """Answer slots of a task prompt (demo models only): (t, expected next token id)."""
        return answer_slots(self.tokens, list(self.ids)) if self.demo else []

    def predictions(self, **overrides) -> Predictions:
        """Top-3 next tokens at every position (cached per prompt and intervention, shared by all sessions)."""
        key = (self.folder, self.ids, repr(sorted((k, sorted(v.items(), key=repr)) for k, v in overrides.items())))
        return compute.cached("pred", key, lambda: predict(self.model, list(self.ids), ask=tuple(self.slots), **overrides))

    def piece(self, token_id: int) -> str:
        return self.model.tokenizer.decode([int(token_id)])


def _answers(c: ViewContext, p: Predictions) -> list[tuple[int, str, bool]]:
    return [(t, c.piece(a), int(p.top_ids[t, 0]) == a) for t, a in c.slots]


GUESS_CSS = ("<style>.rm-guess{overflow-x:auto;max-width:100%}.rm-guess table{border-collapse:collapse;font-size:SIZE}"
             ".rm-guess td,.rm-guess th{border:1px solid #e5e7eb;padding:1px 5px;white-space:nowrap;text-align:left}"
             ".rm-guess th{background:#f8fafc;font-weight:600}.rm-ok{background:#dcfce7}.rm-bad{background:#fee2e2}</style>")


def guesses_html(c: ViewContext, p: Predictions, answers: dict, top_tokens: list[list[str]]) -> str:
    """Top-3 next tokens with probabilities after every token, one column per token; the expected answers
    of a task prompt coloured (green: the first choice is right; red: it is not, the answer named)."""
    esc = lambda x: html.escape(x.strip() or "␣")
    head = "".join(f"<th>{t} {esc(tok)}</th>" for t, tok in enumerate(c.tokens, start=1))
    rows = []
    for k in range(p.top_ids.shape[1]):
        cells = []
        for t in range(c.T):
            cls = ""
            if t in answers and k == 0:
                cls = ' class="rm-ok"' if answers[t][1] else ' class="rm-bad"'
            extra = "" if t not in answers or answers[t][1] or k else f" ≠ {esc(answers[t][0])}"
            cells.append(f"<td{cls}>{esc(top_tokens[t][k])} {p.top_p[t, k]:.2f}{extra}</td>")
        rows.append(f"<tr><th>#{k + 1}</th>{''.join(cells)}</tr>")
    size = "1.1rem" if c.lecture else "0.8rem"
    return GUESS_CSS.replace("SIZE", size) + f'<div class="rm-guess"><table><tr><th></th>{head}</tr>{"".join(rows)}</table></div>'


def gates(c: ViewContext) -> None:
    p = c.predictions()
    alpha, beta = np.exp(p.g[c.li]), p.beta[c.li]                          # [T, H] (the same numbers as run.g, run.beta)
    marks = gate_marks(token_roles(c.tokens), alpha, beta) if c.demo else []
    answers = _answers(c, p)
    top_tokens = [[c.piece(i) for i in row] for row in p.top_ids]
    titles = {"alpha": ui.tr("real_model.heatmap_alpha", layer=c.layer), "beta": ui.tr("real_model.heatmap_beta", layer=c.layer),
              "predictions": ui.tr("real_model.predictions_title")}
    extra = 14 * max(0, len(c.heads) - 8)
    figure = lambda: fig_gates_predictions(
        alpha, beta, tokens=c.tokens, layer=c.layer, top_tokens=top_tokens, top_p=p.top_p, titles=titles,
        labels=c.labels, marks=marks, answers=answers, font_size=c.fs, height=(640 if c.lecture else 540) + 2 * extra)
    alt = ui.tr("real_model.alt_gates", layer=c.layer, T=c.T)
    if draws_as_html(c.T, len(c.heads)):
        # HTML: a new layer would mount a new Plotly chart, whose newPlot was most of a layer change's wait in
        # the browser; the Plotly figure stays as the download (and the picture of longer prompts)
        st.html(gates_html(alpha, beta, tokens=c.tokens, layer=c.layer, top_tokens=top_tokens, top_p=p.top_p,
                           titles=titles, labels=c.labels, marks=marks, answers=answers, alt=alt))
        ui.figure_download("real_model_gates", figure)
    else:
        ui.show_figure(figure(), key="real_model_gates", alt=alt)
    st.caption(ui.tr("real_model.guesses_caption"))
    st.html(guesses_html(c, p, dict((t, (a, r)) for t, a, r in answers), top_tokens))
    line = [ui.tr("real_model.ran", T=c.T, layers=len(c.run.layers), s=f"{time.perf_counter() - c.started:.2f}")]
    if answers:
        line.append(ui.tr("real_model.accuracy", right=sum(r for _, _, r in answers), n=len(answers)))
    if marks:
        line.append(ui.tr("real_model.marks_legend"))
    st.caption(" · ".join(line))
    ui.note(ui.tr("real_model.gates_explain"))
    st.markdown(ui.tr("real_model.overview_explain"))
    titles = {n: ui.tr(f"real_model.overview_{n}") for n in ("alpha", "beta", "half_life")}
    # HTML tables: a new layer only moves the frame, and Streamlit would mount a new Plotly chart for it
    # (a three-heatmap newPlot); the Plotly figure stays as the download
    st.html(overview_html(c.summary, layers=c.run.layers, selected=c.layer, titles=titles, labels=c.labels,
                          alt=ui.tr("real_model.alt_overview")))
    ui.figure_download("real_model_overview", lambda: fig_overview(
        c.summary, layers=c.run.layers, selected=c.layer, titles=titles, labels=c.labels, font_size=c.fs,
        height=max(320, 40 * len(c.run.layers) + 160)))


# -- interventions -----------------------------------------------------------------------------------
ALL_HEADS = -1               # the head picker's "every head of the layer" (None in the library API)


def _apply_story(story, preset: str) -> None:
    """A story button: its prompt, layer, head and gate constant, then run (the whole page: the button
    sits in the page's layer fragment, whose own rerun would not run the new prompt)."""
    st.session_state.update(real_model_preset=preset, real_model_prompt_edit=preset_text(preset),
                            real_model_autorun=True, real_model_full_run=True, real_model_layer=story.layer,
                            real_model_iv_head=ALL_HEADS if story.head is None else story.head,
                            real_model_iv_alpha_on=story.gate == "alpha", real_model_iv_beta_on=story.gate == "beta")
    st.session_state[f"real_model_iv_{story.gate}"] = story.value


def _stories(c: ViewContext) -> dict:
    """Each story's intervention on its preset prompt in this language (searched once per server)."""
    def search():
        out = {}
        for kind, spec in STORIES.items():
            enc = c.model.tokenizer.encode(" " + preset_text(spec["prompt"]))
            out[kind] = find_story(c.model, enc.ids, answer_slots(enc.pieces, enc.ids), kind)
        return out
    return compute.cached("story", (c.folder, ui.lang()), search, pin=True)


def intervene(c: ViewContext) -> None:
    if c.kind == "trained":
        stories = _stories(c)
        cols = st.columns(len(STORIES))
        for col, (kind, story) in zip(cols, stories.items()):
            if story is None:
                continue
            where = ui.tr("real_model.where_all" if story.head is None else "real_model.where", layer=story.layer,
                          head=story.head)
            col.button(ui.tr(f"real_model.story_btn_{kind}"), key=f"real_model_story_{kind}", width="stretch",
                       help=ui.tr("real_model.story_btn_help", where=where), on_click=_apply_story,
                       args=(story, STORIES[kind]["prompt"]))
    c1, c2, c3 = st.columns([2, 3, 3])
    options = [ALL_HEADS, *c.heads]
    if st.session_state.get("real_model_iv_head") not in options:
        st.session_state["real_model_iv_head"] = c.head
    names = {h: ui.tr("real_model.iv_all") if h == ALL_HEADS else str(h) for h in options}   # format_func runs later
    head = c1.selectbox(ui.tr("real_model.iv_head", layer=c.layer), options, key="real_model_iv_head",
                        format_func=names.get)
    st.session_state.setdefault("real_model_iv_alpha", 1.0)               # a story button may have set them
    st.session_state.setdefault("real_model_iv_beta", 0.0)
    set_a = c2.toggle(ui.tr("real_model.iv_alpha_on"), key="real_model_iv_alpha_on")
    a = c2.slider("α :=", 0.0, 1.0, step=0.05, key="real_model_iv_alpha", disabled=not set_a, label_visibility="collapsed")
    set_b = c3.toggle(ui.tr("real_model.iv_beta_on"), key="real_model_iv_beta_on")
    b = c3.slider("β :=", 0.0, 1.0, step=0.05, key="real_model_iv_beta", disabled=not set_b, label_visibility="collapsed")
    where = (c.layer, None if head == ALL_HEADS else head)
    overrides = {**({"set_alpha": {where: a}} if set_a else {}), **({"set_beta": {where: b}} if set_b else {})}
    if not overrides:
        st.info(ui.tr("real_model.iv_none"), icon=":material/touch_app:")
        return
    before, after = c.predictions(), c.predictions(**overrides)
    slots = c.slots or [(c.T - 1, int(before.top_ids[-1, 0]))]           # natural text: the next token after the prompt
    rows = []
    for t, a_id in slots:
        show = lambda p: " · ".join(f"{c.piece(i).strip() or '␣'} {q:.2f}" for i, q in zip(p.top_ids[t], p.top_p[t]))
        rows.append({ui.tr("real_model.iv_after_token"): f"{t} «{c.tokens[t].strip()}»",
                     ui.tr("real_model.iv_expected"): c.piece(a_id).strip(),
                     ui.tr("real_model.iv_before"): show(before), ui.tr("real_model.iv_after"): show(after),
                     ui.tr("real_model.iv_prob"): f"{before.prob_of(t, a_id):.2f} → {after.prob_of(t, a_id):.2f}",
                     "": "✓" if int(after.top_ids[t, 0]) == a_id else "✗"})
    st.dataframe(rows, hide_index=True, width="stretch")
    changed = int((before.top_ids[:, 0] != after.top_ids[:, 0]).sum())
    st.caption(ui.tr("real_model.iv_changed", n=changed, T=c.T))
    gate = "alpha" if set_a else "beta"
    z = (lambda p: np.exp(p.g[c.li])) if gate == "alpha" else (lambda p: p.beta[c.li])
    fig = fig_gate_pair(z(before), z(after), tokens=c.tokens, layer=c.layer, name="α" if gate == "alpha" else "β",
                        titles=[ui.tr("real_model.iv_fig_before"), ui.tr("real_model.iv_fig_after")], labels=c.labels,
                        colorscale=ALPHA_COLORS if gate == "alpha" else BETA_COLORS,
                        changed=tuple(c.heads) if head == ALL_HEADS else (head,), font_size=c.fs,
                        height=380 if c.lecture else 300)
    ui.show_figure(fig, key="real_model_iv_fig", alt=ui.tr("real_model.alt_iv", layer=c.layer))
    ui.note(ui.tr("real_model.iv_explain"))


def head(c: ViewContext) -> None:
    hl = c.summary["half_life"][c.li, c.head]
    m1, m2, m3, m4 = st.columns(4)
    m1.metric(ui.tr("real_model.mean_alpha"), f"{c.summary['alpha'][c.li, c.head]:.3f}")
    m2.metric(ui.tr("real_model.mean_beta"), f"{c.summary['beta'][c.li, c.head]:.3f}")
    m3.metric(ui.tr("real_model.half_life"), "∞" if not np.isfinite(hl) else f"{hl:.3g}")
    m4.metric(ui.tr("real_model.fixed_speed"), f"{c.run.A[c.li, c.head]:.3f}", help=ui.tr("real_model.fixed_speed_help"))
    # tokens count from 1, as on every axis and in the guesses; t below is the index (from 0)
    if st.session_state.get("real_model_t", c.T) > c.T:
        st.session_state["real_model_t"] = c.T
    shown_t = st.slider(ui.tr("real_model.token_t"), 1, max(c.T, 2), c.T, key=ui.bound("real_model_t"), bind="query-params",
                        disabled=c.T == 1)
    t = min(shown_t, c.T) - 1
    detail_titles = {"gates": ui.tr("real_model.detail_gates"), "norm": ui.tr("real_model.detail_norm")}
    fig = fig_head_detail(c.alpha[:, c.head], c.beta[:, c.head], c.norms[:, c.head], tokens=c.tokens, layer=c.layer,
                          head=c.head, marked=t, titles=detail_titles, labels=c.labels, font_size=c.fs,
                          height=520 if c.lecture else 420)
    ui.show_figure(fig, key="real_model_head_fig", alt=ui.tr("real_model.alt_head", layer=c.layer, head=c.head))
    S = compute.cached("state", (c.folder, c.ids, c.layer, c.head, t), lambda: head_state(*c.inputs().tensors(), head=c.head, t=t))
    n = min(TABLE_DIMS, *S.shape)
    rows, cols, block = top_block(S, n)
    fig = fig_state_block(block, rows, cols, layer=c.layer, head=c.head, token=t + 1, labels=c.labels, font_size=c.fs,
                          title=ui.tr("real_model.state_title", t=t + 1, piece=c.tokens[c.enc.group[t]], n=n,
                                      K=S.shape[0], V=S.shape[1]), height=560 if c.lecture else 460)
    ui.show_figure(fig, key="real_model_state", alt=ui.tr("real_model.alt_state", t=t + 1, head=c.head))
    st.caption(ui.tr("real_model.state_note", n=n, K=S.shape[0], V=S.shape[1], norm=f"{np.linalg.norm(S):.3f}",
                     share=f"{100 * np.linalg.norm(block) ** 2 / max(np.linalg.norm(S) ** 2, 1e-30):.0f}"))
    st.markdown(ui.tr("real_model.params_explain"))
    fig = fig_head_params(c.run.A[c.li], c.run.dt_bias[c.li], layer=c.layer, labels=c.labels, font_size=c.fs,
                          titles={"A": ui.tr("real_model.params_A"), "dt_bias": ui.tr("real_model.params_dt")})
    ui.show_figure(fig, key="real_model_params", alt=ui.tr("real_model.alt_params", layer=c.layer))


def check(c: ViewContext) -> None:
    ui.note(ui.tr("real_model.check_explain", layer=c.layer, C=CHUNK_SIZE))
    check_key = (c.folder, c.ids, c.layer, c.head)
    if st.button(ui.tr("real_model.check_run", layer=c.layer, head=c.head), key="real_model_check"):
        compute.cached("check", check_key, lambda: kernels_side_by_side(*c.inputs().tensors(), head=c.head))
    result = compute.shared_caches()["check"].get(check_key)
    if result is None:
        return
    names = list(result["outputs"])
    cols = st.columns(len(names))
    for col, name in zip(cols, names):
        col.metric(ui.tr(f"real_model.kernel_{name}"), f"{1000 * result['seconds'][name]:.1f} ms")
        if name != "recurrent":
            col.caption(ui.tr("real_model.check_diffs", out=f"{result['max_diff_output'][name]:.1e}",
                              state=f"{result['max_diff_state'][name]:.1e}"))
    if "fla" not in names:
        st.caption(ui.tr("real_model.check_no_fla"))
    titles = {n: ui.tr(f"real_model.kernel_{n}") for n in names}
    titles.update({f"diff_{n}": ui.tr("real_model.check_diff_title", name=titles[n]) for n in names[1:]})
    fig = fig_kernel_outputs(result["outputs"], tokens=c.tokens, layer=c.layer, head=c.head, titles=titles,
                             labels=c.labels, font_size=c.fs, height=380 if c.lecture else 320)
    ui.show_figure(fig, key="real_model_kernels", alt=ui.tr("real_model.alt_kernels", layer=c.layer, head=c.head))
    rel = result["rel"]["chunk"]
    if rel < KERNEL_RTOL:
        st.success(ui.tr("real_model.check_agree", rel=f"{rel:.1e}", tol=f"{KERNEL_RTOL:.0e}", T=c.T),
                   icon=":material/check_circle:")
    else:
        st.warning(ui.tr("real_model.check_disagree", rel=f"{rel:.1e}", tol=f"{KERNEL_RTOL:.0e}"), icon=":material/warning:")


def replay(c: ViewContext) -> None:
    ui.note(ui.tr("real_model.replay_explain", max=REPLAY_MAX_TOKENS, K=c.dims[0], V=c.dims[1]))
    c1, c2, c3 = st.columns(3)
    # A slider needs min < max: a one-token prompt (or a window as long as the prompt) has no choice.
    w_len = c2.slider(ui.tr("real_model.replay_len"), 1, min(REPLAY_MAX_TOKENS, c.T), min(12, c.T),
                      key="real_model_replay_len") if c.T > 1 else 1
    w_start = c1.slider(ui.tr("real_model.replay_start"), 0, c.T - w_len, 0,
                        key="real_model_replay_start") if c.T > w_len else 0
    w_start = min(w_start, c.T - w_len)
    dims = c3.slider(ui.tr("real_model.replay_dims"), 2, REPLAY_MAX_DIM, 4, key="real_model_replay_dims")
    st.caption(ui.tr("real_model.replay_window", a=w_start, b=w_start + w_len - 1,
                     text="".join(c.tokens[w_start:w_start + w_len]).replace("\n", " ")))
    if st.button(ui.tr("real_model.replay_go"), key="real_model_replay", type="primary", icon=":material/movie:"):
        h = c.inputs().head(c.head)
        st.session_state["memory_replay"] = replay_payload(
            title=ui.tr("real_model.replay_title", model=Path(c.folder).name, layer=c.layer, head=c.head, a=w_start,
                        b=w_start + w_len - 1), tokens=c.tokens, start=w_start, length=w_len, dims=dims, **h)
        st.session_state["memory_preset"] = "replay"
        go("app_pages/memory_table.py")             # keeps the language and lecture mode


def export(c: ViewContext) -> None:
    st.markdown(ui.tr("real_model.export_explain"))
    meta = dict(model=Path(c.folder).name, layer=c.layer, kernel="chunk", ids=c.ids, tokens=c.tokens, g=c.g, beta=c.beta,
                state_norms=c.norms)
    c1, c2 = st.columns(2)
    c1.download_button(ui.tr("real_model.export_csv"), gates_csv(**meta), file_name=f"gates_layer{c.layer}.csv",
                       mime="text/csv", key="real_model_csv", on_click="ignore", icon=":material/table:")
    c2.download_button(ui.tr("real_model.export_json"), gates_json(prompt=c.request["text"], head=c.head, **meta),
                       file_name=f"gates_layer{c.layer}_head{c.head}.json", mime="application/json",
                       key="real_model_json", on_click="ignore", icon=":material/data_object:")
    st.caption(ui.tr("real_model.export_html"))


def evidence_table(ev: dict, rows: list) -> None:
    """The demo model's accuracy per query kind: trained, and under each ablation (computed on this server)."""
    with st.expander(ui.tr("real_model.evidence_title", n=ev["n_examples"]), icon=":material/fact_check:"):
        b, s = ev["beta_head"], ev["switch_head"]
        heads = [ui.tr("real_model.ev_kind"), ui.tr("real_model.ev_trained"), ui.tr("real_model.ev_linear"),
                 ui.tr("real_model.ev_stop_writing", layer=b["layer"]), ui.tr("real_model.ev_never_forget", layer=s["layer"])]
        st.dataframe([dict(zip(heads, [ui.tr(f"real_model.ev_{k}"), *(f"{x:.2f}" for x in xs)])) for k, xs in rows],
                     hide_index=True, width="stretch")
        st.caption(ui.tr("real_model.evidence_note"))


VIEWS = {"gates": gates, "intervene": intervene, "check": check, "head": head, "replay": replay, "export": export}
