"""Take the prompt elsewhere: replay a window of one head on the memory page, or export the gates."""
from __future__ import annotations

import streamlit as st

from gdn.qwen35.gates import REPLAY_MAX_DIM, REPLAY_MAX_TOKENS, gates_csv, gates_json, replay_payload
from app_pages._real_model import keys, replay_link
from app_pages._real_model.context import ViewContext
from app_pages._real_model.replay_link import ReplaySpec
from app_pages._real_model.views.intervene import in_effect, link_text, overrides, said
from app_pages._support import ui
from app_pages._support.path import go


def linked_slider(where, label: str, lo: int, hi: int, default: int, key: str) -> int:
    """An integer slider whose value lives in the link (?real_model_replay_len=12), so a shared replay view
    opens on the same window. A slider needs lo < hi: with no choice (a one-token prompt) none is drawn."""
    if lo >= hi:
        return lo
    ui.seed_int(key, lo, hi, default)
    value = int(where.slider(label, lo, hi, key=key))
    ui.sync_to_url(key, default)
    return value


def replay_pickers(c: ViewContext) -> tuple[int, int, int]:
    """The pickers: (first token counted from 1, tokens in the window, dims)."""
    c1, c2, c3 = st.columns(3)
    length = linked_slider(c2, ui.tr("real_model.replay_len"), 1, min(REPLAY_MAX_TOKENS, c.T), min(12, c.T),
                           keys.REPLAY_LEN)
    first = linked_slider(c1, ui.tr("real_model.replay_start"), 1, c.T - length + 1, 1, keys.REPLAY_START)
    dims = linked_slider(c3, ui.tr("real_model.replay_dims"), 2, REPLAY_MAX_DIM, 4, keys.REPLAY_DIMS)
    return min(first, c.T - length + 1), length, dims


def spec_of(c: ViewContext, first: int, length: int, dims: int, iv: tuple | None) -> ReplaySpec:
    return ReplaySpec(layer=c.layer, head=c.head, start=first, length=length, dims=dims, tokens=c.request.max_tokens,
                      prompt=replay_link.prompt_name(c.request.text), iv=link_text(iv[0], iv[1]) if iv else "",
                      model=c.loaded.name)


def send(c: ViewContext, spec: ReplaySpec, iv: tuple | None, at: tuple | None = None) -> None:
    """The window to the memory page, made of the run the page shows: under the intervention, when one is set
    (its constants are the α or β the model ran with). at: (token, stage) to open it at (a link's step)."""
    h = c.head_inputs(**(overrides(c.layer, *iv) if iv else {}))
    place = dict(model=c.loaded.name, layer=c.layer, head=c.head, a=spec.start, b=spec.start + spec.length - 1)
    title = ui.tr("real_model.replay_title_iv", **place, iv=said(c.layer, *iv)) if iv else \
        ui.tr("real_model.replay_title", **place)
    payload = replay_payload(title=title, tokens=c.tokens, start=spec.start - 1, length=spec.length, dims=spec.dims, **h)
    st.session_state.update({"memory_replay": {**payload, "link": spec.text()}, "memory_preset": "replay"})
    if at is not None and at[0] is not None:
        st.session_state.update({"memory_t": at[0], "memory_stage": at[1]})
    go("app_pages/memory_table.py")             # keeps the language and lecture mode


def lost(c: ViewContext, spec: ReplaySpec) -> str | None:
    """What of a linked replay this run cannot show as it was (the words the page says), or None."""
    if c.loaded.name != spec.model:
        return ui.tr("memory.replay_lost_model", place=spec.place(), model=ui.plain(spec.model))
    if replay_link.prompt_name(c.request.text) != spec.prompt or c.request.max_tokens != spec.tokens:
        return ui.tr("real_model.replay_lost_prompt", place=spec.place())
    if (c.layer, c.head) != (spec.layer, spec.head) or spec.start + spec.length - 1 > c.T:
        return ui.tr("real_model.replay_lost_place", place=spec.place(), T=c.T)
    return None


def replay(c: ViewContext) -> None:
    ui.note(ui.tr("real_model.replay_explain", max=REPLAY_MAX_TOKENS, K=c.dims[0], V=c.dims[1]))
    first, length, dims = replay_pickers(c)
    st.caption(ui.tr("real_model.replay_window", a=first, b=first + length - 1,
                     text=ui.plain("".join(c.tokens[first - 1:first + length - 1]))))
    iv = in_effect(c.heads)
    if iv:                                      # the replay is of the run the page shows, intervention included
        st.info(ui.tr("real_model.replay_with_iv", iv=said(c.layer, *iv)), icon=":material/science:")
    spec = spec_of(c, first, length, dims, iv)
    pending = st.session_state.pop(replay_link.PENDING, None)       # a replay link opened in a fresh session
    if pending is not None:
        linked, t, stage = pending
        problem = lost(c, linked)
        if problem is None:
            send(c, linked, iv, (t, stage))
        st.warning(problem, icon=":material/link_off:")
    if st.button(ui.tr("real_model.replay_go"), key=keys.REPLAY, type="primary", icon=":material/movie:"):
        send(c, spec, iv)


def export(c: ViewContext) -> None:
    st.markdown(ui.tr("real_model.export_explain"))
    meta = dict(model=c.loaded.name, layer=c.layer, kernel="chunk", ids=c.ids, tokens=c.tokens, g=c.g, beta=c.beta,
                state_norms=c.norms)
    c1, c2 = st.columns(2)
    c1.download_button(ui.tr("real_model.export_csv"), gates_csv(**meta), file_name=f"gates_layer{c.layer}.csv",
                       mime="text/csv", key=keys.CSV, on_click="ignore", icon=":material/table:")
    c2.download_button(ui.tr("real_model.export_json"), gates_json(prompt=c.request.text, head=c.head, **meta),
                       file_name=f"gates_layer{c.layer}_head{c.head}.json", mime="application/json",
                       key=keys.JSON, on_click="ignore", icon=":material/data_object:")
    st.caption(ui.tr("real_model.export_html"))
