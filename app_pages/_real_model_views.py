"""The five views of the real-model page (gates, one head, kernel check, replay, export), each drawn from
one ViewContext: what the page has already loaded and traced. Only the chosen view runs."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
import streamlit as st

from gdn.figures.real_model import fig_gate_heatmap, fig_head_detail, fig_head_params, fig_overview, fig_state_block
from gdn.ops import CHUNK_SIZE
from gdn.qwen35.analysis import GateRun, layer_state_norms
from gdn.qwen35.gates import (KERNEL_RTOL, REPLAY_MAX_DIM, REPLAY_MAX_TOKENS, gates_csv, gates_json, head_state, kernel_check,
                       replay_payload, top_block)
from app_pages._support import compute, path, ui

TABLE_DIMS = 16                # the state table shows this many key dims x value dims (largest first)


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


def gates(c: ViewContext) -> None:
    ui.note(ui.tr("real_model.gates_explain"))
    hm_height = (420 if c.lecture else 300) + 14 * max(0, len(c.heads) - 8)
    for name, z, scale in (("alpha", c.alpha, "Blues"), ("beta", c.beta, "Oranges")):
        fig = fig_gate_heatmap(z, tokens=c.tokens, layer=c.layer, name="α" if name == "alpha" else "β",
                               title=ui.tr(f"real_model.heatmap_{name}", layer=c.layer), labels=c.labels,
                               colorscale=scale, font_size=c.fs, height=hm_height)
        ui.show_figure(fig, key=f"real_model_{name}", alt=ui.tr(f"real_model.alt_{name}", layer=c.layer, T=c.T))
    st.markdown(ui.tr("real_model.overview_explain"))
    titles = {n: ui.tr(f"real_model.overview_{n}") for n in ("alpha", "beta", "half_life")}
    fig = fig_overview(c.summary, layers=c.run.layers, selected=c.layer, titles=titles, labels=c.labels,
                       font_size=c.fs, height=max(320, 40 * len(c.run.layers) + 160))
    ui.show_figure(fig, key="real_model_overview", alt=ui.tr("real_model.alt_overview"))


def head(c: ViewContext) -> None:
    hl = c.summary["half_life"][c.li, c.head]
    m1, m2, m3, m4 = st.columns(4)
    m1.metric(ui.tr("real_model.mean_alpha"), f"{c.summary['alpha'][c.li, c.head]:.3f}")
    m2.metric(ui.tr("real_model.mean_beta"), f"{c.summary['beta'][c.li, c.head]:.3f}")
    m3.metric(ui.tr("real_model.half_life"), "∞" if not np.isfinite(hl) else f"{hl:.3g}")
    m4.metric(ui.tr("real_model.fixed_speed"), f"{c.run.A[c.li, c.head]:.3f}", help=ui.tr("real_model.fixed_speed_help"))
    if st.session_state.get("real_model_t", c.T - 1) > c.T - 1:
        st.session_state["real_model_t"] = c.T - 1
    t = st.slider(ui.tr("real_model.token_t"), 0, max(c.T - 1, 1), c.T - 1, key="real_model_t", bind="query-params",
                  disabled=c.T == 1)
    t = min(t, c.T - 1)
    detail_titles = {"gates": ui.tr("real_model.detail_gates"), "norm": ui.tr("real_model.detail_norm")}
    fig = fig_head_detail(c.alpha[:, c.head], c.beta[:, c.head], c.norms[:, c.head], tokens=c.tokens, layer=c.layer,
                          head=c.head, marked=t, titles=detail_titles, labels=c.labels, font_size=c.fs,
                          height=520 if c.lecture else 420)
    ui.show_figure(fig, key="real_model_head_fig", alt=ui.tr("real_model.alt_head", layer=c.layer, head=c.head))
    S = compute.cached("state", (c.folder, c.ids, c.layer, c.head, t), lambda: head_state(*c.inputs().tensors(), head=c.head, t=t))
    n = min(TABLE_DIMS, *S.shape)
    rows, cols, block = top_block(S, n)
    fig = fig_state_block(block, rows, cols, layer=c.layer, head=c.head, token=t, labels=c.labels, font_size=c.fs,
                          title=ui.tr("real_model.state_title", t=t, piece=c.tokens[c.enc.group[t]], n=n,
                                      K=S.shape[0], V=S.shape[1]), height=560 if c.lecture else 460)
    ui.show_figure(fig, key="real_model_state", alt=ui.tr("real_model.alt_state", t=t, head=c.head))
    st.caption(ui.tr("real_model.state_note", n=n, K=S.shape[0], V=S.shape[1], norm=f"{np.linalg.norm(S):.3f}",
                     share=f"{100 * np.linalg.norm(block) ** 2 / max(np.linalg.norm(S) ** 2, 1e-30):.0f}"))
    st.markdown(ui.tr("real_model.params_explain"))
    fig = fig_head_params(c.run.A[c.li], c.run.dt_bias[c.li], layer=c.layer, labels=c.labels, font_size=c.fs,
                          titles={"A": ui.tr("real_model.params_A"), "dt_bias": ui.tr("real_model.params_dt")})
    ui.show_figure(fig, key="real_model_params", alt=ui.tr("real_model.alt_params", layer=c.layer))


def check(c: ViewContext) -> None:
    ui.note(ui.tr("real_model.check_explain", layer=c.layer, C=CHUNK_SIZE))
    check_key = (c.folder, c.ids, c.layer)
    if st.button(ui.tr("real_model.check_run", layer=c.layer), key="real_model_check"):
        compute.cached("check", check_key, lambda: kernel_check(*c.inputs().tensors()))
    result = compute.shared_caches()["check"].get(check_key)
    if result is not None:
        cols = st.columns(4)
        cols[0].metric(ui.tr("real_model.check_out"), f"{result['max_diff_output']:.2e}")
        cols[1].metric(ui.tr("real_model.check_state"), f"{result['max_diff_state']:.2e}")
        cols[2].metric(ui.tr("real_model.check_t_chunk"), f"{1000 * result['seconds_chunk']:.1f} ms")
        cols[3].metric(ui.tr("real_model.check_t_rec"), f"{1000 * result['seconds_recurrent']:.1f} ms")
        rel = f"{max(result['rel_output'], result['rel_state']):.1e}"
        if result["agree"]:
            st.success(ui.tr("real_model.check_agree", rel=rel, tol=f"{KERNEL_RTOL:.0e}", T=c.T), icon=":material/check_circle:")
        else:
            st.warning(ui.tr("real_model.check_disagree", rel=rel, tol=f"{KERNEL_RTOL:.0e}"), icon=":material/warning:")


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
        path.go("app_pages/memory_table.py")


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


VIEWS = {"gates": gates, "head": head, "check": check, "replay": replay, "export": export}
