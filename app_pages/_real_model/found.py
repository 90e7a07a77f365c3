"""The interventions and gate contrasts the page's texts name, found on the loaded model and prompt, never
written in.

A hint names the layer and head whose intervention flips an answer of the prompt shown, and says how β or α
looks there, searched with gdn.qwen35.demo.hints.prompt_facts (every single head, then every whole layer).
The same search feeds the story buttons, so a hint and its button always name the same place: on the
trained demo the English recall prompt flips only with all of layer 1, the Chinese one only with all of
layer 3, and no single head flips either.
"""
from __future__ import annotations

from gdn.qwen35.demo.hints import PromptFacts
from gdn.qwen35.demo.stories import STORIES, Story
from app_pages._real_model.context import Loaded
from app_pages._real_model.presets import preset_text
from app_pages._support import compute, ui, work

HINT_STORY = {"recall": "stop_writing", "switch": "never_forget"}   # a preset's hint -> the story it tells


def facts_for(loaded: Loaded, ids: tuple, pieces: list[str], kind: str) -> PromptFacts:
    """What the hint of STORIES[kind] may say about this prompt (ids, pieces): searched once per server."""
    return compute.run_job("real_model.found", (loaded.folder, tuple(ids), kind), work.prompt_facts, loaded.folder,
                           tuple(ids), list(pieces), kind, loaded.demo, pin=True)


def story_for(loaded: Loaded, ids: tuple, pieces: list[str], kind: str) -> Story | None:
    """The intervention of STORIES[kind] that flips an answer of this prompt, or None."""
    return facts_for(loaded, ids, pieces, kind).search.story


def preset_facts(loaded: Loaded) -> dict[str, PromptFacts]:
    """Each story on its own preset prompt in this language (what its button loads)."""
    out = {}
    for kind, spec in STORIES.items():
        enc = loaded.tokenizer.encode(" " + preset_text(spec["prompt"]))   # as prompt.trace sends it
        out[kind] = facts_for(loaded, tuple(enc.ids), enc.pieces, kind)
    return out


def preset_stories(loaded: Loaded) -> dict[str, Story | None]:
    return {kind: facts.search.story for kind, facts in preset_facts(loaded).items()}


def where(place, mean: bool = False) -> str:
    """"layer 3, all heads" / "layer 1, head 1" for anything with .layer and .head (head None: the whole
    layer; mean: the whole layer's mean, for a gate's value); None: the general words."""
    if place is None:
        return ui.tr("real_model.any_head")
    if place.head is not None:
        return ui.tr("real_model.where", layer=place.layer, head=place.head)
    return ui.tr("real_model.where_mean" if mean else "real_model.where_all", layer=place.layer)
