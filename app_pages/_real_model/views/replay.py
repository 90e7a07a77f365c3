"""Take the prompt elsewhere: replay a window of one head on the memory page, or export the gates."""
from __future__ import annotations

import streamlit as st

from gdn.qwen35.gates import REPLAY_MAX_DIM, REPLAY_MAX_TOKENS, gates_csv, gates_json, replay_payload
from app_pages._real_model import keys
from app_pages._real_model.context import ViewContext
from app_pages._support import ui
from app_pages._support.path import go


def replay(c: ViewContext) -> None:
    ui.note(ui.tr("real_model.replay_explain", max=REPLAY_MAX_TOKENS, K=c.dims[0], V=c.dims[1]))
    c1, c2, c3 = st.columns(3)
    # A slider needs min < max: a one-token prompt (or a window as long as the prompt) has no choice.
    w_len = c2.slider(ui.tr("real_model.replay_len"), 1, min(REPLAY_MAX_TOKENS, c.T), min(12, c.T),
                      key=keys.REPLAY_LEN) if c.T > 1 else 1
    # tokens count from 1 here as on every axis of the page; w_start below is the index (from 0)
    first = c1.slider(ui.tr("real_model.replay_start"), 1, c.T - w_len + 1, 1, key=keys.REPLAY_START) if c.T > w_len else 1
    w_start = min(first - 1, c.T - w_len)
    dims = c3.slider(ui.tr("real_model.replay_dims"), 2, REPLAY_MAX_DIM, 4, key=keys.REPLAY_DIMS)
    st.caption(ui.tr("real_model.replay_window", a=w_start + 1, b=w_start + w_len,
                     text=ui.plain("".join(c.tokens[w_start:w_start + w_len]))))
    if st.button(ui.tr("real_model.replay_go"), key=keys.REPLAY, type="primary", icon=":material/movie:"):
        h = c.head_inputs()
        st.session_state["memory_replay"] = replay_payload(
            title=ui.tr("real_model.replay_title", model=c.loaded.name, layer=c.layer, head=c.head, a=w_start + 1,
                        b=w_start + w_len), tokens=c.tokens, start=w_start, length=w_len, dims=dims, **h)
        st.session_state["memory_preset"] = "replay"
        go("app_pages/memory_table.py")             # keeps the language and lecture mode


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
