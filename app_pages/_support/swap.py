"""The swapper: one of several HTML views that Python drew, picked in the browser (assets/player/swap.js).

The real model's layer: every layer's gates (and the overview's frame) are built once and sent together,
gzip-packed; the layer buttons only swap which one is shown, with no script run. Where the choice lives:
- the address bar: the browser writes ?<key>= at every pick, so a reload or a copied link reopens it;
- st.session_state[key]: Python's copy, sent by the browser through the players' relay (player.py) only
  just before a click outside (another view, Share), in that click's run. Views that draw their own picker
  for the same key (a selectbox) therefore open on what the browser showed last.
"""
from __future__ import annotations

import streamlit as st

from app_pages._support import ui
from app_pages._support.pack import component_js, pack_json
from app_pages._support.player import RELAYED

_component = st.components.v2.component("gdn_swap", js=component_js("player/swap.js"), isolate_styles=False)
_KEYS = "_swap_keys"            # session: {key: its options}, the keys the relay may set


def chosen(key: str, options: list, default):
    """The value to draw: Python's copy (the last relayed pick or a widget's), else the link's, else the
    session's last; mirrored into the URL (ui.seed_from_url / sync_to_url)."""
    ui.seed_from_url(key, options, default)
    ui.sync_to_url(key, default)
    return st.session_state[key]


def heard(key: str, value) -> None:
    """A pick relayed from the browser: Python's copy follows it, if it names one of the key's options."""
    options = st.session_state.get(_KEYS, {}).get(key, [])
    match = [o for o in options if str(o) == str(value)]
    if match:
        st.session_state[key] = match[0]


RELAYED["swap"] = lambda sent: heard(str(sent.get("key")), sent.get("value"))


def swap(key: str, frames: dict, *, value, default, labels: dict | None = None, bar_label: str = "",
         name: str = "") -> None:
    """Mount a swapper over `frames` (option -> trusted HTML) showing `value`; labels: option -> button
    text (a bar is drawn when bar_label is given). Swappers of one key follow each other; name tells
    several of them apart."""
    st.session_state.setdefault(_KEYS, {})[key] = list(frames)
    packed = pack_json({"frames": {str(k): v for k, v in frames.items()}})
    data = {"id": f"{key}_{name}", "param": key, "value": str(value), "fallback": str(default),
            "options": [{"value": str(k), "label": (labels or {}).get(k, str(k))} for k in frames],
            "label": bar_label, "hash": packed.hash, "gz": packed.gz}
    _component(key=f"{key}_{name}_swap", data=data, width="stretch", height="content")
