"""Variants on the compare page (docs/teaching-content.md §6): beta per value channel, alpha per key dim
(Kimi's KDA) and one stream fed in two calls, each against an independent computation; AppTest."""
import json

import numpy as np
import pytest
import torch

from gdn.lessons.compare import VARIANT_PRESETS, VARIANTS, beta_channel_story, kda_story, two_calls
from gdn.lessons.memory import k1_update, random_stream
from gdn.lessons.stream import Stream, records_csv, step_records
from gdn.ops import recurrent_gated_delta_rule
from gdn.units import cell_text
from tests.apptest import arr, open_app
from tests.test_compare import step_panels


def kda_closed_form(s: Stream) -> np.ndarray:
    """KDA written as matrices (not the code's loop): S_t = (I - b k k^T) diag(a_t) S_{t-1} + b k v^T."""
    S, K = s.S0.copy(), s.shape[1]
    for t in range(s.shape[0]):
        k, v, b = s.k[t], s.v[t], s.beta[t]
        S = (np.eye(K) - b * np.outer(k, k)) @ np.diag(s.alpha[t]) @ S + b * np.outer(k, v)
    return S


def test_kda_matches_its_closed_form_on_random_streams():
    rng = np.random.default_rng(0)
    for K, V in ((2, 2), (4, 3), (3, 5)):
        base = random_stream(T=9, K=K, V=V, seed=K)
        s = Stream(k=base.k, v=base.v, q=base.q, alpha=rng.uniform(0, 1, (9, K)), beta=base.beta, S0=rng.normal(size=(K, V)))
        np.testing.assert_allclose(step_records(s).S_new[-1], kda_closed_form(s), atol=1e-12)


def test_kda_with_equal_alphas_is_the_per_head_rule():
    s = random_stream(T=7, K=3, V=2, seed=5)
    per_dim = Stream(k=s.k, v=s.v, q=s.q, alpha=np.repeat(s.alpha[:, None], 3, axis=1), beta=s.beta, S0=s.S0)
    np.testing.assert_allclose(step_records(per_dim).output, step_records(s).output, atol=1e-14)


def test_kda_story_keeps_one_fact_and_forgets_the_other():
    """By hand: after token 2, per head alpha = 0.5 halves both rows; per key dim (1, 0) keeps row k1."""
    p = kda_story()
    head, dim = step_records(p.streams["alpha_head"]), step_records(p.streams["alpha_dim"])
    np.testing.assert_allclose(head.output[2:], [[1.5, 0.5], [-0.5, 1.0]])
    np.testing.assert_allclose(dim.output[2:], [[3.0, 1.0], [0.0, 0.0]])
    np.testing.assert_allclose(dim.output, p.target)                  # the per-dim decay does what the story wants
    csv = records_csv(dim)
    assert "2,alpha,0,,1.0" in csv and "2,alpha,1,,0.0" in csv         # one alpha per key dim in the export


def test_beta_channel_story_against_the_kernel_and_by_hand():
    """The per-channel beta of the kernels (gdn.ops, an independent implementation) gives the same readouts."""
    p = beta_channel_story()
    for name, s in p.streams.items():
        rec = step_records(s)
        as_t = lambda x: torch.tensor(x, dtype=torch.float64)[None, :, None]
        o, _ = recurrent_gated_delta_rule(as_t(s.q), as_t(s.k), as_t(s.v), g=as_t(np.log(s.alpha)), beta=as_t(s.beta),
                                          scale=1.0)
        np.testing.assert_allclose(rec.output, o[0, :, 0].numpy(), atol=1e-12, err_msg=name)
    head, channel = (step_records(s).output[2] for s in p.streams.values())
    np.testing.assert_allclose(head, [5, 0])                          # the job channel was overwritten
    np.testing.assert_allclose(channel, [5, 1])                       # the job channel kept its value


