"""Playground toys answered in the browser: the explorer (app_pages/_support/explorer.py) gets the toy
drawn at every value of its sliders, so a move paints in the next frame and reruns nothing. The numbers at
each grid point come from gdn.lessons.playground, as the server-side panels' do."""
from __future__ import annotations

import numpy as np
import streamlit as st

from gdn.figures.playground_html import half_life_html, repeated_html
from gdn.lessons import playground as ex
from gdn.lessons.compare import RULES
from gdn.units import half_life
from app_pages._support import ui
from app_pages._support.caches import BOUNDS
from app_pages._support.explorer import Control, Packed, explorer, pack_grid

ALPHAS = tuple(round(0.01 * i, 2) for i in range(101))        # the half-life toy's α: 0, 0.01, ..., 1
REFERENCES = (0.5, 0.9, 0.97, 0.99)
# The repeated-writes toy's grid: 11 x 7 x 11 = 847 frames (the slow α values are the interesting ones).
RW_BETAS = tuple(round(0.1 * i, 1) for i in range(11))
RW_ALPHAS = (0.0, 0.5, 0.8, 0.9, 0.95, 0.99, 1.0)
RW_WRITES = (1, 2, 3, 4, 5, 6, 8, 10, 12, 16, 20)


def half_life_text(half: float) -> str:
    return (ui.tr("playground.hl_never") if np.isinf(half) else ui.tr("playground.hl_at_once") if half == 0
            else ui.tr("playground.hl_tokens", n=f"{half:.1f}"))


def half_life_frame(alpha: float) -> str:
    """The half-life toy at one α: the half-life, α^10 and α^50, and the decay curves."""
    half = half_life(alpha)
    refs = [a for a in REFERENCES if not np.isclose(a, alpha)]
    curves = ex.decay_curves([*refs, alpha], 100)
    metrics = [("half", ui.tr("playground.hl_half"), half_life_text(half))]
    metrics += [(f"after{n}", ui.tr("playground.hl_after", n=n), f"{curves[-1, n]:.3g}") for n in (10, 50)]
    labels = {"n": ui.tr("playground.hl_n"), "kept": ui.tr("playground.hl_kept"), "half_at": ui.tr("playground.hl_half_at")}
    return half_life_html(curves, refs, alpha, half, labels=labels, metrics=metrics, alt=ui.tr("playground.hl_alt"))


def half_life_controls() -> list[Control]:
    return [Control("playground_halflife_alpha", ui.tr("playground.hl_alpha"), ALPHAS, tuple(f"{a:.2f}" for a in ALPHAS),
                    0.97)]


@st.cache_resource(max_entries=BOUNDS["explorer.playground"], show_spinner=False)
def _half_life_packed(language: str, lecture: bool) -> Packed:
    return pack_grid(half_life_controls(), half_life_frame)


@st.fragment
def halflife_panel():
    explorer("playground_halflife", half_life_controls(), _half_life_packed(ui.lang(), ui.lecture()), side=True)
    ui.note(ui.tr("playground.hl_story"))


def repeated_frame(beta: float, alpha: float, T: int) -> str:
    """The repeated-writes toy at one grid point: each rule's distance to v after every write."""
    dist = ex.repeated_writes(T, beta=beta, alpha=alpha)
    names = {r: ui.tr(f"playground.rule_{r}") for r in RULES}
    metrics = [(r, ui.tr("playground.rw_metric", rule=names[r], T=T), f"{dist[r][-1]:.1%}") for r in RULES]
    return repeated_html(dist, rule_titles=names, labels={"x": ui.tr("playground.rw_x"), "y": ui.tr("playground.rw_y")},
                         metrics=metrics, alt=ui.tr("playground.rw_alt"))


def repeat_controls() -> list[Control]:
    fmt = lambda xs, f: tuple(f.format(x) for x in xs)
    return [Control("playground_repeat_beta", ui.tr("playground.beta"), RW_BETAS, fmt(RW_BETAS, "{:.1f}"), 0.5),
            Control("playground_repeat_alpha", ui.tr("playground.alpha"), RW_ALPHAS, fmt(RW_ALPHAS, "{:g}"), 1.0),
            Control("playground_repeat_writes", ui.tr("playground.writes"), RW_WRITES, fmt(RW_WRITES, "{}"), 8, play=True)]


@st.cache_resource(max_entries=BOUNDS["explorer.playground"], show_spinner=False)
def _repeat_packed(language: str, lecture: bool) -> Packed:
    return pack_grid(repeat_controls(), repeated_frame)


@st.fragment
def repeat_panel():
    explorer("playground_repeat", repeat_controls(), _repeat_packed(ui.lang(), ui.lecture()), side=True)
    ui.note(ui.tr("playground.rw_story"))
