"""A packed payload (a player's frames, an explorer's grid) goes to a tab once, then by its hash alone.

Every full run mounts the page's players and explorers again, and each mount carried its whole packed
payload (the start page's first figure: 233 KB of base64): Streamlit JSON-encodes, serializes and hashes
every byte of it on every run, and a client that does not report its message cache gets it again. The
browser keeps what it was sent (assets/player/payloads.js: a tab-wide cache by hash, more entries than
KEEP), so after the first time Python sends only the hash. Where this session's record and the tab
disagree (a message the browser never rendered, one it evicted), the tab asks through the players' relay
(player.py) and the record is dropped: that run sends everything in full again. A new tab or a new replica
is a new session with an empty record, so it always gets the payloads themselves.
"""
from __future__ import annotations

import streamlit as st

SENT = "_payloads_sent"     # session: {hash: True}, the payloads this tab was sent, oldest first
KEEP = 32                   # the browser keeps 48 (payloads.js): what Python counts as sent is still there


def ship(hash: str, gz: str) -> dict[str, str]:
    """What a mount sends of the payload `hash`: {"hash", "gz"} the first time this session meets it,
    {"hash"} after (the tab holds it)."""
    sent = st.session_state.setdefault(SENT, {})
    if sent.pop(hash, None):
        sent[hash] = True                                   # the most recent again, in the browser too
        return {"hash": hash}
    sent[hash] = True
    while len(sent) > KEEP:
        del sent[next(iter(sent))]
    return {"hash": hash, "gz": gz}


def resend_all() -> None:
    """The tab lacks a payload it was sent: this run sends every payload in full."""
    st.session_state[SENT] = {}