@pytest.mark.parametrize("cut", [1, 2, 3])
def test_two_calls_carry_equals_one_call_and_reset_forgets(cut):
    s = k1_update()
    run = two_calls(s, cut)
    assert run.max_diff < 1e-12
    np.testing.assert_allclose(run.one_call, step_records(s).output, atol=1e-12)
    tail = Stream(k=s.k[cut:], v=s.v[cut:], q=s.q[cut:], alpha=s.alpha[cut:], beta=s.beta[cut:], S0=np.zeros((2, 2)))
    np.testing.assert_allclose(run.reset[cut:], step_records(tail).output, atol=1e-12)   # the numpy loop from zero
    np.testing.assert_allclose(run.reset[:cut], run.one_call[:cut])
    np.testing.assert_allclose(run.carried[-1], [-0.5, 1])
    if cut >= 2:                                                        # k2 (token 1) was written before the cut
        np.testing.assert_allclose(run.reset[-1], [0, 0])              # ... so a fresh state has lost it
    with pytest.raises(ValueError, match="cut must split"):
        two_calls(s, 0)


def test_two_calls_on_the_trained_model():
    """The shipped model: carrying every layer's cache reproduces the one-call logits; starting over
    loses the fact the question asks for (the recall preset, split before its first question)."""
    from gdn.qwen35 import load_model
    from gdn.qwen35.analysis import two_call_run
    from gdn.qwen35.sources import TRAINED_PATH
    model = load_model(TRAINED_PATH)
    text = json.loads((TRAINED_PATH.parents[1] / "prompts" / "real_model.json").read_text())["recall"]["en"]
    facts, question = text[:text.index(" ask ")], text[text.index(" ask ") + 1:text.index("?") + 1]
    ids = model.tokenizer.encode(facts + " " + question, max_tokens=512).ids
    cut = len(model.tokenizer.encode(facts, max_tokens=512).ids)
    run = two_call_run(model, ids, cut)
    (answer,) = model.tokenizer.tok.encode(" jade").ids
    assert run.top_one[0][0] == run.top_carried[0][0] == answer
    assert run.max_logit_diff < 1e-5 and run.max_state_diff < 1e-4
    assert run.top_reset[0][0] != answer


def spec(at, i=0) -> dict:
    return json.loads(at.get("plotly_chart")[i].proto.spec)


@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize("variant", [v for v in VARIANTS if v in VARIANT_PRESETS])
def test_page_steps_each_variant(lang, variant):
    at = open_app(lang, "app_pages/compare.py", compare_variant=variant)
    assert not at.exception
    panels = step_panels(at)                                         # the player's last frame
    assert len(panels) == 4                                          # two columns: table + vectors each
    recs = [step_records(s) for s in VARIANT_PRESETS[variant]().streams.values()]
    tables = [rows for name, rows in panels.items() if name.startswith("S_")]
    for shown, rec in zip(tables, recs):                             # the tables shown are the computed ones
        assert shown == cell_text(rec.S_new[-1]).tolist()


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_page_two_calls(lang):
    at = open_app(lang, "app_pages/compare.py", compare_variant="stream")
    assert not at.exception
    at.slider(key="compare_stream_start").set_value(4).run()     # the second call starts at token 4 (t = 3 from 0)
    assert not at.exception
    fig = spec(at)
    run = two_calls(k1_update(), 3)
    for i, z in enumerate((run.one_call, run.carried, run.reset)):
        np.testing.assert_allclose(arr(fig["data"][i]["z"]), z, atol=1e-12)
    table = at.dataframe[0].value
    assert len(table) == 3 and table.iloc[0, 1] == table.iloc[1, 1] != table.iloc[2, 1]   # carried = one call


def test_two_calls_counts_from_one_and_corrects_old_links():
    """"Starts at token n" splits the stream after token n - 1 (the figure's line sits under t = n - 1); an
    old link's 0-based ?compare_stream_cut=2 (the second call starting at t = 3) reopens the same split."""
    for params, start in (({}, 3), ({"compare_stream_cut": "2"}, 3), ({"compare_stream_cut": "1"}, 2)):
        at = open_app("en", "app_pages/compare.py", compare_variant="stream", **params)
        assert not at.exception
        assert at.slider(key="compare_stream_start").value == start
        line = next(s for s in spec(at)["layout"]["shapes"] if s["type"] == "line")
        assert line["y0"] == (start - 1) - 0.5                      # between row start - 2 and row start - 1 (0-based)
        np.testing.assert_allclose(arr(spec(at)["data"][2]["z"]), two_calls(k1_update(), start - 1).reset, atol=1e-12)
