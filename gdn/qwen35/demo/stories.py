"""What the real-model page points at in a task prompt of the trained demo model, and the gate
interventions that show, in one click, what a head's α or β is for.

    roles = token_roles(pieces)                       # "value" | "switch" | "key" | "query" | "" per token
    qa = answer_slots(pieces, ids)                    # [(t, expected id)]: after token t the answer comes
    marks = gate_marks(roles, alpha, beta)            # cells worth a look: value words where β spikes, ### where α drops
    story = find_story(model, ids, qa, "stop_writing")  # the smallest intervention that breaks an answer
    found = search_story(model, ids, qa, "stop_writing")  # every single head and layer tried: what each does

Roles come from the task vocabulary (gdn.qwen35.demo.tasks), so they mean something only for the
demo's own tasks; a real Qwen3.5 checkpoint gets none of this.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gdn.qwen35.demo.tasks import SWITCH, WORDS
from gdn.qwen35.predict import predict

VALUES = {v for w in WORDS.values() for v in w["values"]}
KEYS = {k for w in WORDS.values() for k in w["keys"]}
QUERY_MARKS = {w["q"] for w in WORDS.values()}
BETA_SPIKE = 0.15        # β at a value word at least this much above the head's median over the prompt
ALPHA_DROP = 0.5         # α at ### below this fraction of the head's median over the prompt

# Each story: which gate is set, to what, and what it should break. "answer" stories want an answer to
# change; the candidate interventions are tried single heads first (layer by layer), then whole layers.
STORIES = {
    "stop_writing": dict(gate="beta", value=0.0, prompt="recall"),      # the head stores values: stop it writing
    "never_forget": dict(gate="alpha", value=1.0, prompt="switch"),     # the head clears at ###: make it keep all
    "forget_all": dict(gate="alpha", value=0.0, prompt="recall"),       # forget before every token
}


def token_roles(pieces: list[str]) -> list[str]:
    roles = []
    for p in pieces:
        w = p.strip()
        roles.append("switch" if w == SWITCH else "value" if w in VALUES else "key" if w in KEYS
                     else "query" if w in QUERY_MARKS else "")
    return roles


def answer_slots(pieces: list[str], ids: list[int]) -> list[tuple[int, int]]:
    """(t, id of token t + 1) for every query mark "?" followed by an answer: the model should predict it."""
    return [(t, int(ids[t + 1])) for t, p in enumerate(pieces[:-1]) if p.strip() in QUERY_MARKS]


def gate_marks(roles: list[str], alpha: np.ndarray, beta: np.ndarray) -> list[tuple[int, int, str]]:
    """alpha, beta: [T, H] of one layer. (t, head, "beta") for value words where that head's β spikes,
    (t, head, "alpha") for ### where that head's α drops."""
    out = []
    b_med, a_med = np.median(beta, axis=0), np.median(alpha, axis=0)          # [H]
    for t, role in enumerate(roles):
        if role == "value":
            out += [(t, int(h), "beta") for h in np.nonzero(beta[t] >= b_med + BETA_SPIKE)[0]]
        elif role == "switch":
            out += [(t, int(h), "alpha") for h in np.nonzero(alpha[t] <= ALPHA_DROP * a_med)[0]]
    return out


@dataclass(frozen=True)
class Effect:
    """What one intervention does to the answer it hurts most: its probability before and after, and the
    model's first choice after (a flip when that is not the answer)."""
    layer: int
    head: int | None            # None: every head of the layer
    slot: int                   # the answer slot (t)
    answer: int                 # the expected token id
    before: float
    after: float
    new_top: int

    @property
    def flips(self) -> bool:
        return self.new_top != self.answer


@dataclass
class Story:
    kind: str                   # a key of STORIES
    layer: int
    head: int | None            # None: every head of the layer
    gate: str                   # "alpha" | "beta"
    value: float
    slot: int                   # the answer slot (t) that breaks
    before: float               # probability of the expected answer, as the model is
    after: float                # with the intervention
    new_top: int                # the model's first choice with the intervention

    @property
    def overrides(self) -> dict:
        return {f"set_{self.gate}": {(self.layer, self.head): self.value}}


@dataclass(frozen=True)
class Search:
    """Every single head and every whole layer of one story's intervention, tried on one prompt."""
    kind: str
    n_slots: int                # answer slots of the prompt
    n_right: int                # of them, answered right by the model as it is
    heads: list[Effect]         # one per (GDN layer, head), layers in order: the answer each hurts most
    layers: list[Effect]        # one per GDN layer, every head at once

    @property
    def story(self) -> Story | None:
        """The first flip, single heads before whole layers (the order the story buttons promise)."""
        spec = STORIES[self.kind]
        first = next((e for e in [*self.heads, *self.layers] if e.flips), None)
        if first is None:
            return None
        return Story(self.kind, first.layer, first.head, spec["gate"], spec["value"], first.slot, first.before,
                     first.after, first.new_top)

    @property
    def first_head(self) -> Effect | None:
        """The first single head that flips an answer (the one `story` names), else the one that hurts an
        answer most."""
        return next((e for e in self.heads if e.flips), None) or min(self.heads, key=lambda e: e.after, default=None)

    @property
    def first_layer(self) -> Effect | None:
        """The first whole layer that flips an answer, else the one that hurts an answer most."""
        return next((e for e in self.layers if e.flips), None) or min(self.layers, key=lambda e: e.after, default=None)


def search_story(model, ids: list[int], slots: list[tuple[int, int]], kind: str, kernel: str = "chunk",
                 same_script: bool = False) -> Search:
    """Try the story's intervention on every single head and every whole layer; for each, the right answer
    it hurts most. A dozen forwards of the demo model: cheap next to a wrong claim on the page."""
    spec = STORIES[kind]
    base = predict(model, ids, kernel=kernel, ask=tuple(slots), same_script=same_script)
    right = [(t, a) for t, a in slots if int(base.top_ids[t, 0]) == a]
    heads, layers = [], []
    if right:
        for layer in base.layers:
            for head in [*range(base.g.shape[-1]), None]:
                p = predict(model, ids, kernel=kernel, ask=tuple(right), same_script=same_script,
                            **{f"set_{spec['gate']}": {(layer, head): spec["value"]}})
                hurt = [(int(p.top_ids[t, 0]) == a, p.prob_of(t, a), t, a) for t, a in right]
                _, after, t, a = min(hurt)                   # a flipped answer first, then the lowest probability
                effect = Effect(layer, head, t, a, base.prob_of(t, a), after, int(p.top_ids[t, 0]))
                (layers if head is None else heads).append(effect)
    return Search(kind, len(slots), len(right), heads, layers)


def find_story(model, ids: list[int], slots: list[tuple[int, int]], kind: str, kernel: str = "chunk",
               same_script: bool = False) -> Story | None:
    """The first intervention of this kind (single heads before whole layers, layers in order) that makes
    the model's first choice differ from an expected answer it got right; None if no single head or
    layer does it. slots: answer_slots of the prompt. same_script: rank guesses as the page shows them
    (gdn.qwen35.predict)."""
    return search_story(model, ids, slots, kind, kernel, same_script).story
