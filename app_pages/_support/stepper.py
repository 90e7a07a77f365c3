"""A token x stage stepper shared by the pages that animate an update (memory table, compare).

State lives in st.session_state under "<prefix>_t" (the token, counted from 1 like every label in the
app), "<prefix>_stage" (both mirrored into the URL) and "<prefix>_playing". No widget owns these keys:
the token slider and the stage picker are drawn under a key that changes whenever the position moves
by other means, because a browser that is a step behind would otherwise send its stale widget value
back and undo a fast key press. The controls and the panels are drawn inside a fragment, so stepping
and playing redraw only the stepper, never the page.
Keys (and a presenter's clicker): → / PageDown step forward, ← / PageUp back, Space plays or pauses,
Home goes back to the first step. Every press counts, however fast: see keys.py.
"""
from __future__ import annotations

import time
from typing import Callable

import streamlit as st

from app_pages._support import ui
from app_pages._support.keys import key_presses

PLAY_SECONDS = 1.2      # one stage per tick: slow enough to read the numbers aloud


def _position(prefix: str, stages: tuple[str, ...]) -> int:
    """The step index, 0-based: (token - 1) * stages + stage."""
    return (st.session_state[f"{prefix}_t"] - 1) * len(stages) + stages.index(st.session_state[f"{prefix}_stage"])


def _go(prefix: str, stages: tuple[str, ...], n_tokens: int, to: int) -> None:
    to = max(0, min(to, n_tokens * len(stages) - 1))
    token0, stage = divmod(to, len(stages))
    st.session_state[f"{prefix}_t"], st.session_state[f"{prefix}_stage"] = token0 + 1, stages[stage]
    st.session_state[f"{prefix}_widgets"] = st.session_state.get(f"{prefix}_widgets", 0) + 1   # redraw them


def _from_widget(prefix: str, name: str, widget_key: str) -> None:
    """A learner moved the slider or picked a stage: that widget already shows the new value."""
    current = widget_key.endswith(f"_w{st.session_state.get(f'{prefix}_widgets', 0)}")
    if current and st.session_state.get(widget_key) is not None:    # an older copy speaks for a past position
        st.session_state[f"{prefix}_{name}"] = st.session_state[widget_key]


def _clamp(prefix: str, stages: tuple[str, ...], n_tokens: int) -> None:
    """Keep the stored step valid when the stream got shorter or the URL held nonsense."""
    t = st.session_state.get(f"{prefix}_t", st.query_params.get(f"{prefix}_t", 1))
    try:
        st.session_state[f"{prefix}_t"] = max(1, min(int(t), n_tokens))
    except (TypeError, ValueError):
        st.session_state[f"{prefix}_t"] = 1
    ui.seed_from_url(f"{prefix}_stage", stages, stages[0])      # drawn later, inside the fragment
    st.session_state.setdefault(f"{prefix}_playing", False)


def _apply_keys(prefix: str, stages: tuple[str, ...], n_tokens: int, presses: list[str]) -> None:
    """Replay the presses in the order they were made (several can arrive in one run)."""
    for press in presses:
        if press == "home":
            _go(prefix, stages, n_tokens, 0)
        elif press in ("right", "left"):
            _go(prefix, stages, n_tokens, _position(prefix, stages) + (1 if press == "right" else -1))
        elif press == "space":
            st.session_state[f"{prefix}_toggle_play"] = True


def stepper(prefix: str, n_tokens: int, stages: tuple[str, ...], draw: Callable[[int, str], None]) -> None:
    """Sticky controls (buttons, stage picker), draw(t, stage) for the current step with t the 0-based
    token index (labels show t + 1), then the token slider."""
    _clamp(prefix, stages, n_tokens)
    playing = st.session_state[f"{prefix}_playing"]
    last = n_tokens * len(stages) - 1

    def toggle_play() -> None:
        if not st.session_state[f"{prefix}_playing"] and _position(prefix, stages) >= last:
            _go(prefix, stages, n_tokens, 0)            # play from the start after reaching the end
        st.session_state[f"{prefix}_playing"] = not st.session_state[f"{prefix}_playing"]
        st.rerun(scope="app")                           # run_every changes only with a full rerun

    @st.fragment(run_every=PLAY_SECONDS if playing else None)
    def body():
        if st.session_state.pop(f"{prefix}_toggle_play", False):
            toggle_play()
        pos = _position(prefix, stages)
        if st.session_state[f"{prefix}_playing"] and time.monotonic() - st.session_state.get(f"{prefix}_tick", 0) > 0.8 * PLAY_SECONDS:
            st.session_state[f"{prefix}_tick"] = time.monotonic()
            if pos >= last:
                st.session_state[f"{prefix}_playing"] = False
                st.rerun(scope="app")
            _go(prefix, stages, n_tokens, pos + 1)
        go = lambda to: _go(prefix, stages, n_tokens, to)
        # Lecture mode: icon-only buttons so the stage picker fits on the same row (the keys do the work).
        label = (lambda key: "") if ui.lecture() else ui.tr
        controls = st.container(key=f"{prefix}_stepbar")         # sticky: assets/app.css
        bar = controls.container(horizontal=True, vertical_alignment="center")
        bar.button(label("common.reset"), key=f"{prefix}_reset", icon=":material/first_page:",
                   on_click=go, args=(0,), help=ui.tr("common.key_home"))
        bar.button(label("common.prev"), key=f"{prefix}_prev", icon=":material/chevron_left:",
                   on_click=lambda: go(_position(prefix, stages) - 1), help=ui.tr("common.key_left"))
        bar.button(label("common.next"), key=f"{prefix}_next", icon=":material/chevron_right:",
                   on_click=lambda: go(_position(prefix, stages) + 1), help=ui.tr("common.key_right"))
        play, icon = (("common.pause", ":material/pause:") if st.session_state[f"{prefix}_playing"]
                      else ("common.play", ":material/play_arrow:"))
        if bar.button(label(play), key=f"{prefix}_play", icon=icon, type="primary", help=ui.tr("common.key_space")):
            toggle_play()
        version = st.session_state.get(f"{prefix}_widgets", 0)
        stage_key, token_key = f"{prefix}_stage_w{version}", f"{prefix}_t_w{version}"
        bar.segmented_control(ui.tr("common.stage"), stages, default=st.session_state[f"{prefix}_stage"],
                              key=stage_key, required=True, format_func=ui.label_maker("common.stage_"),
                              label_visibility="collapsed", on_change=_from_widget, args=(prefix, "stage", stage_key))
        bar.caption(ui.tr("common.step_of", step=_position(prefix, stages) + 1, total=last + 1))
        with bar:
            key_presses(f"{prefix}_keys", lambda presses: _apply_keys(prefix, stages, n_tokens, presses))
        ui.sync_to_url(f"{prefix}_t", 1)
        ui.sync_to_url(f"{prefix}_stage", stages[0])
        draw(st.session_state[f"{prefix}_t"] - 1, st.session_state[f"{prefix}_stage"])
        if n_tokens > 1:        # a scrubber under the panels, like a video's: the first screen is for the figure
            st.slider(ui.tr("common.token_t"), 1, n_tokens, value=st.session_state[f"{prefix}_t"], key=token_key,
                      on_change=_from_widget, args=(prefix, "t", token_key))

    body()
