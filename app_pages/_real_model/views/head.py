"""One head up close (its gates, ||S_t||, a block of its state, its fixed parameters: drawn in the worker that
computes them, app_pages/_real_model/drawn.py), and both kernels run on it side by side."""
from __future__ import annotations

import numpy as np
import streamlit as st

from gdn.figures.real_model import fig_kernel_outputs
from gdn.ops import CHUNK_SIZE
from gdn.qwen35.gates import KERNEL_RTOL
from gdn.units import fmt_diff
from app_pages._real_model import keys
from app_pages._real_model.context import ViewContext
from app_pages._support import compute, ui, work


def metrics(c: ViewContext) -> None:
    hl = c.summary["half_life"][c.li, c.head]
    m1, m2, m3, m4 = st.columns(4)
    m1.metric(ui.tr("real_model.mean_alpha"), f"{c.summary['alpha'][c.li, c.head]:.3f}")
    m2.metric(ui.tr("real_model.mean_beta"), f"{c.summary['beta'][c.li, c.head]:.3f}")
    m3.metric(ui.tr("real_model.half_life"), "∞" if not np.isfinite(hl) else f"{hl:.3g}")
    m4.metric(ui.tr("real_model.fixed_speed"), f"{c.run.A[c.li, c.head]:.3f}", help=ui.tr("real_model.fixed_speed_help"))


def head(c: ViewContext) -> None:
    metrics(c)
    # tokens count from 1, as on every axis and in the guesses; t below is the index (from 0)
    if st.session_state.get(keys.TOKEN_T, c.T) > c.T:
        st.session_state[keys.TOKEN_T] = c.T
    shown_t = st.slider(ui.tr("real_model.token_t"), 1, max(c.T, 2), c.T, key=ui.bound(keys.TOKEN_T),
                        bind="query-params", disabled=c.T == 1)
    t = min(shown_t, c.T) - 1
    views = c.head_views(t)
    ui.show_figure(views.detail, key=keys.HEAD_FIG, alt=ui.tr("real_model.alt_head", layer=c.layer, head=c.head))
    ui.show_figure(views.state, key=keys.STATE_FIG, alt=ui.tr("real_model.alt_state", t=t + 1, head=c.head))
    st.caption(ui.tr("real_model.state_note", **views.state_note))
    st.markdown(ui.tr("real_model.params_explain"))
    ui.show_figure(views.params, key=keys.PARAMS_FIG, alt=ui.tr("real_model.alt_params", layer=c.layer))


def check(c: ViewContext) -> None:
    ui.note(ui.tr("real_model.check_explain", layer=c.layer, C=CHUNK_SIZE))
    check_key = (c.folder, c.ids, c.layer, c.head)
    if st.button(ui.tr("real_model.check_run", layer=c.layer, head=c.head), key=keys.CHECK):
        compute.run_job("real_model.check", check_key, work.kernel_check, *check_key)
    result = compute.shared_caches()["real_model.check"].get(check_key)
    if result is None:
        return
    names = list(result["outputs"])
    cols = st.columns(len(names))
    for col, name in zip(cols, names):
        col.metric(ui.tr(f"real_model.kernel_{name}"), f"{1000 * result['seconds'][name]:.1f} ms")
        if name != "recurrent":
            col.caption(ui.tr("real_model.check_diffs", out=fmt_diff(result['max_diff_output'][name], "float32"),
                              state=fmt_diff(result['max_diff_state'][name], "float32")))
    if "fla" not in names:
        st.caption(ui.tr("real_model.check_no_fla"))
    titles = {n: ui.tr(f"real_model.kernel_{n}") for n in names}
    titles.update({f"diff_{n}": ui.tr("real_model.check_diff_title", name=titles[n]) for n in names[1:]})
    fig = fig_kernel_outputs(result["outputs"], tokens=c.tokens, layer=c.layer, head=c.head, titles=titles,
                             labels=c.labels, font_size=c.fs, height=380 if c.lecture else 320)
    ui.show_figure(fig, key=keys.KERNELS_FIG, alt=ui.tr("real_model.alt_kernels", layer=c.layer, head=c.head))
    rel = result["rel"]["chunk"]
    if rel < KERNEL_RTOL:
        st.success(ui.tr("real_model.check_agree", rel=fmt_diff(rel, "float32"), tol=f"{KERNEL_RTOL:.0e}", T=c.T),
                   icon=":material/check_circle:")
    else:
        st.warning(ui.tr("real_model.check_disagree", rel=fmt_diff(rel, "float32"), tol=f"{KERNEL_RTOL:.0e}"), icon=":material/warning:")
