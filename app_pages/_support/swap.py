"""The swapper: one of several HTML views that Python drew, picked in the browser (assets/player/swap.js).

The real model's layer: every layer's gates (and the overview's frame) are built and packed once per trace,
in the worker that ran it (app_pages/_real_model/drawn.py: each view's HTML as one JSON string, pack.pack_json),
and each goes to a tab once, then by its hash (payload.py); the layer buttons only swap which one is
shown, with no script run. Where the choice lives:
- the address bar: the browser writes ?<key>= at every pick, so a reload or a copied link reopens it;
- st.session_state[key]: Python's copy, sent by the browser through the views' relay (view.py, kind "pick")
  only just before a click outside (another view, Share), in that click's run. Views that draw their own
  picker for the same key (a selectbox) therefore open on what the browser showed last. A value Python
  sets on purpose (a story button) gives a new seq (view.py's handshake): the browser shows it.
"""
from __future__ import annotations

import streamlit as st

from app_pages._support import payload, ui, view
from app_pages._support.pack import Packed, component_js

_component = st.components.v2.component("gdn_swap", js=component_js("player/swap.js"), isolate_styles=False)
_KEYS = "_swap_keys"            # session: {key: its options}, the keys the relay may set


def chosen(key: str, options: list, default):
    """The value to draw: Python's copy (the last relayed pick or a widget's), else the link's, else the
    session's last; mirrored into the URL (ui.seed_from_url / sync_to_url)."""
    ui.seed_from_url(key, options, default)
    ui.sync_to_url(key, default)
    return st.session_state[key]


def heard(sent: dict) -> None:
    """A pick relayed from the browser {id: key, value}: Python's copy follows it, if it names one of the
    key's options (no new seq: the browser shows it already)."""
    key = str(sent.get("id"))
    match = [o for o in st.session_state.get(_KEYS, {}).get(key, []) if str(o) == str(sent.get("value"))]
    if match:
        st.session_state[key] = match[0]
        view.heard(f"pick_{key}", str(match[0]))


view.KINDS["pick"] = heard


def swap(key: str, frames: dict[object, Packed], *, value, default, labels: dict | None = None,
         bar_label: str = "", name: str = "") -> None:
    """Mount a swapper over `frames` (option -> its packed HTML: pack_json of the HTML string) showing `value`; labels: option
    -> button text (a bar is drawn when bar_label is given). Swappers of one key follow each other; name
    tells several of them apart. An option's payload is sent in full only the first time this tab meets it."""
    st.session_state.setdefault(_KEYS, {})[key] = list(frames)
    options = [{"value": str(k), "label": (labels or {}).get(k, str(k)), **payload.ship(p.hash, p.gz)}
               for k, p in frames.items()]
    data = {"id": f"{key}_{name}", "param": key, "seq": view.seq(f"pick_{key}", str(value), (key,)), "value": str(value),
            "fallback": str(default), "options": options, "label": bar_label}
    _component(key=f"{key}_{name}_swap", data=data, width="stretch", height="content")
    payload.sent(*(p.hash for p in frames.values()))
