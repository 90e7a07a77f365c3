"""Keyboard stepping that never drops a press.

Streamlit's button shortcuts are triggers: two presses that arrive while the script is still running
merge into one click (8 presses 0.2 s apart advanced 4 steps). Here a small script of our own (a v2
component: no iframe, no CDN) listens on the page, numbers every press and keeps the recent ones as
component state; Python replays each new press once, in order, whatever the batching.
"""
from __future__ import annotations

from typing import Callable

import streamlit as st

KEYS_JS = """
export default function ({ data, parentElement, setStateValue }) {
  const NAMES = { ArrowRight: "right", PageDown: "right", ArrowLeft: "left", PageUp: "left", Home: "home", " ": "space" };
  // Widgets that use these keys themselves keep them (a focused slider, a text box, a select box).
  const OWN_KEYS = ["slider", "combobox", "listbox", "option", "textbox", "spinbutton", "tab", "radio", "menu", "grid"];
  const ownsKeys = (el) => !!el && (el.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(el.tagName)
                                     || OWN_KEYS.includes(el.getAttribute("role")));
  const all = (window.__gdnKeys ??= {});
  const log = (all[data.id] ??= { n: 0, recent: [] });       // survives reruns; a reload starts afresh
  if (log.listener) document.removeEventListener("keydown", log.listener, true);
  log.listener = (e) => {
    const name = NAMES[e.key];
    if (!name || e.altKey || e.ctrlKey || e.metaKey || e.shiftKey || ownsKeys(document.activeElement)) return;
    if (!parentElement.isConnected) return;                   // this stepper is no longer on the page
    e.preventDefault();
    e.stopPropagation();
    log.n += 1;
    log.recent = [...log.recent, name].slice(-64);
    setStateValue("presses", { n: log.n, recent: log.recent });
  };
  document.addEventListener("keydown", log.listener, true);
  return () => document.removeEventListener("keydown", log.listener, true);
}
"""
_component = st.components.v2.component("gdn_key_presses", js=KEYS_JS)


def key_presses(key: str, on_presses: Callable[[list[str]], None]) -> None:
    """Mount the listener; on_presses(["right", "right", "space", ...]) gets each new press once, in order.
    A press is one of "right" (→, PageDown), "left" (←, PageUp), "home", "space"."""
    seen_key = f"{key}_seen"

    def changed() -> None:
        state = st.session_state[key].get("presses") or {}
        n, recent = int(state.get("n", 0)), list(state.get("recent", []))
        seen = st.session_state.get(seen_key, 0)
        new = n - seen if n >= seen else n                  # a count below what we saw: a fresh page
        st.session_state[seen_key] = n
        on_presses(recent[len(recent) - min(new, len(recent)):] if new > 0 else [])

    _component(key=key, data={"id": key}, on_presses_change=changed, width="content", height=0)
