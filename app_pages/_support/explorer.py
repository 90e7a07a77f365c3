"""The explorer: a figure whose few discrete controls and linked hovers are answered in the browser.

The frame player (player.py) steps a token x stage stream; the explorer answers sliders with a small
discrete domain. Python draws the figure's HTML at every point of the grid of the controls' values (the
lesson code computes every number), sends all of it at once, gzip-packed, and assets/explorer/explorer.js
only swaps the HTML of the chosen point, so a slider move paints in the next animation frame and sends
nothing to the server. Inside a figure, every element marked data-link="x" lights up (class gdn-lit)
while any element with the same mark is pointed at or focused; an element marked data-open="x" sends x
to Python when clicked (the one case that reruns: it opens another page).

Where the values live, as for the player:
- the address bar: the browser writes each control's ?<key>= (left out at its default) at every move;
- st.session_state[<key>]: Python's copy, sent through the views' relay (view.py, mounted outside every
  fragment) only just before a click or Enter outside the explorer, so a share link or another widget's
  run sees the values on screen;
- a value set by Python (a new link, a classroom demo) gives a new seq (view.py's handshake) and the
  browser follows;
  a value between the grid's points (an old link, another grid's value) goes to the nearest (snap_to_grid).
When a server-side widget changes the grid (its controls, their ranges), the browser rebuilds the sliders.
"""
from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import streamlit as st

from app_pages._support import payload, ui, view
from app_pages._support.figures import standalone_html
from app_pages._support.pack import Packed, component_js, pack_json
from app_pages._support.url_state import seed_from_url, sync_to_url

EXPLORER_CSS = (ui.ASSETS / "explorer" / "explorer.css").read_text(encoding="utf-8")   # also in the downloads
EXPLORER_JS = component_js("explorer/explorer.js", css="explorer/explorer.css", css_name="EXPLORER_CSS")
_component = st.components.v2.component("gdn_explorer", js=EXPLORER_JS, isolate_styles=False)
PLAY_MS = 900               # one value per tick when a control plays
DOMAINS = "_explorer_domains"   # session key: {explorer id: {control key: [options]}}, what the relay may set


@dataclass(frozen=True)
class Control:
    """One slider of the explorer: its session and URL key, its label, its discrete values (the URL holds
    str(value)) and how each is shown; play: a ▶ button that walks through the values."""
    key: str
    label: str
    options: tuple
    labels: tuple[str, ...]
    default: object
    play: bool = False


def grid_points(controls: list[Control]):
    """Every point of the controls' grid as (its name "i,j,...", the values at it), first control slowest."""
    for idx in itertools.product(*(range(len(c.options)) for c in controls)):
        yield ",".join(map(str, idx)), tuple(c.options[i] for c, i in zip(controls, idx))


def pack_grid(controls: list[Control], draw: Callable[..., str]) -> Packed:
    """draw(*values) -> the figure's HTML at one grid point, called at every point. Gzip: neighbouring
    points repeat most of their markup, so a few hundred frames pack to tens of KB."""
    frames = {name: draw(*values) for name, values in grid_points(controls)}
    return pack_json(frames, n_frames=len(frames))


def nearest(control: Control, wanted) -> object | None:
    """The option of a numeric control nearest to `wanted` (a link's text, a value of another grid),
    or None when it is no finite number within the options' range."""
    try:
        x = float(wanted)
    except (TypeError, ValueError, OverflowError):
        return None
    numbers = [o for o in control.options if isinstance(o, (int, float))]
    if not numbers or not np.isfinite(x) or not min(numbers) <= x <= max(numbers):
        return None
    return min(numbers, key=lambda o: abs(o - x))


def snap_to_grid(controls: list[Control]) -> None:
    """Before values(): a link or a session value between the grid's points (a link written when the
    slider moved in finer steps, or a value of the grid of another example) goes to the nearest point,
    not back to the default."""
    state = st.session_state
    for c in controls:
        held = state.get(c.key, st.query_params.get(c.key))
        if held is None or held in c.options or any(str(o) == str(held) for o in c.options):
            continue
        near = nearest(c, held)
        if near is not None:
            state[c.key] = near


