"""Compare page: the three rules against closed forms, the worked numbers, the transpose bug, AppTest, browser."""
import json

import numpy as np
import pytest
import torch

from gdn.lessons.compare import (COMPARE_PRESETS, RULES, bug_stream, city_story, gated_final_state, k1_compare,
                       nearest_labels, readout_error, run_all)
from gdn.lessons.memory import random_stream
from gdn.ops import recurrent_gated_delta_rule
from tests.apptest import open_app


def closed_form(rule, s):
    """Independent re-derivation: S_t = a_t (I - b_t k k^T) S + b_t k v^T (delta/gated), S += b k v^T (linear)."""
    S, K = s.S0.copy(), s.shape[1]
    for t in range(s.shape[0]):
        k, v, b = s.k[t], s.v[t], s.beta[t]
        if rule == "linear":
            S = S + b * np.outer(k, v)
        else:
            a = s.alpha[t] if rule == "gated" else 1.0
            S = a * (np.eye(K) - b * np.outer(k, k)) @ S + b * np.outer(k, v)
    return S


@pytest.mark.parametrize("K,V", [(2, 2), (4, 3), (3, 5)], ids=["square", "K>V", "K<V"])
def test_rules_match_closed_form_and_kernel(K, V):
    s = random_stream(T=7, K=K, V=V, seed=3)
    recs = run_all(s)
    for rule in RULES:
        np.testing.assert_allclose(recs[rule].S_new[-1], closed_form(rule, s), atol=1e-12)
        np.testing.assert_allclose(recs[rule].output, np.einsum("tkv,tk->tv", recs[rule].S_new, s.q), atol=1e-12)
    t = lambda x: torch.tensor(x, dtype=torch.float64)[None, :, None]           # [1, T, 1, ...]
    o, S = recurrent_gated_delta_rule(t(s.q), t(s.k), t(s.v), g=t(np.log(s.alpha)), beta=t(s.beta), scale=1.0,
                                      output_final_state=True)
    np.testing.assert_allclose(recs["gated"].output, o[0, :, 0].numpy(), atol=1e-10)
    np.testing.assert_allclose(recs["gated"].S_new[-1], S[0, 0].numpy(), atol=1e-10)


def test_k1_update_reads_the_teaching_numbers():
    p = k1_compare()
    recs = run_all(p.stream)
    want2 = {"linear": (8, 1), "delta": (5, 0), "gated": (5, 0)}
    want3 = {"linear": (-1, 2), "delta": (-1, 2), "gated": (-0.5, 1)}
    for rule in RULES:
        np.testing.assert_allclose(recs[rule].output[2], want2[rule], atol=1e-12)
        np.testing.assert_allclose(recs[rule].output[3], want3[rule], atol=1e-12)
    np.testing.assert_allclose(readout_error(recs["linear"], p.target)[2], np.hypot(3, 1))


def test_city_story_answers():
    p = city_story()
    recs = run_all(p.stream)
    name = lambda rule, t: [p.value_labels[i] for i, _ in nearest_labels(recs[rule].output[t], p.values)]
    (a, sa), (b, sb) = nearest_labels(recs["linear"].output[3], p.values)
    assert {p.value_labels[a], p.value_labels[b]} == {"hangzhou", "shanghai"} and sa == pytest.approx(sb) == pytest.approx(2 ** -0.5)
    assert name("delta", 3)[0] == name("gated", 3)[0] == "shanghai"
    assert name("gated", 4)[0] == "teacher" and np.linalg.norm(recs["gated"].output[4]) == pytest.approx(0.7)
    assert np.linalg.norm(recs["delta"].output[4]) == pytest.approx(1.0)
    assert nearest_labels(np.zeros(4), p.values) == []


def test_transpose_bug_is_silent_when_square_and_loud_otherwise():
    s = bug_stream(3, 3)
    S = np.zeros((3, 3))
    for t in range(s.shape[0]):                                   # the buggy loop, written out by hand
        S = s.alpha[t] * S
        S = S + np.outer(s.beta[t] * (s.v[t] - S.T @ s.k[t]), s.k[t])
    np.testing.assert_allclose(gated_final_state(s, transpose_bug=True), S, atol=1e-12)
    np.testing.assert_allclose(gated_final_state(s), closed_form("gated", s), atol=1e-12)
    assert np.abs(S - gated_final_state(s)).max() > 0.1
    with pytest.raises(ValueError, match="broadcast"):
        gated_final_state(bug_stream(2, 3), transpose_bug=True)


def spec(at, i=0):
    return json.loads(at.get("plotly_chart")[i].proto.spec)


def step_panels(at) -> dict[str, list[list[str]]]:
    """The stepped tables (HTML, gdn/figures/tables.py): panel name -> rows of cell text."""
    from tests.test_memory_page import _Cells

    parser = _Cells()
    parser.feed(next(h.proto.body for h in at.get("html") if "gdn-compare" in h.proto.body))
    return parser.panels


@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize("preset", list(COMPARE_PRESETS))
def test_page_steps_every_preset(lang, preset):
    at = open_app(lang, "app_pages/compare.py", compare_preset=preset)
    T = COMPARE_PRESETS[preset]().stream.shape[0]
    for _ in range(T * 5 + 1):
        at.button(key="compare_next").click().run()
    assert not at.exception
    assert (at.session_state["compare_t"], at.session_state["compare_stage"]) == (T, "query")
    panels = step_panels(at)
    assert len(panels) == 6                                      # a table and the vectors of each rule
    assert "?" not in str(panels["vectors_delta"])                # everything revealed at "query"


def test_page_shows_k1_readouts_and_city_labels():
    at = open_app("en", "app_pages/compare.py", compare_t="3", compare_stage="query")
    text = " ".join(m.value for m in at.markdown)
    assert "reads o = (8, 1)" in text and text.count("reads o = (5, 0)") == 2
    at = open_app("zh", "app_pages/compare.py", compare_preset="city", compare_t="4", compare_stage="query")
    text = " ".join(m.value for m in at.markdown)
    assert "混合" in text and text.count("回答 **上海**") == 2


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_page_transpose_bug(lang):
    at = open_app(lang, "app_pages/compare.py")
    assert not at.error and len(at.get("plotly_chart")) == 1            # d_k = d_v: runs, drawn (the steps are HTML)
    at.slider(key="compare_bug_dv").set_value(4).run()
    assert not at.exception and len(at.error) == 1 and any("broadcast" in c.value for c in at.code)
    at.slider(key="compare_bug_dk").set_value(4).run()
    assert not at.error and spec(at, 0)["data"][0]["type"] == "heatmap"


@pytest.mark.browser
def test_browser_compare_token_slider_changes_readout(page, app_url):
    from tests.app_server import open_page

    open_page(page, f"{app_url}/compare?lang=en&compare_stage=query")
    readout = lambda: page.get_by_text("reads o =").first.inner_text()
    before = readout()
    page.locator('[data-testid="stSlider"]', has_text="Token").get_by_role("slider").press("End")
    page.wait_for_function(f"!document.body.innerText.includes({json.dumps(before)})", timeout=20_000)
    assert readout() != before
    assert not page.problems, page.problems
