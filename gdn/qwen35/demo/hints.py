"""The facts behind the hints of the demo's task prompts, computed on the loaded model and prompt.

A hint used to be a sentence written in advance ("β jumps on the value words", "switch off one head's
gate and the answer goes wrong") next to numbers that did not bear it out. Here each claim is a test
on the numbers of the prompt shown: the page says it only when it holds, and otherwise says what does.

    facts = prompt_facts(model, ids, pieces, "stop_writing", same_script=True)
    facts.search.story                 # the first single head, else whole layer, that flips an answer
    facts.place                        # the gate contrast where that intervention is (else the clearest head)
    shows(facts.place)                 # β at least BETA_SPIKE higher on value words / α dropping at ###
    facts.leak                         # the flipped answer is a value from before ### (the old topic)

    about = batch_facts(ev)            # the same two contrasts on the evidence batch, at its heads
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gdn.qwen35.demo.stories import ALPHA_DROP, BETA_SPIKE, STORIES, Search, answer_slots, search_story, token_roles
from gdn.qwen35.predict import predict

# Which tokens each gate is compared on: β on the value words against filler, α at ### against the rest.
GROUPS = {"beta": ("value", ""), "alpha": ("switch", None)}       # None: every token outside the first group


@dataclass(frozen=True)
class Contrast:
    """A gate's mean over two groups of tokens at one place (a head, or a whole layer's mean over heads)."""
    gate: str                   # "alpha" | "beta"
    layer: int
    head: int | None
    on: float                   # β on value words / α at ###
    off: float                  # β on filler / α on every other token


def shows(c: Contrast | None) -> bool:
    """Does the contrast hold as the hints word it? β: value words at least BETA_SPIKE above filler (the
    gate figure's green frames use the same margin); α: ### below ALPHA_DROP of the rest (its red frames)."""
    if c is None:
        return False
    return c.on >= c.off + BETA_SPIKE if c.gate == "beta" else c.on <= ALPHA_DROP * c.off


def gap(c: Contrast) -> float:
    """How clearly the contrast goes the hinted way (larger: clearer)."""
    return c.on - c.off if c.gate == "beta" else c.off - c.on


def group_masks(roles: list[str], gate: str) -> tuple[np.ndarray, np.ndarray]:
    first, second = GROUPS[gate]
    r = np.array(roles, dtype=object)
    on = r == first
    return on, (~on if second is None else r == second)


def contrast(gate: str, layers: list[int], values: np.ndarray, roles: list[str], layer: int,
             head: int | None) -> Contrast | None:
    """values: [L, T, H] of the gate (α, not g). None when the prompt has no token of a group."""
    on, off = group_masks(roles, gate)
    if not on.any() or not off.any():
        return None
    x = values[layers.index(layer)]                                    # [T, H]
    x = x.mean(axis=1) if head is None else x[:, head]
    return Contrast(gate, layer, head, float(x[on].mean()), float(x[off].mean()))


@dataclass(frozen=True)
class PromptFacts:
    kind: str                   # a key of STORIES
    search: Search
    place: Contrast | None      # at the first flip's place; with no flip, at the clearest head
    clearest: Contrast | None   # the head with the clearest contrast of the whole prompt
    leak: bool                  # the flip's new answer is a value word written before ### (never_forget)


def prompt_facts(model, ids: list[int], pieces: list[str], kind: str, same_script: bool = False) -> PromptFacts:
    """Everything a task prompt's hint of this story may say, computed on this model and prompt."""
    gate = STORIES[kind]["gate"]
    search = search_story(model, list(ids), answer_slots(pieces, list(ids)), kind, same_script=same_script)
    base = predict(model, list(ids), same_script=same_script)
    values = np.exp(base.g) if gate == "alpha" else base.beta          # [L, T, H]
    roles = token_roles(pieces)
    each = [contrast(gate, base.layers, values, roles, layer, h) for layer in base.layers for h in range(values.shape[-1])]
    clearest = max((c for c in each if c is not None), key=gap, default=None)
    story = search.story
    place = contrast(gate, base.layers, values, roles, story.layer, story.head) if story is not None else clearest
    return PromptFacts(kind, search, place, clearest, _leaks(search, ids, roles))


def _leaks(search: Search, ids: list[int], roles: list[str]) -> bool:
    """The story's new answer is a value word of the prompt from before ### (the old topic came back)."""
    story = search.story
    if story is None or "switch" not in roles:
        return False
    cut = roles.index("switch")
    return any(int(i) == story.new_top and r == "value" for i, r in zip(ids[:cut], roles[:cut]))


@dataclass(frozen=True)
class BatchFacts:
    """The evidence batch's (gdn.qwen35.demo.evidence) contrasts at its own chosen heads."""
    beta: Contrast              # at ev["beta_head"]: value words against filler
    alpha: Contrast             # at ev["switch_head"]: ### against every other token


def batch_facts(ev: dict) -> BatchFacts:
    def at(gate: str, which: str, on: str, off: str) -> Contrast:
        h = ev[which]
        return Contrast(gate, h["layer"], h["head"], ev[on][h["gdn_index"]][h["head"]], ev[off][h["gdn_index"]][h["head"]])
    return BatchFacts(at("beta", "beta_head", "beta_value", "beta_filler"),
                      at("alpha", "switch_head", "alpha_switch", "alpha_other"))
