"""Gate interventions, model.trace(set_alpha=..., set_beta=...), against transformers with the same
override injected into its own layers (tests/qwen35_fixtures.hf_reference): logits, residual streams and
the gates used agree to 1e-4 relative, with both of our kernels, on the shipped trained demo and on a
random checkpoint with grouped heads (HV = 3 HK). Bad intervention dicts get a clear ValueError."""
import math

import pytest
import torch

from gdn.qwen35 import load_model
from gdn.qwen35.predict import predict
from gdn.qwen35.sources import TRAINED_PATH
from tests.qwen35_fixtures import hf_reference, rel_err, text_config, write_checkpoint

TOL = 1e-4
CASES = {   # id: (set_alpha, set_beta); decoder-layer indices (the demo's GDN layers are 1, 2, 3)
    "beta0-one-head": (None, {(1, 1): 0.0}),
    "alpha1-layer-and-a-head": ({(2, None): 1.0, (2, 3): 0.25}, None),
    "alpha0-forget-all": ({(3, 0): 0.0}, {(1, None): 0.5}),
}


@pytest.fixture(scope="module")
def demo():
    model = load_model(TRAINED_PATH)
    ids = torch.tensor(model.tokenizer.encode(" the tiger is red . so lemon is blue . tiger is jade . ### lemon is "
                                              "gold . ask tiger ? none . ask lemon ? gold .").ids)
    return model, ids


@pytest.mark.parametrize("kernel", ["chunk", "recurrent"])
@pytest.mark.parametrize("case", list(CASES))
def test_demo_interventions_match_transformers(demo, case, kernel):
    model, ids = demo
    set_alpha, set_beta = CASES[case]
    ref = hf_reference(TRAINED_PATH, ids, set_alpha=set_alpha, set_beta=set_beta)
    trace = model.trace(ids, kernel=kernel, set_alpha=set_alpha, set_beta=set_beta)
    assert rel_err(trace.logits, ref["logits"]) < TOL
    for lt, out in zip(trace.layers, ref["outputs"]):
        assert rel_err(lt.output, out) < TOL, f"layer {lt.index}"
    gdn = [lt for lt in trace.layers if lt.kind == "linear_attention"]
    for lt, g, beta in zip(gdn, ref["g"], ref["beta"]):
        assert torch.equal(torch.isinf(lt.g), torch.isinf(g)), f"layer {lt.index}: alpha = 0 cells"
        finite = torch.isfinite(g)
        assert rel_err(lt.g[finite], g[finite]) < TOL and rel_err(lt.beta, beta) < TOL
    plain = model.trace(ids, kernel=kernel)
    assert rel_err(trace.logits, plain.logits) > 1e-3          # the intervention did change the model


def test_the_override_is_what_was_asked(demo):
    """The gates recorded are the constants, in exactly the chosen heads, and nowhere else."""
    model, ids = demo
    plain = model.trace(ids)
    t = model.trace(ids, set_alpha={(2, None): 1.0, (2, 3): 0.25, (3, 0): 0.0}, set_beta={(1, 2): 0.0})
    assert torch.all(t.layers[2].g[:, :3] == 0) and torch.allclose(t.layers[2].g[:, 3], torch.tensor(math.log(0.25)))
    assert torch.all(t.layers[3].g[:, 0] == -math.inf)
    assert torch.all(t.layers[1].beta[:, 2] == 0) and torch.equal(t.layers[1].g, plain.layers[1].g)  # alpha of layer 1 kept
    assert torch.equal(t.layers[0].output, plain.layers[0].output)                  # attention layer 0: untouched
    last = model.trace(ids, set_alpha={(3, 0): 0.0})                              # only the last layer, one head
    assert torch.equal(last.layers[3].g[:, 1:], plain.layers[3].g[:, 1:]) and torch.equal(last.layers[3].beta, plain.layers[3].beta)


@pytest.mark.parametrize("kernel", ["chunk", "recurrent"])
def test_grouped_heads_interventions_match_transformers(tmp_path, kernel):
    text = text_config(linear_num_key_heads=2, linear_num_value_heads=6, num_hidden_layers=4, tie_word_embeddings=False)
    folder = write_checkpoint(tmp_path, text, seed=5, shards=2)
    ids = torch.randint(0, text["vocab_size"], (83,), generator=torch.Generator().manual_seed(1))
    set_alpha, set_beta = {(0, 5): 0.0, (2, None): 0.9}, {(1, 4): 0.0, (2, 0): 1.0}
    ref = hf_reference(folder, ids, set_alpha=set_alpha, set_beta=set_beta)
    trace = load_model(folder, dtype=torch.float32, allow_any_folder=True).trace(ids, kernel=kernel, set_alpha=set_alpha,
                                                                               set_beta=set_beta)
    assert rel_err(trace.logits, ref["logits"]) < TOL


def test_predictions_keep_the_top3_of_the_full_logits(demo):
    model, ids = demo
    p = predict(model, ids, set_beta={(1, 1): 0.0}, ask=((5, 7),))
    probs = model.trace(ids, set_beta={(1, 1): 0.0}).logits.float().softmax(-1)          # [T, vocab]
    top = probs.topk(3, dim=-1)
    assert (p.top_ids == top.indices.numpy()).all()
    assert abs(p.top_p - top.values.numpy()).max() < 1e-5
    assert abs(p.prob_of(5, 7) - float(probs[5, 7])) < 1e-6


@pytest.mark.parametrize("bad,message", [
    (dict(set_alpha={(0, 0): 0.5}), "not a Gated DeltaNet layer"),             # layer 0 of the demo is attention
    (dict(set_beta={(1, 4): 0.5}), "value-head index in 0..3"),
    (dict(set_alpha={(1, 0): 1.5}), "number in [0, 1]"),
    (dict(set_alpha={(1, 0): float("nan")}), "number in [0, 1]"),
    (dict(set_beta={(1, 0): True}), "number in [0, 1]"),
    (dict(set_alpha={1: 0.5}), "(layer, head) pairs"),
    (dict(set_alpha=[((1, 0), 0.5)]), "must be a dict"),
    (dict(set_beta={(9, None): 0.0}), "not a Gated DeltaNet layer"),
    (dict(set_alpha={(3, 0): 0.5}, upto_layer=2), "not run"),
], ids=["attention-layer", "head-out-of-range", "above-1", "nan", "bool", "bare-layer", "list", "layer-out-of-range",
        "layer-not-run"])
def test_bad_interventions_say_what_is_wrong(demo, bad, message):
    model, ids = demo
    with pytest.raises(ValueError, match=re_escape(message)):
        model.trace(ids, **bad)


def re_escape(s: str) -> str:
    import re
    return re.escape(s)
