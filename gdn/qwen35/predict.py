"""Next-token predictions at every position, with or without a gate intervention (the real-model page).

    p = predict(model, ids)                                      # the model as it is
    q = predict(model, ids, set_beta={(1, 1): 0.0})              # layer 1, head 1 never writes
    p.top_ids[t], p.top_p[t]                                     # top-3 next tokens after token t
    p.prob_of(t, token_id)                                       # probability of one token after t
    predict(demo, ids, same_script=True)                         # guesses only in the prompt's script
    q.g, q.beta                                                  # [L, T, HV] the gates that were used

The full [T, vocab] logits are never kept: a real Qwen3.5 has a 248k-token vocabulary, so the head runs
on blocks of positions and only each position's top-k (and the probabilities the page asks for) remain.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

from gdn.qwen35.interventions import gate_overrides
from gdn.qwen35.tokenizer import script_keep

TOP_K = 3
HEAD_BLOCK = 64                 # positions per output-head block: [64, vocab] floats at a time


@dataclass
class Predictions:
    top_ids: np.ndarray         # [T, TOP_K] most likely next tokens after each position
    top_p: np.ndarray           # [T, TOP_K] their probabilities
    asked: dict                 # {(t, token id): probability} for the pairs passed as `ask`
    layers: list[int]           # decoder-layer index of each GDN layer
    g: np.ndarray               # [L, T, HV] log decay used (after any intervention; -inf where alpha = 0)
    beta: np.ndarray            # [L, T, HV] write strength used

    def prob_of(self, t: int, token_id: int) -> float:
        if (t, token_id) in self.asked:
            return self.asked[(t, token_id)]
        hit = np.nonzero(self.top_ids[t] == token_id)[0]
        return float(self.top_p[t, hit[0]]) if len(hit) else float("nan")


@torch.inference_mode()
def predict(model, ids, *, set_alpha: dict | None = None, set_beta: dict | None = None, kernel: str = "chunk",
            ask: tuple = (), same_script: bool = False) -> Predictions:
    """Run every layer of a loaded model (gdn.qwen35.load_model) on ids [T] with the same interventions
    as model.trace (set_alpha / set_beta: {(layer, head or None): value in [0, 1]}, checked there), and
    keep the top-k next tokens per position. ask: (t, token id) pairs whose probability to keep too.
    same_script: rank only the tokens written in the prompt's script (the bilingual demo models spread some
    probability over the other language's words where nothing is predictable); probabilities stay the model's."""
    prompt = [int(i) for i in ids]
    ids, last = model._check_call(ids, kernel, None, None)                  # same checks as model.trace
    overrides = gate_overrides(model.cfg, set_alpha, set_beta, last)
    model.load_layers(None)
    x, steps = model.model(ids[None], kernel=kernel, embeds=model.embed(ids)[None], overrides=overrides)  # no logits
    hidden = model.model.norm(x[0])                                          # [T, D]
    W = model.head_weight()                                                  # [vocab, D]
    keep = script_keep(model, prompt, W.shape[0]) if same_script else None   # [vocab] or None
    tops, probs, asked = [], [], {}
    for start in range(0, hidden.shape[0], HEAD_BLOCK):
        p = F.linear(hidden[start:start + HEAD_BLOCK], W).float().softmax(-1)  # [<=64, vocab]
        top = (p if keep is None else p * keep).topk(TOP_K, dim=-1)
        tops.append(top.indices)
        probs.append(top.values)
        for t, tid in ask:
            if start <= t < start + p.shape[0]:
                asked[(t, tid)] = float(p[t - start, tid])
    records = [(i, st.record) for i, st in enumerate(steps) if st.record is not None]
    stack = lambda xs: np.stack([x[0].float().numpy() for x in xs])
    return Predictions(top_ids=torch.cat(tops).numpy(), top_p=torch.cat(probs).numpy(), asked=asked,
                       layers=[i for i, _ in records], g=stack(r.g for _, r in records),
                       beta=stack(r.beta for _, r in records))
