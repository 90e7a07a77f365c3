"""Compare page: the three rules against closed forms, the worked numbers, the transpose bug, AppTest, browser."""
import json
import re

import numpy as np
import pytest
import torch

from gdn.lessons.compare import (
    COMPARE_PRESETS,
    RULES,
    bug_stream,
    city_story,
    gated_final_state,
    k1_compare,
    nearest_labels,
    readout_error,
    run_all,
)
from gdn.lessons.memory import random_stream
from gdn.lessons.stream import STAGES
from gdn.ops import recurrent_gated_delta_rule
from gdn.units import cell_text
from tests.apptest import open_app, player_payload


def closed_form(rule, s):
    """Independent re-derivation from the rule's properties (a = alpha_t if it decays, else 1):
    S_t = a (I - b_t k k^T) S + b_t k v^T with the delta rule, S_t = a S + b_t k v^T without."""
    S, K, r = s.S0.copy(), s.shape[1], RULES[rule]
    for t in range(s.shape[0]):
        k, v, b = s.k[t], s.v[t], s.beta[t]
        a = s.alpha[t] if r.decays else 1.0
        forget = np.eye(K) - b * np.outer(k, k) if r.delta else np.eye(K)
        S = a * forget @ S + b * np.outer(k, v)
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
    np.testing.assert_allclose(recs["gdn"].output, o[0, :, 0].numpy(), atol=1e-10)
    np.testing.assert_allclose(recs["gdn"].S_new[-1], S[0, 0].numpy(), atol=1e-10)


def test_k1_update_reads_the_teaching_numbers():
    p = k1_compare()
    recs = run_all(p.stream)
    want2 = {"linear": (8, 1), "deltanet": (5, 0), "gdn": (5, 0)}
    want3 = {"linear": (-1, 2), "deltanet": (-1, 2), "gdn": (-0.5, 1)}
    for rule in want2:
        np.testing.assert_allclose(recs[rule].output[2], want2[rule], atol=1e-12)
        np.testing.assert_allclose(recs[rule].output[3], want3[rule], atol=1e-12)
    np.testing.assert_allclose(readout_error(recs["linear"], p.target)[2], np.hypot(3, 1))


def test_city_story_answers():
    p = city_story()
    recs = run_all(p.stream)
    name = lambda rule, t: [p.value_labels[i] for i, _ in nearest_labels(recs[rule].output[t], p.values)]
    (a, sa), (b, sb) = nearest_labels(recs["linear"].output[3], p.values)
    assert {p.value_labels[a], p.value_labels[b]} == {"hangzhou", "shanghai"} and sa == pytest.approx(sb) == pytest.approx(2 ** -0.5)
    assert name("deltanet", 3)[0] == name("gdn", 3)[0] == "shanghai"
    assert name("gdn", 4)[0] == "teacher" and np.linalg.norm(recs["gdn"].output[4]) == pytest.approx(0.7)
    assert np.linalg.norm(recs["deltanet"].output[4]) == pytest.approx(1.0)
    assert nearest_labels(np.zeros(4), p.values) == []


def test_transpose_bug_is_silent_when_square_and_loud_otherwise():
    s = bug_stream(3, 3)
    S = np.zeros((3, 3))
    for t in range(s.shape[0]):                                   # the buggy loop, written out by hand
        S = s.alpha[t] * S
        S = S + np.outer(s.beta[t] * (s.v[t] - S.T @ s.k[t]), s.k[t])
    np.testing.assert_allclose(gated_final_state(s, transpose_bug=True), S, atol=1e-12)
    np.testing.assert_allclose(gated_final_state(s), closed_form("gdn", s), atol=1e-12)
    assert np.abs(S - gated_final_state(s)).max() > 0.1
    with pytest.raises(ValueError, match="broadcast"):
        gated_final_state(bug_stream(2, 3), transpose_bug=True)


def spec(at, i=0):
    return json.loads(at.get("plotly_chart")[i].proto.spec)


def step_panels(at, step: int = -1) -> dict[str, list[list[str]]]:
    """The stepped tables (HTML, gdn/figures/tables.py) of the player's frame `step` (default: the last):
    panel name -> rows of cell text."""
    from tests.test_memory_page import _Cells

    parser = _Cells()
    parser.feed(player_payload(at, "compare_player")[1]["frames"][step]["html"])
    return parser.panels


def narration_at(at, t: int, stage: str) -> str:
    """The line under the player's head at token t (counted from 1) and stage."""
    return player_payload(at, "compare_player")[1]["frames"][(t - 1) * 5 + STAGES.index(stage)]["narration"]


