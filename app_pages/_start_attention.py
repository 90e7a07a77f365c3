"""The start page's first figure in the explorer (app_pages/_support/explorer.py): attention -> the sum
over tokens -> one table, drawn for every T of the slider at once, so moving T (or playing it) and the
linked hovers of a token k_j are answered in the browser. The example's seed stays a server-side widget:
each seed is a new set of frames, built once per server (12 small tables, a few ms)."""
from __future__ import annotations

import html
import re

import numpy as np
import streamlit as st

from gdn.figures.start_attention import attention_html
from gdn.lessons import start as lesson
from app_pages._support import ui
from app_pages._support.caches import BOUNDS
from app_pages._support.explorer import Control, Packed, explorer, pack_grid, values

KD = VD = 3                                           # the toy example's key and value sizes
TS = tuple(range(1, 13))                              # the T slider's values
EXPLORER = "start_attention"


def figure_labels() -> dict[str, str]:
    names = ("t1", "t2", "t3", "token", "token_axis", "value_axis", "key_axis", "share", "hint")
    return {n: ui.tr(f"start.att_{n}") for n in names}


def frame(T: int, seed: int, labels: dict[str, str], lecture: bool) -> str:
    """The figure at T past tokens: every number from gdn.lessons.start."""
    r = lesson.reads(lesson.example(T=T, K=KD, V=VD, seed=seed))
    diff = float(np.abs(r.o_sum - r.o_table).max())
    kept = lesson.numbers_kept(T, KD, VD)
    kept_text = ui.tr("start.kept", T=T, kv=kept["kv_cache"], table=kept["table"], K=KD, V=VD)
    labels = labels | {"diff": ui.tr("start.att_diff", x=f"{diff:.1e}"),
                       "kept": re.sub(r"\*\*(.+?)\*\*", r"<b>\1</b>", html.escape(kept_text))}
    return attention_html(r.weights, r.scores, r.terms, r.o_sum, r.o_table, r.S, r.outer, labels=labels, lecture=lecture,
                          alt=ui.tr("start.att_alt", T=T))


def t_control() -> Control:
    return Control("start_T", ui.tr("start.T"), TS, tuple(map(str, TS)), 6, play=True)


@st.cache_resource(max_entries=BOUNDS["explorer.start"], show_spinner=False)
def _packed(seed: int, language: str, lecture: bool) -> Packed:
    labels = figure_labels()
    return pack_grid([t_control()], lambda T: frame(T, seed, labels, lecture))


def render(seed: int) -> int:
    """Mount the figure with its T slider (and ▶); returns Python's copy of T."""
    controls = [t_control()]
    (T,) = values(EXPLORER, controls)
    explorer(EXPLORER, controls, _packed(seed, ui.lang(), ui.lecture()))
    return T
