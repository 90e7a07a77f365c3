"""Lecture mode's scale: a screen larger than 1280x720 shows what 1280x720 shows, proportionally larger.

The CSS scales itself (assets/lecture.css: every length in --gdn-px, one pixel of a 1280x720 screen). A Plotly
chart states its fonts, height and margins in pixels, so Python draws it at the screen's scale
(figures.show_figure, gdn.figures.scale): the tab reports the scale (assets/common/screen.js) when it differs
from the one Python drew at and after a resize, and keeps it in a cookie, read by a session's first run.
The scale is in eighths from 1 to 3 (1920x1080: 1.5, 2560x1440: 2): few distinct figures to cache.
"""
from __future__ import annotations

import math

import streamlit as st

from app_pages._support.chrome import ASSETS, lecture

COOKIE = "gdn_scale"                    # assets/common/screen.js writes it
KEY = "_lecture_scale"                  # session key: the scale this session draws at
STEPS, MAX = 8, 3.0

_screen = st.components.v2.component("gdn_screen", js=(ASSETS / "common" / "screen.js").read_text(encoding="utf-8"))


def valid(value) -> float:
    """A reported scale made safe: a number in eighths from 1 to MAX (rounded down); anything else is 1. The
    tab's cookie can be anything."""
    try:
        s = float(value)
    except (TypeError, ValueError):
        return 1.0
    if not math.isfinite(s):
        return 1.0
    return min(MAX, max(1.0, math.floor(s * STEPS) / STEPS))


def scale() -> float:
    """How many times larger than at 1280x720 this session draws a chart's pixels: 1 outside lecture mode."""
    if not lecture():
        return 1.0
    if KEY not in st.session_state:
        st.session_state[KEY] = valid(st.context.cookies.get(COOKIE))
    return st.session_state[KEY]


def _heard() -> None:
    st.session_state[KEY] = valid(getattr(st.session_state.get("_screen"), "scale", None))


def follow() -> None:
    """In lecture mode, the tab's scale reporter (mount once per run, before the page draws)."""
    if lecture():
        _screen(key="_screen", data={"drawn": scale()}, on_scale_change=_heard, height=0)
