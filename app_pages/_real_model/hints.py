"""The task presets' hints and the trained demo's note, as sentences picked by what the numbers show.

Each claim has a sentence for when it holds and one for when it does not (real_model.hint_* and
real_model.about_*), and every number in them is the one computed here: gdn.qwen35.demo.hints decides,
this file only words it. tests/test_real_model_claims.py reads the page back against the same numbers.
"""
from __future__ import annotations

from gdn.qwen35.demo.hints import BatchFacts, Contrast, PromptFacts, shows
from gdn.qwen35.demo.stories import STORIES, Effect
from app_pages._real_model.found import where
from app_pages._support import ui

PROBABILITY = "{:.2f}"                         # every probability and gate value of the hints
SENTENCE_GAP = {"zh": ""}                      # between two sentences: Chinese puts no space there


def sentences(lines: list[str]) -> str:
    return SENTENCE_GAP.get(ui.lang(), " ").join(lines)


def num(x: float) -> str:
    return PROBABILITY.format(x)


def gate_words(kind: str) -> str:
    """"β := 0" for the story's intervention."""
    spec = STORIES[kind]
    return f"{'α' if spec['gate'] == 'alpha' else 'β'} := {spec['value']:g}"


def contrast_fields(c: Contrast) -> dict:
    return {"where": where(c, mean=True), "on": num(c.on), "off": num(c.off)}


def contrast_lines(facts: PromptFacts) -> list[str]:
    """How the gate looks where the intervention is (or at the clearest head): the hinted contrast only
    when it holds; when it does not, where it does hold, or that no head shows it."""
    place, clearest = facts.place, facts.clearest
    if place is None:
        return []                              # the prompt has no token of a group (no ### for α)
    gate = place.gate
    lines = [ui.tr(f"real_model.hint_{gate}_{'shows' if shows(place) else 'flat'}", **contrast_fields(place))]
    if not shows(place):
        lines.append(ui.tr(f"real_model.hint_{gate}_{'clearest' if shows(clearest) else 'nowhere'}",
                           **contrast_fields(clearest)))
    return lines


def effect_fields(e: Effect, piece) -> dict:
    return {"where": where(e), "answer": piece(e.answer), "before": num(e.before), "after": num(e.after),
            "new": piece(e.new_top)}


def intervention_line(facts: PromptFacts, piece) -> str:
    """What the story's intervention does here: one head flips an answer; else a whole layer does (and what
    the strongest single head did); else nothing does (and what came closest)."""
    s = facts.search
    base = {"gate": gate_words(facts.kind), "view": ui.tr("real_model.tab_intervene")}
    if s.n_right == 0:
        return ui.tr("real_model.hint_none_right", n=s.n_slots, **base)
    head, layer = s.first_head, s.first_layer
    if head.flips:
        return ui.tr("real_model.hint_head_flips", **base, **effect_fields(head, piece))
    if layer.flips:
        whole = {f"l_{k}": v for k, v in effect_fields(layer, piece).items()}
        return ui.tr("real_model.hint_layer_flips", **base, **effect_fields(head, piece), layer=layer.layer, **whole)
    closest = min((head, layer), key=lambda e: e.after)
    return ui.tr("real_model.hint_no_flip", **base, **effect_fields(closest, piece))


def preset_hint(preset: str, facts: PromptFacts | None, piece) -> str:
    """The preset's story (what the task is) and, on a demo model, what its gates and interventions show.
    piece: token id -> its text as the page shows it."""
    lines = [ui.tr(f"real_model.story_{preset}")]
    if facts is not None:
        if facts.search.n_right:            # "the values it must store" is said of a model that does the task
            lines += contrast_lines(facts)
        lines.append(intervention_line(facts, piece))
        story = facts.search.story
        if facts.leak and story is not None:
            lines.append(ui.tr("real_model.hint_leak", new=piece(story.new_top)))
    return sentences(lines)


def about_trained(ev: dict, batch: BatchFacts, counts: dict) -> str:
    """The trained demo's note: what it is (counts read from the model), what it scores on the evidence
    batch, and the two gate contrasts there, each worded by whether it holds."""
    pct = lambda x: f"{100 * x:.0f}%"
    acc = ev["acc"]
    lines = [ui.tr("real_model.about_trained", **counts, n=ev["n_examples"], latest=pct(acc["latest"]),
                   recall=pct(acc["reassigned"]), recall_lin=pct(ev["acc_ablation"]["reassigned"]),
                   none=pct(acc["none"]), copy=pct(acc["copy"]))]
    for c in (batch.beta, batch.alpha):
        lines.append(ui.tr(f"real_model.about_{c.gate}_{'shows' if shows(c) else 'flat'}", **contrast_fields(c)))
    lines.append(ui.tr("real_model.about_ablation", b_layer=ev["beta_head"]["layer"], s_layer=ev["switch_head"]["layer"],
                       recall=pct(acc["reassigned"]), stop=pct(ev["acc_stop_writing"]["reassigned"]),
                       none=pct(acc["none"]), kept=pct(ev["acc_never_forget"]["none"])))
    lines.append(ui.tr("real_model.about_trained_next"))
    return sentences(lines)
