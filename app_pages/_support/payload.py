"""A packed payload (a player's frames, an explorer's grid, a swapper's view) goes to a tab once, then by its
hash alone: Python's side of view.js's payloadOf (assets/common/view.js; the protocol is view.py's).

Every full run mounts the page's players and explorers again, and each mount carried its whole packed
payload (the start page's first figure: 233 KB of base64): Streamlit JSON-encodes, serializes and hashes
every byte of it on every run, and a client that does not report its message cache gets it again. The
browser keeps what it was sent (payloadOf: a tab-wide cache by hash, more entries than KEEP), so after
the first time Python sends only the hash. Where this session's record and the tab disagree (a message the
browser never rendered, one it evicted), the tab asks through the views' relay (view.py) and the record is
dropped: that run sends everything in full again. A new tab or a new replica
is a new session with an empty record, so it always gets the payloads themselves.
"""
from __future__ import annotations

import streamlit as st

SENT = "_payloads_sent"     # session: {hash: True}, the payloads this tab was sent, oldest first
KEEP = 96                   # the browser keeps 128 (view.js, PAYLOADS_KEPT): what Python counts as sent is still
                            # there; a real model's page alone sends 2 per GDN layer (its gates and overview)


def ship(hash: str, gz: str) -> dict[str, str]:
    """What a mount sends of the payload `hash`: {"hash", "gz"} unless this session already sent it,
    then {"hash"} (the tab holds it). Call sent() once the mount is made."""
    return {"hash": hash} if hash in st.session_state.get(SENT, {}) else {"hash": hash, "gz": gz}


def sent(*hashes: str) -> None:
    """These payloads went out with a mount (recorded after it, not before: a run stopped by a newer
    click between the two never sent it). The most recent last, as the tab orders them."""
    record = st.session_state.setdefault(SENT, {})
    for h in hashes:
        record.pop(h, None)
        record[h] = True
    while len(record) > KEEP:
        del record[next(iter(record))]


def resend_all() -> None:
    """The tab lacks a payload it was sent: this run sends every payload in full."""
    st.session_state[SENT] = {}
