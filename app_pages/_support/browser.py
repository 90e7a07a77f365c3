"""What the app keeps in the browser tab itself: text inputs cleaned before they are sent, and a student's
prompt kept across a move to another replica of a class server.

1. A lone surrogate (half of a UTF-16 pair, e.g. "\\uD800" from a broken paste) cannot be encoded as UTF-8:
   Streamlit's transport sends it anyway and the server fails to decode every later message of that tab
   (Run silently did nothing). A capture-phase listener replaces each one with U+FFFD (the visible "�")
   before the widget's own handler reads the value, so nothing unencodable ever leaves the tab.
2. Behind deploy/serve-class.sh a session lives in one replica; when that replica dies, nginx sends the
   tab to another one, which starts a new session from the link alone (the view, the step, the preset)
   and had lost the prompt. The tab keeps the prompt in its sessionStorage with the id of the server that
   drew it; a page drawn by another server hands the prompt back and says once that the server changed.
"""
from __future__ import annotations

import uuid

import streamlit as st

from app_pages._support.chrome import ASSETS, tr

KEPT = ("real_model_prompt_edit", "real_model_preset")      # what a move must not lose (the link keeps the rest)
RUN_AFTER_RESTORE = "real_model_autorun"                     # the real-model page runs the restored prompt
MOVED = "_server_moved"                                      # session flag: say once that the server changed

CLEAN_INPUTS_JS = (ASSETS / "common" / "clean_inputs.js").read_text(encoding="utf-8")
_clean_inputs = st.components.v2.component("gdn_clean_inputs", js=CLEAN_INPUTS_JS)
SKIP_LINK_JS = (ASSETS / "common" / "skip_link.js").read_text(encoding="utf-8")
_skip_link = st.components.v2.component("gdn_skip_link", js=SKIP_LINK_JS)
KEEPER_JS = (ASSETS / "common" / "keeper.js").read_text(encoding="utf-8")
_keeper = st.components.v2.component("gdn_keeper", js=KEEPER_JS)


@st.cache_resource
def server_id() -> str:
    """A random id of this server process (a restarted replica gets a new one)."""
    return uuid.uuid4().hex


def clean_text_inputs() -> None:
    """No lone surrogate ever leaves the tab (assets/common/clean_inputs.js: one listener per tab)."""
    _clean_inputs(key="_clean_inputs", height=0)


def name_skip_link() -> None:
    """Streamlit's skip link ("Skip to main content") in the page's language: its text is Streamlit's, so the
    tab renames it (assets/common/skip_link.js)."""
    _skip_link(key="_skip_link", data={"label": tr("common.skip_link")}, height=0)


def _restore() -> None:
    kept = getattr(st.session_state.get("_keeper"), "moved", None)
    if isinstance(kept, dict):
        st.session_state.update({k: v for k, v in kept.items() if k in KEPT and isinstance(v, str)})
        st.session_state[RUN_AFTER_RESTORE] = True          # this session's first run ran the default prompt
        st.session_state[MOVED] = True


def say_if_moved() -> None:
    """Before the page: once, after a move, the plain note that the server changed and what was kept."""
    if st.session_state.pop(MOVED, False):
        st.info(tr("common.server_changed"), icon=":material/swap_horiz:")


def keep() -> None:
    """After the page: the tab stores what KEPT names (as this run left it) and the server's id."""
    fresh = not st.session_state.get("_keeper_seen", False)
    st.session_state["_keeper_seen"] = True
    kept = {k: st.session_state[k] for k in KEPT if isinstance(st.session_state.get(k), str)}
    _keeper(key="_keeper", data={"server": server_id(), "fresh": fresh, "kept": kept or None},
            on_moved_change=_restore, height=0)
