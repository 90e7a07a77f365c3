"""The interventions the page's texts name, found on the loaded model and prompt, never written in.

A hint ("in β look at layer 3, all heads … stop the writing") names the layer and head whose intervention
flips an answer of the prompt shown, searched with gdn.qwen35.demo.stories.find_story (single heads
before whole layers, layers in order). The same search feeds the story buttons, so a hint and its button
always name the same place: on the trained demo the English recall prompt flips at layer 1, the Chinese one
only at layer 3.
"""
from __future__ import annotations

from gdn.qwen35.demo.stories import STORIES, Story, answer_slots, find_story
from app_pages._real_model.context import Loaded
from app_pages._real_model.presets import preset_text
from app_pages._support import compute, ui

HINT_STORY = {"recall": "stop_writing", "switch": "never_forget"}   # a preset's hint -> the story it tells


def story_for(loaded: Loaded, ids: tuple, pieces: list[str], kind: str) -> Story | None:
    """The intervention of STORIES[kind] that flips an answer of this prompt (ids, pieces), or None."""
    slots = answer_slots(pieces, list(ids))
    return compute.cached("real_model.found", (loaded.folder, tuple(ids), kind), pin=True,
                          compute=lambda: find_story(loaded.model, list(ids), slots, kind))


def preset_stories(loaded: Loaded) -> dict[str, Story | None]:
    """Each story on its own preset prompt in this language (what its button loads)."""
    out = {}
    for kind, spec in STORIES.items():
        enc = loaded.model.tokenizer.encode(" " + preset_text(spec["prompt"]))   # as prompt.trace sends it
        out[kind] = story_for(loaded, tuple(enc.ids), enc.pieces, kind)
    return out


def where(story: Story | None) -> str:
    """"layer 3, all heads" / "layer 1, head 1"; None: the general words (no head flips an answer)."""
    if story is None:
        return ui.tr("real_model.any_head")
    return ui.tr("real_model.where_all" if story.head is None else "real_model.where", layer=story.layer,
                 head=story.head)
