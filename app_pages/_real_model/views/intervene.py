"""Interventions: set a layer's α or β (one head or all) to a constant and compare the model's guesses
before and after; on the trained demo, story buttons load the interventions that break its tasks."""
from __future__ import annotations

import numpy as np
import streamlit as st

from gdn.figures.real_model import ALPHA_COLORS, BETA_COLORS, callouts_html, fig_gate_pair
from gdn.qwen35.demo.stories import STORIES
from app_pages._real_model import keys
from app_pages._real_model.context import ViewContext
from app_pages._real_model.found import preset_stories, where
from app_pages._real_model.presets import preset_text
from app_pages._support import ui

ALL_HEADS = -1               # the head picker's "every head of the layer" (None in the library API)


def apply_story(story, preset: str) -> None:
    """A story button: its prompt, layer, head and gate constant, then run (the whole page: the button
    sits in the page's layer fragment, whose own rerun would not run the new prompt)."""
    st.session_state.update({keys.PRESET: preset, keys.PROMPT_EDIT: preset_text(preset), keys.AUTORUN: True,
                             keys.FULL_RUN: True, keys.LAYER: story.layer,
                             keys.IV_HEAD: ALL_HEADS if story.head is None else story.head,
                             keys.IV_ALPHA_ON: story.gate == "alpha", keys.IV_BETA_ON: story.gate == "beta",
                             keys.iv_value(story.gate): story.value})


def story_buttons(c: ViewContext) -> None:
    cols = st.columns(len(STORIES))
    for col, (kind, story) in zip(cols, preset_stories(c.loaded).items()):
        if story is None:
            continue
        col.button(ui.tr(f"real_model.story_btn_{kind}"), key=keys.story(kind), width="stretch",
                   help=ui.tr("real_model.story_btn_help", where=where(story)), on_click=apply_story,
                   args=(story, STORIES[kind]["prompt"]))


def link_text(head: int, on: dict[str, float | None]) -> str:
    """The intervention as one link value: "beta=0.00;head=all", "alpha=1.00;beta=0.50;head=2"; "" when
    none is set. on: gate -> its constant, or None when that gate is left alone."""
    parts = [f"{gate}={value:.2f}" for gate, value in on.items() if value is not None]
    return ";".join([*parts, f"head={'all' if head == ALL_HEADS else head}"]) if parts else ""


def parse_link(text: str, heads: list[int]) -> tuple[int, dict[str, float]] | None:
    """(head or ALL_HEADS, {gate: constant}) of a link's intervention (link_text's inverse), constants rounded
    to the sliders' steps; None if it names none."""
    try:
        fields = dict(part.split("=", 1) for part in text.split(";"))
        named = fields.pop("head")
        head = ALL_HEADS if named == "all" else int(named)
        values = {gate: min(1.0, max(0.0, round(float(fields[gate]) * 20) / 20)) for gate in fields}   # the sliders' steps
    except (KeyError, ValueError):
        return None
    if head not in (ALL_HEADS, *heads) or not values or set(values) - {"alpha", "beta"}:
        return None
    return head, values


def from_link(text: str, heads: list[int]) -> dict | None:
    """The widget states a link's intervention names, or None if it names none."""
    parsed = parse_link(text, heads)
    if parsed is None:
        return None
    head, values = parsed
    state = {keys.IV_HEAD: head}
    for gate in ("alpha", "beta"):
        state[keys.iv_on(gate)] = gate in values
        if gate in values:
            state[keys.iv_value(gate)] = values[gate]
    return state


def in_effect(heads: list[int]) -> tuple[int, dict[str, float]] | None:
    """The intervention set in this session, else the one a fresh session's link names: (head or ALL_HEADS,
    {gate: constant}), or None. The other views read it here: it lives in the intervention view's widgets,
    which exist only while that view is drawn, and in IV_LINK, which outlives them."""
    if keys.IV_LINK not in st.session_state:
        st.session_state[keys.IV_LINK] = st.query_params.get(keys.IV_LINK) or None
    ui.sync_to_url(keys.IV_LINK, "")                  # the view's share link carries it too
    return parse_link(st.session_state[keys.IV_LINK] or "", heads)


def overrides(layer: int, head: int, values: dict[str, float]) -> dict:
    """The intervention as the model takes it: {"set_beta": {(layer, head or None): 0.0}}."""
    where = (layer, None if head == ALL_HEADS else head)
    return {f"set_{gate}": {where: value} for gate, value in values.items()}


def said(layer: int, head: int, values: dict[str, float]) -> str:
    """"β := 0.00 · layer 3, all heads": the intervention in the page's words."""
    gates = ", ".join(f"{'α' if gate == 'alpha' else 'β'} := {value:.2f}" for gate, value in sorted(values.items()))
    place = ui.tr("real_model.where_all", layer=layer) if head == ALL_HEADS else \
        ui.tr("real_model.where", layer=layer, head=head)
    return f"{gates} · {place}"


