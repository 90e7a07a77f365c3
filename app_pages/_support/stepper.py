"""A token x stage stepper shared by the pages that animate an update (memory table, compare).

State lives in st.session_state under "<prefix>_t" (token, also in the URL), "<prefix>_stage"
(stage, also in the URL) and "<prefix>_playing". The panels are drawn inside a fragment, so
stepping and playing redraw only the stepper, never the whole page (no flicker).
Keys: Left / Right step, Space plays or pauses, Home goes back to the first step.
"""
from __future__ import annotations

import time
from typing import Callable

import streamlit as st

from app_pages._support import ui

PLAY_SECONDS = 1.2      # one stage per tick: slow enough to read the numbers aloud


def _position(prefix: str, stages: tuple[str, ...]) -> int:
    return st.session_state[f"{prefix}_t"] * len(stages) + stages.index(st.session_state[f"{prefix}_stage"])


def _go(prefix: str, stages: tuple[str, ...], n_tokens: int, to: int) -> None:
    last = n_tokens * len(stages) - 1
    to = max(0, min(to, last))
    st.session_state[f"{prefix}_t"], stage = divmod(to, len(stages))
    st.session_state[f"{prefix}_stage"] = stages[stage]


def _clamp(prefix: str, stages: tuple[str, ...], n_tokens: int) -> None:
    """Keep the stored step valid when the stream got shorter or the URL held nonsense."""
    url = st.query_params
    t = st.session_state.get(f"{prefix}_t", url.get(f"{prefix}_t", 0))
    try:
        st.session_state[f"{prefix}_t"] = max(0, min(int(t), n_tokens - 1))
    except ValueError:
        st.session_state[f"{prefix}_t"] = 0
    ui.seed_from_url(f"{prefix}_stage", stages, stages[0])      # drawn later, inside the fragment
    st.session_state.setdefault(f"{prefix}_playing", False)


def stepper(prefix: str, n_tokens: int, stages: tuple[str, ...], draw: Callable[[int, str], None]) -> None:
    """Buttons, token slider and stage picker, then draw(t, stage) for the current step."""
    _clamp(prefix, stages, n_tokens)
    playing = st.session_state[f"{prefix}_playing"]

    @st.fragment(run_every=PLAY_SECONDS if playing else None)
    def body():
        pos, last = _position(prefix, stages), n_tokens * len(stages) - 1
        if st.session_state[f"{prefix}_playing"] and time.monotonic() - st.session_state.get(f"{prefix}_tick", 0) > 0.8 * PLAY_SECONDS:
            st.session_state[f"{prefix}_tick"] = time.monotonic()
            if pos >= last:
                st.session_state[f"{prefix}_playing"] = False
                st.rerun(scope="app")
            _go(prefix, stages, n_tokens, pos + 1)
        go = lambda to: _go(prefix, stages, n_tokens, to)
        # Lecture mode: icon-only buttons so the stage picker fits on the same row (the keys do the work).
        label = (lambda key: "") if ui.lecture() else ui.tr
        bar = st.container(horizontal=True, vertical_alignment="center")
        bar.button(label("common.reset"), key=f"{prefix}_reset", shortcut="Home", icon=":material/first_page:",
                   on_click=go, args=(0,), help=ui.tr("common.key_home"))
        bar.button(label("common.prev"), key=f"{prefix}_prev", shortcut="Left", icon=":material/chevron_left:",
                   on_click=lambda: go(_position(prefix, stages) - 1), help=ui.tr("common.key_left"))
        bar.button(label("common.next"), key=f"{prefix}_next", shortcut="Right", icon=":material/chevron_right:",
                   on_click=lambda: go(_position(prefix, stages) + 1), help=ui.tr("common.key_right"))
        play, icon = (("common.pause", ":material/pause:") if st.session_state[f"{prefix}_playing"]
                      else ("common.play", ":material/play_arrow:"))
        if bar.button(label(play), key=f"{prefix}_play", shortcut="Space", icon=icon, type="primary",
                      help=ui.tr("common.key_space")):
            if not st.session_state[f"{prefix}_playing"] and _position(prefix, stages) >= last:
                go(0)                                   # play from the start after reaching the end
            st.session_state[f"{prefix}_playing"] = not st.session_state[f"{prefix}_playing"]
            st.rerun(scope="app")                       # run_every changes only with a full rerun
        bar.segmented_control(ui.tr("common.stage"), stages, key=f"{prefix}_stage", required=True,
                              format_func=ui.label_maker("common.stage_"), label_visibility="collapsed")
        ui.sync_to_url(f"{prefix}_stage", stages[0])
        bar.caption(ui.tr("common.step_of", step=_position(prefix, stages) + 1, total=last + 1))
        if n_tokens > 1:
            st.slider(ui.tr("common.token"), 0, n_tokens - 1, key=f"{prefix}_t", bind="query-params",
                      label_visibility="collapsed" if ui.lecture() else "visible")
        draw(st.session_state[f"{prefix}_t"], st.session_state[f"{prefix}_stage"])

    body()
