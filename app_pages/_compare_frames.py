"""The compare page's frames: one stream's versions (three rules, or a rule's variants) at every (token,
stage), as the player shows them (app_pages/_support/player.py), with the rules x tokens error grid under them.

Built once per example, language and mode for the whole server.
"""
from __future__ import annotations

import html
import re

import numpy as np
import streamlit as st

from gdn.figures.compare import VECTOR_ROWS, compare_step_html, error_grid_html
from gdn.i18n import table
from gdn.lessons.compare import (
    COMPARE_PRESETS,
    RULES,
    VARIANT_PRESETS,
    VARIANTS,
    disagreements,
    nearest_labels,
    readout_error,
    run_all,
)
from gdn.lessons.stream import STAGES, StepRecords, opening_step, step_records
from gdn.units import cell_text
from app_pages._support import ui
from app_pages._support.caches import BOUNDS
from app_pages._support.pack import Packed
from app_pages._support.player import Frame, Variant, pack


def _html(text: str) -> str:
    """A translated line as HTML: escaped, its **bold** kept."""
    return re.sub(r"\*\*(.+?)\*\*", r"<b>\1</b>", html.escape(text))


def answer(o: np.ndarray, values: np.ndarray, value_labels: tuple[str, ...]) -> str:
    """The readout as a labelled value (city story) or as numbers."""
    if not value_labels:
        return ui.tr("compare.readout", o="(" + ", ".join(cell_text(o)) + ")")
    best = nearest_labels(o, values)
    label = lambda i: ui.tr(f"compare.label_{value_labels[i]}")
    if not best:
        return ui.tr("compare.nothing")
    (a, sa), (b, sb) = best
    if sa - sb < 0.01:
        return ui.tr("compare.blend", a=label(a), b=label(b), sa=f"{sa:.2f}", sb=f"{sb:.2f}")
    return ui.tr("compare.nearest", label=label(a), sim=f"{sa:.2f}", norm=f"{np.linalg.norm(o):.2f}")


def frames(story: str, recs: dict[str, StepRecords], target: np.ndarray, titles: dict[str, str],
           names: dict[str, str], values: np.ndarray, value_labels: tuple[str, ...]) -> list[Frame]:
    errors = {col: readout_error(rec, target) for col, rec in recs.items()}
    rows = {n: ui.tr(f"compare.row_{n}") for n in VECTOR_ROWS}
    axis = {"key": ui.tr("common.key_dim"), "value": ui.tr("common.value_dim"), "dim": ui.tr("common.dim")}
    value_names = [ui.tr(f"compare.label_{n}") for n in value_labels]
    stage_name = ui.label_maker("common.stage_")
    out = []
    for t in range(len(target)):
        for stage in STAGES:
            figure = compare_step_html(recs, target, t, stage, titles=titles, row_labels=rows, axis=axis,
                                       value_names=value_names, alt=ui.tr("compare.alt", t=t + 1, stage=stage_name(stage)))
            # The readouts exist from the query stage on; before it they would give away what the figure hides.
            if stage == "query":
                said = "".join(f'<div><span class="who">{html.escape(names[n])}</span><br>'
                               f"{_html(answer(rec.output[t], values, value_labels))}<br>"
                               f"{_html(ui.tr('compare.error', err=f'{errors[n][t]:.2f}'))}</div>" for n, rec in recs.items())
                narration = f'<div class="gdn-readouts">{said}</div>'
            else:
                narration = _html(ui.tr("compare.readout_later"))
            out.append(Frame(head=f"<b>{_html(ui.tr(f'compare.tok_{story}_{t}'))}</b> · {html.escape(stage_name(stage))}",
                             narration=narration, html=figure))
    return out


@st.cache_resource(max_entries=BOUNDS["player.compare"], show_spinner=False)
def _packed(story: str, language: str, lecture: bool, _recs: dict, _target: np.ndarray, _titles: dict,
            _names: dict, _values: np.ndarray, _value_labels: tuple) -> Packed:
    errors = {col: readout_error(rec, _target) for col, rec in _recs.items()}
    grid = error_grid_html(errors, disagreements(errors), names=_names, corner=ui.tr("compare.grid_corner"),
                           alt=ui.tr("compare.grid_alt"))
    note = "" if lecture else f'<div class="note">{_html(ui.tr("compare.grid_note"))}</div>'
    return pack(frames(story, _recs, _target, _titles, _names, _values, _value_labels), fixed=grid + note)


def packed_frames(story: str, recs: dict[str, StepRecords], target: np.ndarray, titles: dict[str, str],
                  names: dict[str, str], values=np.zeros((0, 0)), value_labels: tuple[str, ...] = ()) -> Packed:
    """story: the example's name (its token labels are compare.tok_<story>_<t>); the rest as the page has it.
    Cached per example, language and mode: the example's name fixes its streams."""
    return _packed(story, ui.lang(), ui.lecture(), recs, target, titles, names, values, tuple(value_labels))


@st.cache_data
def compare_run(preset: str):
    p = COMPARE_PRESETS[preset]()
    return p, run_all(p.stream)


@st.cache_data
def variant_run(name: str):
    p = VARIANT_PRESETS[name]()
    return p.target, {col: step_records(s) for col, s in p.streams.items()}


def _story(key: str) -> str:
    """A variant's story under its frames; folded in lecture mode, as every explanation is (ui.note). A story
    that asks for a reading keeps it (key + "_answer") behind "Show the answer", a <details> the browser opens."""
    body = _html(ui.tr(key))
    if f"{key}_answer" in table(ui.lang()):
        body += (f'<details class="gdn-reveal"><summary>{html.escape(ui.tr("common.reveal"))}</summary>'
                 f'{_html(ui.tr(f"{key}_answer"))}</details>')
    return f"<details><summary>{html.escape(ui.tr('common.notes'))}</summary>{body}</details>" if ui.lecture() else body


def variant_opening(preset: str, name: str) -> tuple[int, str]:
    """(token from 1, stage) where a fresh visit opens variant `name` (the rules on `preset`, or a variant
    preset): the first frame at which its streams' tables part ways (gdn.lessons.stream.opening_step)."""
    recs = variant_run(name)[1] if name in VARIANT_PRESETS else compare_run(preset)[1]
    return opening_step(*recs.values())


def compare_variants(preset: str) -> list[Variant]:
    """Every variant of the page, in the order of the bar: the three rules on the chosen example and each
    variant preset with their frames (the browser switches between them), then the two-call variant,
    which the server draws (it runs the trained model)."""
    out = []
    for name in VARIANTS:
        label = ui.tr(f"compare.variant_{name}")
        if name == "rules":
            p, recs = compare_run(preset)
            titles = {r: f"<b>{ui.tr(f'compare.rule_short_{r}')}</b><br>{ui.tr(f'compare.rule_{r}')}" for r in RULES}
            packed = packed_frames(preset, recs, p.target, titles, {r: ui.tr(f"compare.rule_short_{r}") for r in RULES},
                                   p.values, p.value_labels)
            out.append(Variant(name, label, packed, len(p.target), _story(f"compare.story_{preset}")))
        elif name in VARIANT_PRESETS:
            target, recs = variant_run(name)
            titles = {c: f"<b>{ui.tr(f'compare.col_{c}')}</b><br>{ui.tr(f'compare.col_{c}_rule')}" for c in recs}
            packed = packed_frames(name, recs, target, titles, {c: ui.tr(f"compare.col_{c}") for c in recs})
            out.append(Variant(name, label, packed, len(target), _story(f"compare.story_{name}")))
        else:
            out.append(Variant(name, label, None))
    return out
