"""Widgets whose value lives in the link, and the registry of them that share links are made from.

A page links a widget in one of two ways, and both put its key in the session's registry:
    linked(...) / linked_int(...)      choice and number widgets linked by hand (stable option ids in the URL)
    seed_from_url + sync_to_url        state no widget owns (a player's token and stage)
    key=bound("memory_dk"), bind="query-params"
                                       sliders and toggles Streamlit links itself
The share link carries exactly the registered keys of the page (linked_params), so a widget that does
not read the URL can never leak into a link, and one that does is never left out.
"""
from __future__ import annotations

import re

import streamlit as st

from app_pages._support.chrome import lang, put_param

_REGISTRY = "_linked"          # session key: {widget key: None}, in the order the page linked them
_KEPT = "_linked_kept"         # session key: {widget key: its last value}, outliving the widget


def _kept(key: str):
    """The value a linked widget last had in this session. Streamlit drops a widget's state on any run
    that does not draw it (a visit to another page), and the page switch clears the query string, so
    without this copy coming back to a page would reset its example and seed."""
    return st.session_state.get(_KEPT, {}).get(key)


def bound(key: str) -> str:
    """Register `key` as living in the link and return it: for widgets drawn with bind="query-params"."""
    st.session_state.setdefault(_REGISTRY, {})[key] = None
    return key


def linked_params(prefix: str) -> dict:
    """The plain values (numbers, strings) of the registered keys of the page whose keys start with
    `prefix` + "_", for a link that reopens this view. A key the session does not hold now (a view not
    drawn this run) is left out, and so are booleans and None (an unset choice)."""
    values = ((k, st.session_state.get(k)) for k in st.session_state.get(_REGISTRY, {}) if k.startswith(prefix + "_"))
    return {k: v for k, v in values if isinstance(v, (int, float, str)) and not isinstance(v, bool)}


def seed_from_url(key: str, options, default) -> None:
    """Before a choice widget is drawn: on a fresh session take ?key= from the link if it names an
    option; later, if the options changed under the stored value, fall back to the default."""
    bound(key)
    if key not in st.session_state:
        wanted = st.query_params.get(key)
        kept = _kept(key)
        st.session_state[key] = next((o for o in options if str(o) == wanted),
                                     kept if kept in options else default)
    elif st.session_state[key] not in options:
        st.session_state[key] = default


def sync_to_url(key: str, default) -> None:
    """After the widget: mirror its value into the URL, leaving defaults out to keep links short."""
    bound(key)
    value = st.session_state.get(key)
    st.session_state.setdefault(_KEPT, {})[key] = value
    if value is None or value == default:
        st.query_params.pop(key, None)
    else:
        put_param(key, str(value))


def relabel_after_language_switch(key: str) -> None:
    """Call before drawing a keyed choice widget with translated option labels. After a language
    switch such a widget keeps showing its chosen option in the old language until picked again;
    writing its value from code makes Streamlit send it anew, with the new label."""
    drawn_in = st.session_state.setdefault("_drawn_in_lang", {})
    if key in st.session_state and drawn_in.get(key, lang()) != lang():
        st.session_state[key] = st.session_state[key]
    drawn_in[key] = lang()


def linked(widget, label: str, options, *, key: str, default, **kwargs):
    """A choice widget whose value lives in the link: `widget(label, options, key=key, **kwargs)`
    (st.selectbox, a column's select_slider, ...) seeded from ?key=, kept valid, and mirrored back.

    Choice widgets are linked by hand, not with bind="query-params", so the URL holds the stable
    option id (?memory_preset=k1_update, ?cost_T=32768), never its translated or formatted label."""
    options = list(options)
    seed_from_url(key, options, default)
    relabel_after_language_switch(key)
    value = widget(label, options, key=key, **kwargs)
    sync_to_url(key, default)
    return value


def linked_int(where, label: str, lo: int, hi: int, default: int, *, key: str, **kwargs) -> int:
    """An integer number_input whose value lives in the link, linked by hand like `linked`: Streamlit's
    own binding raises on ?key=inf, 1e400 or 5000 digits. A link value that is not a whole number in
    [lo, hi] is ignored (the default is shown and the link corrected)."""
    seed_int(key, lo, hi, default)
    value = int(where.number_input(label, lo, hi, key=key, **kwargs))
    sync_to_url(key, default)
    return value


def seed_int(key: str, lo: int, hi: int, default: int) -> None:
    """Before an integer widget linked by hand is drawn: on a fresh session take ?key= from the link if it is a
    whole number in [lo, hi] (else this session's last value, else the default); later, keep the stored value
    in [lo, hi] (a slider whose range follows the prompt's length refuses a value outside it)."""
    bound(key)
    if key not in st.session_state:
        text = (st.query_params.get(key) or "").strip()
        valid = re.fullmatch(r"-?\d{1,12}", text) is not None and lo <= int(text) <= hi
        kept = _kept(key)
        st.session_state[key] = int(text) if valid else kept if isinstance(kept, int) and lo <= kept <= hi else default
    st.session_state[key] = max(lo, min(int(st.session_state[key]), hi))
