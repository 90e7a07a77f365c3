"""Does the trained demo model's gating mean something? Numbers on a fixed batch of its tasks.

    model = load_model(TRAINED_PATH)
    ev = evidence(model)                  # plain floats and lists, shared by the test and the page
    ev["acc"]["reassigned"], ev["acc_ablation"]["reassigned"]
    ev["beta_value"][l][h], ev["beta_filler"][l][h], ev["alpha_switch"][l][h], ev["alpha_other"][l][h]

`forward` is the model's one forward (gdn.qwen35.model.TextModel, our chunked kernel) on a batch, with the
ablation as a parameter: ablate=True runs every Gated DeltaNet mixer with plain causal linear attention
(alpha = 1, no delta correction: S_t = S_{t-1} + beta_t k_t v_t^T), keeping every weight.
"""
from __future__ import annotations

import random

import numpy as np
import torch
import torch.nn.functional as F

from gdn.qwen35.demo.tasks import LANGS, PAD, Example, encode_words, make_example, vocabulary
from gdn.qwen35.interventions import gate_overrides

EVAL_SEED = 20240601
SEQ_LEN = 112               # every example fits (the longest is about 100 tokens); the rest is padding
QUERY_KINDS = ("latest", "reassigned", "new", "none")


def word_ids(tok) -> dict[str, int]:
    """Task word -> token id (tok: a tokenizers.Tokenizer); checks each word is one token."""
    words = vocabulary() + [PAD]
    ids = encode_words(tok, vocabulary()) + [tok.token_to_id(PAD)]
    return dict(zip(words, ids))


def examples(n: int, seed: int) -> list[Example]:
    rng = random.Random(seed)
    return [make_example(rng, LANGS[rng.random() < 0.5]) for _ in range(n)]


def batch(exs: list[Example], ids: dict[str, int], T: int = SEQ_LEN) -> tuple[torch.Tensor, torch.Tensor]:
    """Token ids [B, T] (padded at the end) and the loss mask [B, T]: True at t when token t+1 is predictable."""
    out = torch.full((len(exs), T), ids[PAD], dtype=torch.long)
    mask = torch.zeros(len(exs), T, dtype=torch.bool)
    for b, ex in enumerate(exs):
        n = min(len(ex.words), T)
        out[b, :n] = torch.tensor([ids[w] for w in ex.words[:n]])
        mask[b, :n - 1] = torch.tensor(ex.target[1:n])
    return out, mask


def forward(text_model, head_weight: torch.Tensor, ids: torch.Tensor, *, ablate: bool = False,
            overrides: dict | None = None):
    """The model's own forward (gdn.qwen35.model.TextModel) on a batch, from the start of the sequence.
    text_model: a TextModel; ids: [B, T]. ablate=True runs every GDN layer with the "linear" rule;
    overrides: gate interventions {layer: GateOverride} (gdn.qwen35.interventions.gate_overrides).
    Returns logits [B, T, vocab] and the (g, beta) pair, each [B, T, HV], of every GDN layer in order."""
    x, steps = text_model(ids, rule="linear" if ablate else "gdn", overrides=overrides)  # [B, T, D]
    gates = [(st.record.g, st.record.beta) for st in steps if st.record is not None]
    return F.linear(text_model.norm(x), head_weight), gates                   # [B, T, vocab]


def accuracy(logits: torch.Tensor, exs: list[Example], ids: dict[str, int]) -> dict[str, float]:
    """Greedy next-token accuracy on each query kind and on copied tokens (fractions in [0, 1])."""
    pred = logits.argmax(-1)                                                   # [B, T]
    hits = {k: [] for k in (*QUERY_KINDS, "copy")}
    for b, ex in enumerate(exs):
        for pos, answer, kind in ex.queries:
            hits[kind].append(int(pred[b, pos]) == ids[answer])
        for t in range(1, len(ex.words)):
            if ex.roles[t] == "copy" and ex.target[t]:
                hits["copy"].append(int(pred[b, t - 1]) == ids[ex.words[t]])
    out = {k: float(np.mean(v)) if v else float("nan") for k, v in hits.items()}
    out["all"] = float(np.mean([h for v in hits.values() for h in v]))
    return out


