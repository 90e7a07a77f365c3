"""Redraw what shows the view's link once the link has moved on without it.

The sidebar's "Share this view" panel is drawn by a full script run, but stepping, the cost sliders and
the chunking sliders rerun only their fragment: the browser's address follows them (st.query_params),
the panel's link and QR code did not (reproduced: three → presses, the panel still said stage=decay).
This small script (a v2 component like keys.py: no iframe, no CDN) sits inside the panel; while the
panel is open and the address differs from the query the panel was drawn for, it asks for one full run,
which draws the panel anew. A closed panel costs nothing: no run is asked for.
"""
from __future__ import annotations

import streamlit as st

WATCH_JS = """
export default function ({ data, parentElement, setStateValue }) {
  const norm = (q) => [...new URLSearchParams(q)].map(([k, v]) => k + "=" + v).sort().join("&");
  const asked = (window.__gdnUrlWatch ??= {});
  const check = () => {
    if (!parentElement.isConnected || parentElement.offsetParent === null) return;   // panel closed
    const now = norm(window.location.search);
    if (now !== norm(data.shown) && asked[data.key] !== now) {
      asked[data.key] = now;                                   // once per address: never a loop
      setStateValue("address", now);
    }
  };
  const timer = setInterval(check, 400);
  check();
  return () => clearInterval(timer);
}
"""
_component = st.components.v2.component("gdn_url_watch", js=WATCH_JS)


def rerun_when_url_moves(key: str, shown_query: str) -> None:
    """shown_query: the query string the surrounding panel was drawn for ("lang=en&memory_t=3")."""
    _component(key=key, data={"key": key, "shown": shown_query}, on_address_change=lambda: None,
               width="content", height=0)
