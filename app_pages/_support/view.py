"""Python's side of the one protocol of the views the browser answers by itself (assets/common/view.js):
the frame player (player.py), the explorer (explorer.py), the swapper (swap.py) and follow-me (_follow.py).

The browser keeps every view's position in the address bar and in the tab; Python keeps a copy in the
session. Two things keep them in step:
- the handshake, seq(): Python numbers each position it sets on purpose (a link, a classroom demo, a story
  button). A mount whose number is new makes the browser take Python's position; any other keeps the tab's
  own (it may be ahead: stepping sends nothing). A position the browser reported (heard) is no move.
- the relay, relay(): the browser's way to Python, mounted once per run outside every fragment (app.py), so
  a message arrives in the same full run as the click outside a view that made it go (Share, an export,
  another widget; never a page link, view.js says why). It carries a batch of typed messages
  {kind, id, ...}; each kind's module registers its handler in KINDS at import ("position": player.py,
  "values": explorer.py, "pick": swap.py). A tab that lacks a payload it was sent asks through it too
  (payload.py: a payload goes to a tab once, then by its hash).
"""
from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from app_pages._support import payload
from app_pages._support.pack import component_js

RELAY = "gdn_view_relay"                 # the relay's widget key (bench/load_ws.py sends as it does)
KINDS: dict[str, Callable[[dict], None]] = {}   # message kind -> its handler, filled at import by the view modules

_relay = st.components.v2.component("gdn_view_relay", js=component_js("common/relay.js"))


OWNERS = "_view_owners"                 # session key: {widget key: the view it positions}, for set_on_purpose


def seq(view_id: str, position, keys: tuple[str, ...] = ()) -> int:
    """The handshake's number of `view_id` at Python's `position` (any value compared with ==): the same
    while it is the position the browser last showed or reported, a new one when Python moved it.
    keys: the session keys that hold the position (set_on_purpose finds the view by them)."""
    state = st.session_state
    owners = state.setdefault(OWNERS, {})
    owners.update(dict.fromkeys(keys, view_id))
    if state.get(f"_view_synced_{view_id}") != position:
        state[f"_view_seq_{view_id}"] = state.get(f"_view_seq_{view_id}", 0) + 1
        state[f"_view_synced_{view_id}"] = position
    return state.get(f"_view_seq_{view_id}", 0)          # 0: heard from the browser before Python drew it


def set_on_purpose(values: dict) -> None:
    """Python sets these session keys on purpose (a classroom demo opens a page at its settings): every view
    they position takes them at its next mount, even when they equal the position Python last synced. The
    tab may have moved away from it since without saying so (stepping sends nothing, and a page link flushes
    nothing: view.js), so an unchanged position is no proof the tab shows it."""
    state = st.session_state
    owners = state.get(OWNERS, {})
    for key in values:
        if key in owners:
            state.pop(f"_view_synced_{owners[key]}", None)
    state.update(values)


def heard(view_id: str, position) -> None:
    """The browser reported `position` itself: it shows it already, so the next seq() is no move."""
    st.session_state[f"_view_synced_{view_id}"] = position


def messages(batch) -> list[dict]:
    """The typed messages of a relayed batch {n, messages: [{kind, id, ...}]}; anything else is dropped."""
    found = batch.get("messages") if isinstance(batch, dict) else None
    return [m for m in found if isinstance(m, dict) and isinstance(m.get("kind"), str)
            and isinstance(m.get("id"), str)] if isinstance(found, list) else []


def _heard() -> None:
    for message in messages((st.session_state[RELAY] or {}).get("sent")):
        handler = KINDS.get(message["kind"])
        if handler is not None:
            handler(message)


def relay() -> None:
    """Mount once per run, outside any fragment (app.py). It also links hovers across figures: every
    element marked data-tok="t" lights up with the others of token t, and a card slot (.gdn-tok-slot)
    shows token t's card."""
    _relay(key=RELAY, on_sent_change=_heard, on_need_change=payload.resend_all, width="content", height=0)
