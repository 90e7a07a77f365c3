"""Playground toys answered in the browser: the explorer (app_pages/_support/explorer.py) gets the toy
drawn at every value of its sliders, so a move paints in the next frame and reruns nothing. The numbers at
each grid point come from gdn.lessons.playground. A control that changes the example itself (the overwrite
toy's key geometry, pairs and dimensions; the key-norm toy's β range) stays server-side and picks the grid."""
from __future__ import annotations

import numpy as np
import streamlit as st

from gdn.figures.playground_html import half_life_html, key_norm_html, overwrite_html, repeated_html
from gdn.lessons import playground as ex
from gdn.units import half_life
from app_pages._support import ui
from app_pages._support.caches import BOUNDS
from app_pages._support.explorer import Control, explorer, pack_grid, snap_to_grid
from app_pages._support.pack import Packed

ALPHAS = tuple(round(0.01 * i, 2) for i in range(101))        # the half-life toy's α: 0, 0.01, ..., 1
REFERENCES = (0.5, 0.9, 0.97, 0.99)
# The repeated-writes toy's grid: 11 x 7 x 11 = 847 frames (the slow α values are the interesting ones).
RW_BETAS = tuple(round(0.1 * i, 1) for i in range(11))
RW_ALPHAS = (0.0, 0.5, 0.8, 0.9, 0.95, 0.99, 1.0)
RW_WRITES = (1, 2, 3, 4, 5, 6, 8, 10, 12, 16, 20)
# The key-norm toy's grid: 13 x 11 x 4 = 572 frames (13 x 20 x 4 with β up to 1.9, the opt-in).
KN_NORMS = (0.1, 0.25, 0.5, 0.75, 0.9, 1.0, 1.1, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0)
KN_BETAS = tuple(round(0.1 * i, 1) for i in range(11))
KN_BETAS_NEGATIVE = tuple(round(0.1 * i, 1) for i in range(20))
KN_WRITES = (5, 10, 20, 30)
C_GRID = np.linspace(0.0, 3.0, 61)
# The overwrite toy's grids, one per example shape (geometry, n, d_k, d_v: server-side widgets), each under
# 300 KB packed and drawn in about 2 s (over half of it the lesson's own calls): 9 x 11 x 10 = 990 frames
# (the slow alphas are the interesting ones); with the angle between k1 and k2 a fourth control, coarser:
# 9 x 4 x 6 x 5 = 1080.
OW_ALPHAS = (0.0, 0.2, 0.4, 0.6, 0.8, 0.9, 0.95, 0.99, 1.0)
OW_BETAS = tuple(round(0.1 * i, 1) for i in range(11))
OW_NORMS = (0.25, 0.5, 0.75, 0.9, 1.0, 1.1, 1.25, 1.5, 2.0, 3.0)
OW_ANGLES = (0, 15, 30, 45, 60, 75, 90, 120, 180)
OW_ANGLE_ALPHAS, OW_ANGLE_BETAS = (0.0, 0.5, 0.9, 1.0), (0.0, 0.2, 0.4, 0.6, 0.8, 1.0)
OW_ANGLE_NORMS = (0.5, 0.75, 1.0, 1.5, 2.0)
OW_DIMS = dict(pairs=(1, 8, 3), dk=(2, 8, 3), dv=(1, 8, 3))     # lo, hi, default of the shape's sliders


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
    ui.story("playground.hl_story")


def repeated_frame(beta: float, alpha: float, T: int) -> str:
    """The repeated-writes toy at one grid point: each rule's distance to v after every write."""
    dist = ex.repeated_writes(T, beta=beta, alpha=alpha)
    names = {r: ui.tr(f"playground.rule_{r}") for r in ex.RULES}
    metrics = [(r, ui.tr("playground.rw_metric", rule=names[r], T=T), f"{dist[r][-1]:.1%}") for r in ex.RULES]
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
    ui.story("playground.rw_story")


def key_norm_frame(knorm: float, beta: float, T: int, negative: bool) -> str:
    """The key-norm toy at one grid point: the factor 1 - beta c^2 and the distance over T writes."""
    errors, clipped = ex.clip_for_display(ex.repeated_writes(T, beta=beta, knorm=knorm)["deltanet"])
    names = ("factor_title", "error_title", "factor", "knorm", "distance", "shrink", "overshoot", "diverge", "clipped")
    labels = {n: ui.tr(f"playground.kn_{n}") for n in names} | {"writes": ui.tr("playground.rw_x")}
    x = beta * knorm ** 2
    state = ex.norm_regime(beta, knorm)
    metrics = [("new_term", ui.tr("playground.kn_new_term"), f"× {knorm:.2f}"),
               ("correction", ui.tr("playground.kn_correction"), f"× {knorm ** 2:.2f}"),
               ("factor", ui.tr("playground.kn_factor_metric"), f"{1 - x:.2f}")]
    notes = [ui.tr(f"playground.kn_state_{state}", x=f"{x:.2f}")]
    if negative:
        notes.append(ui.tr("playground.kn_negative_note", beta=f"{beta:.2f}", eig=f"{1 - beta:.2f}"))
    return key_norm_html(C_GRID, ex.along_k_factor(C_GRID, beta), knorm, errors, clipped=clipped, state=state,
                         labels=labels, metrics=metrics, notes=notes, alt=ui.tr("playground.kn_alt"))


def key_norm_controls(negative: bool) -> list[Control]:
    betas = KN_BETAS_NEGATIVE if negative else KN_BETAS
    return [Control("playground_knorm_knorm", ui.tr("playground.knorm"), KN_NORMS, tuple(f"{c:g}" for c in KN_NORMS), 1.0),
            Control("playground_knorm_beta", ui.tr("playground.beta"), betas, tuple(f"{b:.1f}" for b in betas), 1.0),
            Control("playground_knorm_writes", ui.tr("playground.writes"), KN_WRITES, tuple(map(str, KN_WRITES)), 10)]