def values(explorer_id: str, controls: list[Control]) -> tuple:
    """Python's copy of the controls' values (seeded from the link, kept valid); a change the browser did
    not report gives the explorer a new seq (view.py's handshake), so the browser follows it."""
    for c in controls:
        seed_from_url(c.key, list(c.options), c.default)
    chosen = tuple(st.session_state[c.key] for c in controls)
    view.seq(f"explorer_{explorer_id}", tuple(c.options.index(v) for c, v in zip(controls, chosen)),
             tuple(c.key for c in controls))
    return chosen


def heard(sent: dict) -> None:
    """The relay's message {id, values: {key: str(value)}}: Python's copy follows the browser (no new seq:
    the browser already shows it). Only keys and values the explorer offered are taken."""
    try:
        explorer_id, moved = str(sent["id"]), dict(sent["values"])
    except (KeyError, TypeError, ValueError):
        return
    domains = st.session_state.get(DOMAINS, {}).get(explorer_id, {})
    for key, text in moved.items():
        match = [o for o in domains.get(key, ()) if str(o) == str(text)]
        if match:
            st.session_state[key] = match[0]
    keys = list(domains)
    if keys and all(k in st.session_state and st.session_state[k] in domains[k] for k in keys):
        view.heard(f"explorer_{explorer_id}", tuple(list(domains[k]).index(st.session_state[k]) for k in keys))


view.KINDS["values"] = heard


FRAME_MARK = "\u0000frame\u0000"


def download_parts(title: str) -> list[str]:
    """[before, after] the figure's HTML in its standalone file (figures.standalone_html, with the explorer's
    CSS and the boxes it is scoped to): the browser saves the frame on screen, whatever Python last heard."""
    page = standalone_html(f'<div class="gdn-explorer"><div class="gdn-explorer-figure gdn-figure">{FRAME_MARK}</div></div>',
                           title, EXPLORER_CSS)
    return page.split(FRAME_MARK)


def explorer(explorer_id: str, controls: list[Control], packed: Packed, *, alt: str = "",
             controls_below: bool = False, side: bool = False, download: str = ""):
    """Mount the explorer at Python's values (see values()). side: the sliders in a narrow column left of
    the figure (the playground's layout). download: a title, for a button under the sliders that saves the
    frame on screen as a standalone HTML file (not in lecture mode, as figures.html_download). Returns the
    data-open value of a clicked element, else None."""
    values(explorer_id, controls)
    state = st.session_state
    index = [c.options.index(state[c.key]) for c in controls]
    state.setdefault(DOMAINS, {})[explorer_id] = {c.key: list(c.options) for c in controls}
    for c in controls:
        sync_to_url(c.key, c.default)
    data = {
        "id": explorer_id, "seq": view.seq(f"explorer_{explorer_id}", tuple(index), tuple(c.key for c in controls)), "index": index,
        "controls": [{"key": c.key, "label": c.label, "values": [str(o) for o in c.options], "labels": list(c.labels),
                      "default": str(c.default), "play": c.play} for c in controls],
        "labels": {"play": ui.tr("common.play"), "pause": ui.tr("common.pause")},
        "alt": alt, "below": controls_below, "side": side, "lecture": ui.lecture(), "playMs": PLAY_MS,
        **payload.ship(packed.hash, packed.gz),          # the gz only if this tab was never sent it
        "download": {"label": ui.tr("common.download_html"), "file": f"{explorer_id}.html",
                     "parts": download_parts(download)} if download and not ui.lecture() else None,
    }
    result = _component(key=f"{explorer_id}_explorer", data=data, width="stretch", height="content",
                        on_open_change=lambda: None)
    payload.sent(packed.hash)
    return getattr(result, "open", None)
