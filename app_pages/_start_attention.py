"""The start page's first figure in the explorer (app_pages/_support/explorer.py): attention -> the sum
over tokens -> one table, drawn for every T of the slider at once, so moving T (or playing it) and the
linked hovers of a token k_j are answered in the browser. The example (a random seed) is the second
slider: 12 T x 20 examples = 240 frames, built once per server and language in about a quarter of a second,
about 0.1 MB packed."""
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
SEEDS = tuple(range(20))                              # the example slider's values (random seeds)
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
    # float64 rounding is ~1e-16: "< 1e-15" says "equal", never 0.0e+00 (exact) or 4.4e-16 (noise) as news
    labels = labels | {"diff": ui.tr("start.att_diff", x="< 1e-15" if diff < 1e-15 else f"{diff:.1e}"),
                       "kept": re.sub(r"\*\*(.+?)\*\*", r"<b>\1</b>", html.escape(kept_text))}
    return attention_html(r.weights, r.scores, r.terms, r.o_sum, r.o_table, r.S, r.outer, labels=labels, lecture=lecture,
                          alt=ui.tr("start.att_alt", T=T))


def controls() -> list[Control]:
    return [Control("start_T", ui.tr("start.T"), TS, tuple(map(str, TS)), 6, play=True),
            Control("start_seed", ui.tr("start.seed"), SEEDS, tuple(map(str, SEEDS)), 0)]


@st.cache_resource(max_entries=BOUNDS["explorer.start"], show_spinner=False)
def _packed(language: str, lecture: bool) -> Packed:
    labels = figure_labels()
    return pack_grid(controls(), lambda T, seed: frame(T, seed, labels, lecture))


def render() -> tuple[int, int]:
    """Mount the figure with its sliders (T with ▶, the example); returns Python's copy of (T, seed)."""
    chosen = controls()
    T, seed = values(EXPLORER, chosen)
    explorer(EXPLORER, chosen, _packed(ui.lang(), ui.lecture()))
    return T, seed