def _role_mean(x: np.ndarray, exs: list[Example], role: str) -> np.ndarray:
    """x: [B, T, H] -> mean over the tokens of one role: [H]."""
    rows = [x[b, t] for b, ex in enumerate(exs) for t, r in enumerate(ex.roles) if r == role]
    return np.mean(rows, axis=0)


def evidence(model, n: int = 64, seed: int = EVAL_SEED) -> dict:
    """Gate statistics and task accuracy of a loaded model (gdn.qwen35.load_model) on n fixed examples.

    beta_value / beta_filler: mean beta on value tokens / filler words, [GDN layer][head].
    alpha_switch / alpha_other: mean alpha = exp(g) on the "###" marker / on every other real token.
    acc / acc_ablation: accuracy per query kind with the trained rule / with linear attention instead.
    acc_stop_writing / acc_never_forget: accuracy with beta := 0 in every head of the beta head's layer /
    alpha := 1 in every head of the switch head's layer (layers named in beta_head / switch_head).
    """
    wid = word_ids(model.tokenizer.tok)
    exs = examples(n, seed)
    ids, _ = batch(exs, wid)
    model.load_layers()
    with torch.inference_mode():
        logits, gates = forward(model.model, model.head_weight(), ids)
        logits_ablated, _ = forward(model.model, model.head_weight(), ids, ablate=True)
    alpha = [g.exp().float().numpy() for g, _ in gates]                        # [B, T, HV] per layer
    beta = [b.float().numpy() for _, b in gates]
    other = [ex.roles for ex in exs]
    real = [[("switch" if r == "switch" else "other") for r in roles] for roles in other]
    tagged = [Example(ex.lang, ex.words, r, ex.target) for ex, r in zip(exs, real)]
    ev = {
        "n_examples": n, "seed": seed,
        "gdn_layers": list(model.cfg.gdn_layers),
        "acc": accuracy(logits, exs, wid), "acc_ablation": accuracy(logits_ablated, exs, wid),
        "beta_value": [_role_mean(b, exs, "value").tolist() for b in beta],
        "beta_filler": [_role_mean(b, exs, "filler").tolist() for b in beta],
        "alpha_switch": [_role_mean(a, tagged, "switch").tolist() for a in alpha],
        "alpha_other": [_role_mean(a, tagged, "other").tolist() for a in alpha],
    }
    ev["switch_head"] = _best(ev, lambda li, h: ev["alpha_switch"][li][h] - ev["alpha_other"][li][h])
    ev["beta_head"] = _best(ev, lambda li, h: ev["beta_filler"][li][h] - ev["beta_value"][li][h])
    for name, gate, value, where in (("stop_writing", "set_beta", 0.0, "beta_head"),
                                     ("never_forget", "set_alpha", 1.0, "switch_head")):
        overrides = gate_overrides(model.cfg, **{gate: {(ev[where]["layer"], None): value}})   # all layers run
        with torch.inference_mode():
            ev[f"acc_{name}"] = accuracy(forward(model.model, model.head_weight(), ids, overrides=overrides)[0], exs, wid)
    return ev


def intervention_table(ev: dict) -> list[tuple[str, list[float]]]:
    """Rows (query kind, [trained, linear ablation, stop writing, never forget]) for the page's table."""
    cols = ("acc", "acc_ablation", "acc_stop_writing", "acc_never_forget")
    return [(kind, [ev[c][kind] for c in cols]) for kind in (*QUERY_KINDS, "copy", "all")]


def _best(ev: dict, score) -> dict:
    """The (layer, head) with the lowest score; layer is the model's layer index."""
    cands = [(score(li, h), li, h) for li in range(len(ev["gdn_layers"])) for h in range(len(ev["alpha_other"][li]))]
    _, li, h = min(cands)
    return {"layer": ev["gdn_layers"][li], "head": h, "gdn_index": li}
