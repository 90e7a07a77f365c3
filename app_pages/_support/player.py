"""The frame player: a page's token x stage figure, stepped in the browser.

Python computes every frame (the HTML the figure code already draws, one line of narration with its
numbers) and sends them all at once, gzip-packed; assets/player/player.js only shows what it was sent.
So a key press, the play button, the stage picker and the scrubber answer in one animation frame and send
nothing to the server, and the keys (← → PageUp PageDown Space Home End) work whatever was clicked last.

Where the position lives:
- the address bar: the browser writes "<prefix>_t" (tokens count from 1) and "<prefix>_stage" at every
  step, so a reload or a copied link reopens the view;
- st.session_state["<prefix>_t" / "<prefix>_stage"]: Python's copy, sent by the browser only when a click
  (or Enter) outside the player may need it, in the same run as that click: the share dialog, an export.
  Stepping itself sends nothing;
- moving it from Python (a classroom demo sets the keys, then switches page) gives the player a new seq
  (view.py's handshake), the only case in which the browser gives up its own position for Python's.
The address, the handshake, the relay and the payload sent once are the views' protocol (view.py).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

import streamlit as st

from app_pages._support import payload, ui, view
from app_pages._support.pack import Packed, component_js, pack_json

PLAYER_JS = component_js("player/player.js", css="player/player.css", css_name="PLAYER_CSS")
_component = st.components.v2.component("gdn_player", js=PLAYER_JS, isolate_styles=False)
PLAY_MS = 1200          # one stage per tick when playing: slow enough to read the numbers aloud
PLAYER_PARAMS: set[str] = set()     # the query names that hold a player's position ("memory_t", ...)
# The pages' players, by prefix: a relayed position naming anything else is dropped (it would write another
# page's keys, e.g. "start" -> start_t). player() refuses a prefix not listed, so the two cannot drift.
PLAYERS = ("memory", "compare")


@dataclass(frozen=True)
class Frame:
    """One step as the player shows it. head, narration, html: trusted HTML made by the figure code
    (text from outside already escaped); fly: the write's animation, {"from": [[panel, row], ...], "to":
    panel}, the cells that fly into the target panel when this frame is reached by a forward step."""
    head: str
    narration: str
    html: str
    fly: dict | None = None


def pack(frames: list[Frame], *, fixed: str = "", sides: dict[str, str] | None = None) -> Packed:
    """fixed: HTML drawn once under the frames (its [data-token] elements are framed for the current
    token); sides: stage -> HTML beside the figure. Gzip: a random 16-token, 8 x 8 stream is 3 MB of
    table HTML and 0.17 MB packed (the cells repeat)."""
    return pack_json({"frames": [{k: v for k, v in asdict(f).items() if v is not None} for f in frames],
                      "fixed": fixed, "sides": sides or {}}, n_frames=len(frames))


def position(prefix: str, n_tokens: int, stages: tuple[str, ...],
             opening: tuple[int, str] | None = None) -> tuple[int, str]:
    """(token counted from 1, stage): Python's copy, else the link's, clamped to this stream; a link that
    names neither opens at `opening` (the page's first frame where something happens), one that names
    only one of them means token 1 / the first stage as before. A change from what the player last sent
    or was sent is a move made by Python: the browser must follow it."""
    state, url = st.session_state, st.query_params
    if f"{prefix}_t" not in state and f"{prefix}_t" not in url and f"{prefix}_stage" not in url:
        t, stage = opening or (1, stages[0])
    else:
        t, stage = state.get(f"{prefix}_t", url.get(f"{prefix}_t", 1)), state.get(f"{prefix}_stage", url.get(f"{prefix}_stage"))
    try:
        t = max(1, min(int(t), n_tokens))
    except (TypeError, ValueError):
        t = 1
    stage = stage if stage in stages else stages[0]
    state[f"{prefix}_t"], state[f"{prefix}_stage"] = t, stage
    return t, stage


def address(t: int, stage: str, opening: tuple[int, str], stages: tuple[str, ...]) -> dict[str, str]:
    """The position's query parameters, as short as position() reads them back: none at the opening,
    else the token always and the stage unless it is the first (player.js writes the same)."""
    if (t, stage) == tuple(opening):
        return {}
    return {"t": str(t), **({"stage": stage} if stage != stages[0] else {})}


def heard(sent: dict) -> None:
    """A player's relayed message {id: prefix, t, stage, variant?}: Python's copy follows it (no new seq:
    the browser already shows it)."""
    try:
        prefix, t, stage = str(sent["id"]), int(sent["t"]), str(sent["stage"])
    except (KeyError, TypeError, ValueError):
        return
    if t >= 1 and stage.isidentifier() and prefix in PLAYERS:
        st.session_state[f"{prefix}_t"], st.session_state[f"{prefix}_stage"] = t, stage
        view.heard(f"player_{prefix}", (t, stage))
        if str(sent.get("variant", "")).isidentifier():      # the page checks it names one of its variants
            st.session_state[f"{prefix}_variant"] = str(sent["variant"])


view.KINDS["position"] = heard


@dataclass(frozen=True)
class Variant:
    """One of several versions a player switches between (compare: the rules, a gate per channel ...).
    packed None: a variant the server draws around the player (switching to or from it runs the page).
    story: trusted HTML shown under the frames of this variant."""
    name: str
    label: str
    packed: Packed | None
    n_tokens: int = 0
    story: str = ""


def player(prefix: str, packed: Packed, n_tokens: int, stages: tuple[str, ...],
           variants: list[Variant] | None = None, variant: str | None = None,
           opening: tuple[int, str] | None = None) -> None:
    """Mount the player for `packed` (n_tokens x len(stages) frames, token-major) at Python's position.
    variants: every version the browser may switch to (variant: the one drawn; its packed is `packed`),
    the URL naming the chosen one as ?<prefix>_variant= (the page reads it with `chosen_variant`).
    opening: (token from 1, stage) where a fresh visit opens (gdn.lessons.stream.opening_step); default
    the first frame."""
    if prefix not in PLAYERS:
        raise ValueError(f"player {prefix!r}: add it to player.PLAYERS (its relayed positions are dropped otherwise)")
    opening = (min(opening[0], n_tokens), opening[1]) if opening else (1, stages[0])
    t, stage = position(prefix, n_tokens, stages, opening)
    _mount(prefix, packed, n_tokens, stages, (t - 1) * len(stages) + stages.index(stage), variants, variant, opening)


def chosen_variant(prefix: str, names: tuple[str, ...]) -> str:
    """The variant to draw: Python's copy (the browser's last switch, relayed), else the link's, else the
    first; kept in the session and the URL like the position."""
    key = f"{prefix}_variant"
    value = st.session_state.get(key, st.query_params.get(key))
    st.session_state[key] = value if value in names else names[0]
    ui.sync_to_url(key, names[0])
    return st.session_state[key]


def _variants_data(variants: list[Variant], drawn: str) -> list[dict]:
    """What the browser needs of each variant; the drawn one's frames are the payload's own."""
    out = []
    for v in variants:
        entry = {"name": v.name, "label": v.label, "story": v.story}
        if v.packed is None:
            entry["server"] = True
        elif v.name != drawn:
            entry.update(tokens=v.n_tokens, **payload.ship(v.packed.hash, v.packed.gz))
        out.append(entry)
    return out


def _mount(prefix: str, packed: Packed, n_tokens: int, stages: tuple[str, ...], index: int,
           variants: list[Variant] | None = None, variant: str | None = None,
           opening: tuple[int, str] = (1, "")) -> None:
    PLAYER_PARAMS.update((f"{prefix}_t", f"{prefix}_stage"))
    t, stage = divmod(index, len(stages))
    wanted = address(t + 1, stages[stage], opening, stages)
    for name in ("t", "stage"):                       # the link mirrors the position (registered for share links)
        key = ui.bound(f"{prefix}_{name}")
        if name in wanted:
            ui.put_param(key, wanted[name])
        else:
            st.query_params.pop(key, None)
    stage_label = ui.label_maker("common.stage_")
    data = {
        "id": prefix, "seq": view.seq(f"player_{prefix}", (t + 1, stages[stage]), (f"{prefix}_t", f"{prefix}_stage")),
        "position": index, "tokens": n_tokens,
        "stages": list(stages), "stageLabels": [stage_label(s) for s in stages], "lecture": ui.lecture(),
        "playMs": PLAY_MS, "params": {"t": f"{prefix}_t", "stage": f"{prefix}_stage"},
        "opening": {"t": opening[0], "stage": opening[1]},
        "labels": {"reset": ui.tr("common.reset"), "prev": ui.tr("common.prev"), "next": ui.tr("common.next"),
                   "play": ui.tr("common.play"), "pause": ui.tr("common.pause"), "stage": ui.tr("common.stage"),
                   "token": ui.tr("common.token_t"),
                   "stepOf": ui.tr("common.step_n" if ui.lecture() else "common.step_of", step="{n}", total="{N}"),
                   "stepOfTouch": ui.tr("common.step_of_touch", step="{n}", total="{N}")},
        **payload.ship(packed.hash, packed.gz),          # the gz only if this tab was never sent it
    }
    if variants:
        data.update(variants=_variants_data(variants, variant), variant=variant)
        data["params"]["variant"] = f"{prefix}_variant"
    _component(key=f"{prefix}_player", data=data, width="stretch", height="content")
    payload.sent(packed.hash, *(v.packed.hash for v in variants or () if v.packed is not None))