@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize("preset", list(COMPARE_PRESETS))
def test_page_sends_every_step_of_every_preset(lang, preset):
    at = open_app(lang, "app_pages/compare.py", compare_preset=preset)
    assert not at.exception
    T = COMPARE_PRESETS[preset]().stream.shape[0]
    data, payload = player_payload(at, "compare_player")
    assert (data["tokens"], len(payload["frames"])) == (T, T * 5)
    panels = step_panels(at)
    assert len(panels) == 2 * len(RULES)                         # a table and the vectors of each rule
    assert "?" not in str(panels["vectors_deltanet"])                # everything revealed at "query"
    assert "?" in str(step_panels(at, 0)["vectors_deltanet"])        # the output is hidden at the first step


def test_page_shows_k1_readouts_and_city_labels():
    at = open_app("en", "app_pages/compare.py", compare_t="3", compare_stage="query")
    assert player_payload(at, "compare_player")[0]["position"] == 2 * 5 + 4
    text = narration_at(at, 3, "query")
    assert "reads o = (8, 1)" in text and text.count("reads o = (5, 0)") == 2
    assert "(8, 1)" not in narration_at(at, 3, "write")           # not before the query stage
    at = open_app("zh", "app_pages/compare.py", compare_preset="city", compare_t="4", compare_stage="query")
    text = narration_at(at, 4, "query")
    assert "混合" in text and text.count("回答 <b>上海</b>") == 2


def test_a_fresh_visit_opens_where_the_rules_part_ways():
    """k1_update: tokens 1 and 2 write orthogonal keys with alpha = 1, so the three rules hold the same
    table until token 3, whose alpha = 0.5 halves only Gated DeltaNet's (3, 1) row to (1.5, 0.5): the page
    opens on that decay, not on the blank first frame, and a link naming a step still opens that step."""
    at = open_app("en", "app_pages/compare.py")
    data = player_payload(at, "compare_player")[0]
    assert data["position"] == 2 * 5 + STAGES.index("decay") and data["opening"] == {"t": 3, "stage": "decay"}
    tables = lambda step: [rows for name, rows in step_panels(at, step).items() if name.startswith("S_")]
    for step in range(data["position"]):
        first, *others = tables(step)
        assert all(rows == first for rows in others), step
    assert ["1.5", "0.5"] in sum(tables(data["position"]), []) and len({str(r) for r in tables(data["position"])}) > 1
    at = open_app("en", "app_pages/compare.py", compare_t="1")
    assert player_payload(at, "compare_player")[0]["position"] == 0

def test_error_grid_marks_where_the_rules_part_ways():
    """The grid under the player: one row per rule, each cell ||o_t - target_t|| computed here from the
    records; the tokens where the errors differ carry the ≠ mark."""
    at = open_app("en", "app_pages/compare.py", compare_preset="k1_update")
    fixed = player_payload(at, "compare_player")[1]["fixed"]
    preset = COMPARE_PRESETS["k1_update"]()
    errors = {rule: readout_error(rec, preset.target) for rule, rec in run_all(preset.stream).items()}
    for rule, err in errors.items():
        cells = re.findall(rf'data-rule="{rule}" style="[^"]*">([^<]*)</td>', fixed)
        assert cells == list(cell_text(err))
    spread = np.ptp(np.stack(list(errors.values())), axis=0)
    marked = [int(t) for t in re.findall(r'<th class="col disagree" data-token="(\d+)"', fixed)]
    assert marked == [t for t in range(len(spread)) if spread[t] > 0.05] and marked


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_page_transpose_bug(lang):
    at = open_app(lang, "app_pages/compare.py")
    assert not at.error and len(at.get("plotly_chart")) == 1            # d_k = d_v: runs, drawn (the steps are HTML)
    at.slider(key="compare_bug_dv").set_value(4).run()
    assert not at.exception and len(at.error) == 1 and any("broadcast" in c.value for c in at.code)
    at.slider(key="compare_bug_dk").set_value(4).run()
    assert not at.error and spec(at, 0)["data"][0]["type"] == "heatmap"


@pytest.mark.browser
def test_browser_compare_scrub_and_grid_click_change_the_readout(page, app_url):
    from devtools.app_server import open_page

    open_page(page, f"{app_url}/compare?lang=en&compare_stage=query")
    page.wait_for_selector(".gdn-readouts")
    before = page.inner_text(".gdn-readouts")
    page.locator(".gdn-slider").press("End")                      # the scrubber has the focus: End goes to the end
    page.wait_for_function(f"document.querySelector('.gdn-readouts')?.innerText !== {json.dumps(before)}")
    page.locator('.gdn-grid th.col[data-token="1"]').click()      # a token in the grid: go there, same stage
    page.wait_for_function("document.querySelector('.gdn-counter').textContent.startsWith('Step 10 of')")
    assert "compare_t=2" in page.url
    assert not page.problems, page.problems
