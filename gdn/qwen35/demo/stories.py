"""What the real-model page points at in a task prompt of the trained demo model, and the gate
interventions that show, in one click, what a head's α or β is for.

    roles = token_roles(pieces)                       # "value" | "switch" | "key" | "query" | "" per token
    qa = answer_slots(pieces, ids)                    # [(t, expected id)]: after token t the answer comes
    marks = gate_marks(roles, alpha, beta)            # cells worth a look: value words where β spikes, ### where α drops
    story = find_story(model, ids, qa, "stop_writing")  # the smallest intervention that breaks an answer

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


def find_story(model, ids: list[int], slots: list[tuple[int, int]], kind: str, kernel: str = "chunk",
               same_script: bool = False) -> Story | None:
    """The first intervention of this kind (single heads before whole layers, layers in order) that makes
    the model's first choice differ from an expected answer it got right; None if no single head or
    layer does it. slots: answer_slots of the prompt. same_script: rank guesses as the page shows them
    (gdn.qwen35.predict)."""
    spec = STORIES[kind]
    base = predict(model, ids, kernel=kernel, ask=tuple(slots), same_script=same_script)
    right = [(t, a) for t, a in slots if int(base.top_ids[t, 0]) == a]
    gdn = base.layers
    candidates = [(l, h) for l in gdn for h in range(base.g.shape[-1])] + [(l, None) for l in gdn]
    for layer, head in candidates:
        p = predict(model, ids, kernel=kernel, ask=tuple(right), same_script=same_script,
                    **{f"set_{spec['gate']}": {(layer, head): spec["value"]}})
        broken = [(p.prob_of(t, a), t, a) for t, a in right if int(p.top_ids[t, 0]) != a]
        if broken:
            after, t, a = min(broken)
            return Story(kind, layer, head, spec["gate"], spec["value"], t, base.prob_of(t, a), after,
                         int(p.top_ids[t, 0]))
    return None