@st.cache_resource(max_entries=BOUNDS["explorer.playground"], show_spinner=False)
def _key_norm_packed(language: str, lecture: bool, negative: bool) -> Packed:
    return pack_grid(key_norm_controls(negative), lambda c, b, T: key_norm_frame(c, b, T, negative))


@st.fragment
def knorm_panel():
    # beta in [0, 2): the "negative eigenvalue" opt-in, a new grid (a rerun). Off, beta stays in Qwen3.5's [0, 1].
    negative = st.toggle(ui.tr("playground.kn_negative"), key=ui.bound("playground_knorm_negative"),
                         bind="query-params", help=ui.tr("playground.kn_negative_help"))
    explorer("playground_knorm", key_norm_controls(negative), _key_norm_packed(ui.lang(), ui.lecture(), negative),
             side=True)
    ui.note(ui.tr("playground.kn_story"))


def overwrite_words() -> dict:
    """The overwrite toy's translated words, looked up once per grid (a frame is drawn ~1000 times)."""
    rule = {r: ui.tr(f"playground.rule_tick_{r}") for r in ex.RULES}     # short, as the staircase's rows: one line of four
    parts = ("old", "interference", "missed", "total", "bars_title", "rows_title", "bars_axis")
    return {"metric": {r: ui.tr("playground.ow_metric", rule=rule[r]) for r in ex.RULES},
            "disturbed": ui.tr("playground.ow_disturbed"),
            "labels": {p: ui.tr(f"playground.ow_{p}") for p in parts} | {"value_axis": ui.tr("common.value_dim")},
            "ticks": list(rule.values()),
            "rows": [ui.tr(f"playground.ow_row_{r}") for r in ("old", "target", *ex.RULES)],
            "cos": ui.tr("playground.ow_cos", cos="{cos}"), "no_orth": ui.tr("playground.ow_no_orth", K="{K}"),
            "alt": ui.tr("playground.ow_alt")}


def overwrite_frame(shape: tuple[str, int, int, int], words: dict, alpha: float, beta: float, knorm: float,
                    angle: float = 90) -> str:
    """Overwrite vs blur at one grid point: each rule's error split into its three parts, the readouts,
    the largest |cos| between k1 and another key. words: overwrite_words()."""
    geometry, n, K, V = shape
    ow = ex.overwrite(n, K, V, geometry=geometry, angle_deg=float(angle), alpha=alpha, beta=beta, knorm=knorm)
    metrics = [(r, words["metric"][r], f"{e:.0%}") for r, e in zip(ex.RULES, ow.error)]
    metrics.append(("disturbed", words["disturbed"], f"{ow.disturbed[-1]:.0%}"))
    others = np.abs(ow.cosine[0, 1:])
    notes = [words["cos"].format(cos=f"{others.max():.2f}")] if others.size else []
    if geometry != "random" and n > K:
        notes.append(words["no_orth"].format(K=K))
    return overwrite_html(ow.readout, ow.target, ow.old, ow.along, ow.error, rule_titles=words["ticks"],
                          row_labels=words["rows"], labels=words["labels"], metrics=metrics, notes=notes,
                          alt=words["alt"])


def overwrite_controls(geometry: str) -> list[Control]:
    angle = geometry == "angle"
    grids = (OW_ANGLE_ALPHAS, OW_ANGLE_BETAS, OW_ANGLE_NORMS) if angle else (OW_ALPHAS, OW_BETAS, OW_NORMS)
    controls = [Control(f"playground_overwrite_{name}", ui.tr(f"playground.{name}"), grid, tuple(f"{x:.2f}" for x in grid), 1.0)
                for name, grid in zip(("alpha", "beta", "knorm"), grids)]
    if angle:
        controls.append(Control("playground_overwrite_angle", ui.tr("playground.angle"), OW_ANGLES,
                                tuple(f"{a}°" for a in OW_ANGLES), 60))
    return controls


@st.cache_resource(max_entries=BOUNDS["explorer.overwrite"], show_spinner=False)
def _overwrite_packed(language: str, shape: tuple[str, int, int, int]) -> Packed:
    words = overwrite_words()
    return pack_grid(overwrite_controls(shape[0]), lambda *values: overwrite_frame(shape, words, *values))


@st.fragment
def overwrite_panel():
    # the example's shape is server-side: each picks the grid the sliders move through (built on first use).
    # Over the toy; in lecture mode under it, so the toy and its sliders fill a 1280x720 projector's first screen
    above, toy, below = st.container(), st.container(), st.container()
    geometry_box, *dims = (below if ui.lecture() else above).columns([1.4, 1, 1, 1], gap="medium")
    geometry = ui.linked(geometry_box.selectbox, ui.tr("playground.geometry"), ex.GEOMETRIES, key="playground_geometry",
                         default="orthogonal", format_func=ui.label_maker("playground.geometry_"))
    n, K, V = (where.slider(ui.tr(f"playground.{name}"), lo, hi, default, key=ui.bound(f"playground_overwrite_{name}"),
                            bind="query-params") for where, (name, (lo, hi, default)) in zip(dims, OW_DIMS.items()))
    controls = overwrite_controls(geometry)
    snap_to_grid(controls)
    shape = (geometry, n, K, V)
    with toy:
        explorer("playground_overwrite", controls, _overwrite_packed(ui.lang(), shape), side=True,
                 download=ui.tr("playground.ow_alt"))
    ui.note(ui.tr("playground.ow_story"))
