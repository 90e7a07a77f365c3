"""Below the views: the preset's hint, what this model is (with the trained demo's evidence), the tokens."""
from __future__ import annotations

import html

import streamlit as st

from gdn.qwen35.demo.evidence import intervention_table
from gdn.qwen35.demo.hints import batch_facts
from app_pages._real_model.context import Loaded, Trace
from app_pages._real_model.found import HINT_STORY, facts_for
from app_pages._real_model.hints import about_trained, preset_hint
from app_pages._support import compute, ui, work

CHIP_CSS = f"<style>{(ui.ASSETS / 'real_model' / 'chips.css').read_text(encoding='utf-8').strip()}</style>"
MAX_CHIPS = 512


def trained_evidence(folder: str) -> dict:
    """Gate evidence of the shipped trained model on its fixed task batch: a job of the worker line, once per
    server (pinned in the shared cache; others asking meanwhile join that job)."""
    return compute.run_job("real_model.evidence", folder, work.evidence, folder, pin=True)


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
    """The preset's hint (its claims searched on this prompt, on a demo model), the model's note, the evidence
    table (trained demo) and the tokens."""
    ev = trained_evidence(loaded.folder) if loaded.kind == "trained" else None
    texts = []
    if preset != "custom":
        facts = None
        if loaded.demo and preset in HINT_STORY:            # this preset's hint: found on the prompt as run
            facts = facts_for(loaded, trace.ids, trace.tokens, HINT_STORY[preset])
        texts.append(preset_hint(preset, facts, answer_piece(loaded)))
    if ev is not None:
        texts.append(about_trained(ev, batch_facts(ev), loaded.counts))
    else:
        texts.append(ui.tr(f"real_model.about_{loaded.kind}"))
    ui.note("\n\n".join(texts), label=ui.tr("real_model.notes_below"))   # one fold in lecture mode, named
    if ev is not None:
        evidence_table(ev, intervention_table(ev))
    tokens(trace)


def answer_piece(loaded: Loaded):
    """Token id -> the word a hint quotes ("jade"), as the guesses row shows it."""
    return lambda token_id: loaded.tokenizer.piece(int(token_id)).strip() or "␣"
