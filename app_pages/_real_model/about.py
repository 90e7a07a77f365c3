"""Below the views: the preset's story, what this model is (with the trained demo's evidence), the tokens."""
from __future__ import annotations

import html

import numpy as np
import streamlit as st

from gdn.qwen35.demo.evidence import evidence, intervention_table
from app_pages._real_model.context import Loaded, Trace
from app_pages._real_model.found import HINT_STORY, preset_stories, story_for, where
from app_pages._support import compute, ui
from app_pages._support.turn import given_up

CHIP_CSS = ("<style>.rm-chip{display:inline-block;margin:2px;padding:1px 6px;border-radius:6px;background:#eef2ff;"
            "font-size:0.9em;border:1px solid #c7d2fe}.rm-cont{color:#94a3b8;background:#f8fafc}</style>")
MAX_CHIPS = 512


@st.cache_resource(show_spinner=False)
def trained_evidence(folder: str) -> dict:
    """Gate evidence of the shipped trained model on its fixed task batch (computed once per server; others
    asking meanwhile wait for this one). Outside the forward-pass slots: it is a few small forwards of the
    3 M-parameter demo, and holding a slot for them would queue every visitor's Run behind it. Outside the
    turn too (app_pages/_support/turn.py): the first visitor's ~10 s here must not hold every other run."""
    model = compute.model(folder)
    with given_up():
        return evidence(model)


def evidence_fields(ev: dict | None, stopped=None, kept=None) -> dict:
    """Numbers for the trained-model note and the task presets' stories. stopped, kept: the "stop writing"
    and "never forget" stories found on this prompt (found.py): the places the texts name are the ones
    whose intervention flips an answer, and the batch statistics are read there (a whole layer: the mean
    over its heads)."""
    if ev is None:
        return {"s_where": ui.tr("real_model.any_head"), "b_where": ui.tr("real_model.any_head")}
    def at(name: str, story, fallback: dict) -> float:
        layer, head = (story.layer, story.head) if story is not None else (fallback["layer"], fallback["head"])
        row = ev[name][ev["gdn_layers"].index(layer)]
        return float(np.mean(row)) if head is None else row[head]
    s, b = ev["switch_head"], ev["beta_head"]
    pct = lambda x: f"{100 * x:.0f}%"
    return dict(s_where=where(kept), b_where=where(stopped),
                a_switch=f"{at('alpha_switch', kept, s):.2f}", a_other=f"{at('alpha_other', kept, s):.2f}",
                b_value=f"{at('beta_value', stopped, b):.2f}", b_filler=f"{at('beta_filler', stopped, b):.2f}",
                recall=pct(ev["acc"]["reassigned"]), recall_lin=pct(ev["acc_ablation"]["reassigned"]),
                latest=pct(ev["acc"]["latest"]),
                none=pct(ev["acc"]["none"]), copy=pct(ev["acc"]["copy"]), n=ev["n_examples"])


def evidence_table(ev: dict, rows: list) -> None:
    """The demo model's accuracy per query kind: trained, and under each ablation (computed on this server)."""
    with st.expander(ui.tr("real_model.evidence_title", n=ev["n_examples"]), icon=":material/fact_check:"):
        b, s = ev["beta_head"], ev["switch_head"]
        heads = [ui.tr("real_model.ev_kind"), ui.tr("real_model.ev_trained"), ui.tr("real_model.ev_linear"),
                 ui.tr("real_model.ev_stop_writing", layer=b["layer"]), ui.tr("real_model.ev_never_forget", layer=s["layer"])]
        st.dataframe([dict(zip(heads, [ui.tr(f"real_model.ev_{k}"), *(f"{x:.2f}" for x in xs)])) for k, xs in rows],
                     hide_index=True, width="stretch")
        st.caption(ui.tr("real_model.evidence_note"))


def chip(i: int, piece: str, token_id: int) -> str:
    """One token as a chip; "+" marks a token whose bytes the previous chip already shows (CJK)."""
    shown = html.escape(piece or "+").replace(" ", "␣").replace("\n", "↵")
    return f'<span class="rm-chip{"" if piece else " rm-cont"}" data-tok="{i}" title="t = {i + 1} · id {token_id}">{shown}</span>'


def tokens(trace: Trace) -> None:
    with st.expander(ui.tr("real_model.tokens", n=trace.T), expanded=trace.T <= 64 and not ui.lecture()):
        chips = "".join(chip(i, p, tid) for i, (p, tid) in enumerate(zip(trace.tokens[:MAX_CHIPS], trace.ids[:MAX_CHIPS])))
        st.html(f"{CHIP_CSS}<div>{chips}</div>")
        if trace.T > MAX_CHIPS:
            st.caption(ui.tr("real_model.tokens_more", n=trace.T - MAX_CHIPS))


def below(loaded: Loaded, trace: Trace, preset: str) -> None:
    ev = trained_evidence(loaded.folder) if loaded.kind == "trained" else None
    found = preset_stories(loaded) if ev is not None else {}
    fields = evidence_fields(ev, found.get("stop_writing"), found.get("never_forget"))
    texts = []
    if preset != "custom":
        story = fields
        if ev is not None and preset in HINT_STORY:          # this preset's hint: found on the prompt as run
            here = story_for(loaded, trace.ids, trace.tokens, HINT_STORY[preset])
            story = {**fields, "b_where": where(here), "s_where": where(here)}
        texts.append(ui.tr(f"real_model.story_{preset}", **story))
    texts.append(ui.tr(f"real_model.about_{loaded.kind}", **fields))
    ui.note("\n\n".join(texts), label=ui.tr("real_model.notes_below"))   # one fold in lecture mode, named
    if ev is not None:
        evidence_table(ev, intervention_table(ev))
    tokens(trace)