def controls(c: ViewContext) -> tuple[int, dict]:
    """The head picker and the two gate switches with their constants. Returns (head or ALL_HEADS, overrides).
    The intervention lives in the link (?real_model_iv=beta=0.00;head=all), so a shared story reopens it."""
    c1, c2, c3 = st.columns([2, 3, 3])
    options = [ALL_HEADS, *c.heads]
    if keys.IV_LINK not in st.session_state and (seeded := from_link(st.query_params.get(keys.IV_LINK, ""), c.heads)):
        st.session_state.update(seeded)                          # a fresh session opened from a shared link
    if st.session_state.get(keys.IV_HEAD) not in options:
        st.session_state[keys.IV_HEAD] = c.head
    names = {h: ui.tr("real_model.iv_all") if h == ALL_HEADS else str(h) for h in options}   # format_func runs later
    head = c1.selectbox(ui.tr("real_model.iv_head", layer=c.layer), options, key=keys.IV_HEAD, format_func=names.get)
    st.session_state.setdefault(keys.IV_ALPHA, 1.0)               # a story button may have set them
    st.session_state.setdefault(keys.IV_BETA, 0.0)
    set_a = c2.toggle(ui.tr("real_model.iv_alpha_on"), key=keys.IV_ALPHA_ON)
    a = c2.slider("α :=", 0.0, 1.0, step=0.05, key=keys.IV_ALPHA, disabled=not set_a, label_visibility="collapsed")
    set_b = c3.toggle(ui.tr("real_model.iv_beta_on"), key=keys.IV_BETA_ON)
    b = c3.slider("β :=", 0.0, 1.0, step=0.05, key=keys.IV_BETA, disabled=not set_b, label_visibility="collapsed")
    st.session_state[keys.IV_LINK] = link_text(head, {"alpha": a if set_a else None, "beta": b if set_b else None}) or None
    ui.sync_to_url(keys.IV_LINK, "")
    return head, overrides(c.layer, head, {**({"alpha": a} if set_a else {}), **({"beta": b} if set_b else {})})


def intervene(c: ViewContext) -> None:
    if c.kind == "trained":
        story_buttons(c)
    head, overrides = controls(c)
    if not overrides:
        st.info(ui.tr("real_model.iv_none"), icon=":material/touch_app:")
        return
    before, after = c.predictions(), c.predictions(**overrides)
    slots = c.slots or [(c.T - 1, int(before.top_ids[-1, 0]))]           # natural text: the next token after the prompt
    first = lambda p, t: (c.piece(int(p.top_ids[t, 0])), float(p.top_p[t, 0]))
    st.html(callouts_html([{"t": t, "token": c.tokens[t], "expected": c.piece(a_id), "before": first(before, t),
                            "after": first(after, t)} for t, a_id in slots],
                          labels={"token": c.labels["token"], "expected": ui.tr("real_model.iv_expected")}))
    rows = []
    for t, a_id in slots:
        show = lambda p: " · ".join(f"{c.piece(i).strip() or '␣'} {q:.2f}" for i, q in zip(p.top_ids[t], p.top_p[t]))
        rows.append({ui.tr("real_model.iv_after_token"): f"{t + 1} «{c.tokens[t].strip()}»",   # tokens count from 1
                     ui.tr("real_model.iv_expected"): c.piece(a_id).strip(),
                     ui.tr("real_model.iv_before"): show(before), ui.tr("real_model.iv_after"): show(after),
                     ui.tr("real_model.iv_prob"): f"{before.prob_of(t, a_id):.2f} → {after.prob_of(t, a_id):.2f}",
                     "": "✓" if int(after.top_ids[t, 0]) == a_id else "✗"})
    st.dataframe(rows, hide_index=True, width="stretch")
    changed = int((before.top_ids[:, 0] != after.top_ids[:, 0]).sum())
    st.caption(ui.tr("real_model.iv_changed", n=changed, T=c.T))
    gate = "alpha" if "set_alpha" in overrides else "beta"
    z = (lambda p: np.exp(p.g[c.li])) if gate == "alpha" else (lambda p: p.beta[c.li])
    fig = fig_gate_pair(z(before), z(after), tokens=c.tokens, layer=c.layer, name="α" if gate == "alpha" else "β",
                        titles=[ui.tr("real_model.iv_fig_before"), ui.tr("real_model.iv_fig_after")], labels=c.labels,
                        colorscale=ALPHA_COLORS if gate == "alpha" else BETA_COLORS,
                        changed=tuple(c.heads) if head == ALL_HEADS else (head,), font_size=c.fs,
                        height=380 if c.lecture else 300)
    ui.show_figure(fig, key=keys.IV_FIG, alt=ui.tr("real_model.alt_iv", layer=c.layer))
    ui.note(ui.tr("real_model.iv_explain"))
