"""Downloads from the hub, if the operator allows them: check the repo's config and size first, then fetch.

One download at a time per server (compute.download_lock), apart from the forward-pass slots. The folder
a finished download lands in is picked on the next run (keys.PICKED)."""
from __future__ import annotations

import streamlit as st

from gdn.qwen35 import sources  # called through the module: tests put a fake hub behind plan_download
from gdn.qwen35.errors import error_kind
from app_pages._real_model import keys
from app_pages._real_model.fail import fail
from app_pages._support import compute, ui
from app_pages._support.turn import given_up

QWEN_08B = "Qwen/Qwen3.5-0.8B"
QWEN_08B_GB = 1.6              # its safetensors + tokenizer (the one-click button says so before anything is fetched)


def hub_call(action):
    """Run a hub action; a failure becomes (message, error kind) in session state, for `fail` to show."""
    st.session_state.pop(keys.DOWNLOAD_ERROR, None)
    try:
        with given_up():                # a hub call waits on the network: the other runs go on meanwhile
            return action()
    except ValueError as e:
        st.session_state[keys.DOWNLOAD_ERROR] = (str(e), error_kind(e))
    except Exception as e:  # network and hub errors: offline, unknown repo, gated repo, full disk...
        st.session_state[keys.DOWNLOAD_ERROR] = (f"{type(e).__name__}: {e}", "download")
    return None


def ask_for_plan() -> None:
    """The one-click 0.8B button and the repo box: each checks the repo's config and size (a plan)."""
    if st.button(ui.tr("real_model.get_08b", gb=f"{QWEN_08B_GB:.1f}"), key=keys.GET_08B, type="primary",
                 icon=":material/download:"):
        st.session_state[keys.PLAN] = hub_call(lambda: sources.plan_download(QWEN_08B))    # config checked first
        st.session_state[keys.FETCH_NOW] = st.session_state[keys.PLAN] is not None
    c1, c2 = st.columns([3, 1], vertical_alignment="bottom")
    c1.text_input(ui.tr("real_model.repo"), key=keys.REPO_EDIT, placeholder=QWEN_08B)
    if c2.button(ui.tr("real_model.download_check"), key=keys.DOWNLOAD_CHECK):
        repo = st.session_state.get(keys.REPO_EDIT, "").strip()
        st.session_state[keys.PLAN] = hub_call(lambda: sources.plan_download(repo))
    st.caption(ui.tr("real_model.download_help", cap=f"{sources.max_download_bytes() / 1e9:.0f}"))


def fetch(plan) -> None:
    """Download the plan's files with a progress bar; on success pick the new folder and rerun."""
    gb = f"{plan.total_bytes / 1e9:.2f}"
    bar = st.progress(0.0, text=ui.tr("real_model.download_progress", done="0.00", gb=gb))
    show = lambda done, total, name: bar.progress(min(1.0, done / max(total, 1)), text=ui.tr(
        "real_model.download_progress", done=f"{done / 1e9:.2f}", gb=f"{total / 1e9:.2f}"))
    lock = compute.download_lock()
    if not lock.acquire(blocking=False):
        st.info(ui.tr("real_model.download_busy"), icon=":material/hourglass_top:")
        st.stop()
    try:
        folder = hub_call(lambda: sources.download(plan, progress=show))
    finally:
        lock.release()
    if folder is not None:
        compute.sources.clear()
        st.session_state.pop(keys.PLAN, None)
        st.session_state[keys.PICKED] = str(folder)            # the picker is drawn: set it on the rerun
        st.rerun()
    fail(*st.session_state[keys.DOWNLOAD_ERROR])


def panel() -> None:
    """The download panel, in place of a model: it always ends the page's run."""
    if not sources.downloads_allowed():
        st.info(ui.tr("real_model.download_off", var=sources.ALLOW_DOWNLOADS, cap=sources.MAX_DOWNLOAD_GB),
                icon=":material/cloud_off:")
        st.stop()
    ask_for_plan()
    if keys.DOWNLOAD_ERROR in st.session_state:
        fail(*st.session_state[keys.DOWNLOAD_ERROR])
    plan = st.session_state.get(keys.PLAN)
    if plan is None:
        st.stop()
    gb = f"{plan.total_bytes / 1e9:.2f}"
    st.markdown(ui.tr("real_model.download_plan", repo=ui.plain(plan.repo_id), n=len(plan.files), gb=gb,
                      layers=plan.n_layers))
    go_now = st.session_state.pop(keys.FETCH_NOW, False)       # the one-click button: no second click
    if st.button(ui.tr("real_model.download_go", gb=gb), key=keys.DOWNLOAD, type="primary",
                 icon=":material/download:") or go_now:
        fetch(plan)
    st.stop()
