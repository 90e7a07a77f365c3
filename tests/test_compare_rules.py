"""A fourth rule on the compare page, registered at run time: the lesson's Rule (its update) and its two
strings in each language are all it takes. The compare page steps it beside the other three, the
playground's closed forms and colours take it by its properties, and nothing else needs to know its name.

A real fourth rule would touch three files: gdn/lessons/compare.py (its line in RULES) and
assets/i18n/{zh,en}/compare.json (compare.rule_short_<name>, compare.rule_<name>)."""
import re

import numpy as np
import pytest

from gdn import i18n
from gdn.figures.compare import VECTOR_ROWS, compare_step_html, error_grid_html
from gdn.figures.playground import fig_capacity
from gdn.figures.playground_html import repeated_html
from gdn.lessons import compare
from gdn.lessons import playground as ex
from gdn.lessons.memory import random_stream
from gdn.units import cell_text
from tests.apptest import open_app, player_payload
from tests.test_compare import closed_form, step_panels
from tests.test_memory_page import _Cells

# "Decay only": linear attention with a forget gate, S_t = alpha_t S_{t-1} + k_t (beta_t v_t)^T (RetNet, Mamba2).
DECAY = compare.Rule("decay", decays=True, delta=False, colour="#d97706")
STRINGS = {"en": {"compare.rule_short_decay": "Decay only", "compare.rule_decay": "S ← αS, then S += k(βv)ᵀ"},
           "zh": {"compare.rule_short_decay": "只衰减", "compare.rule_decay": "S ← αS，再 S += k(βv)ᵀ"}}


def _clear_compare_caches():
    from app_pages import _compare_frames

    _compare_frames.compare_run.clear()          # keyed by the example only: the rule list is fixed in a real server
    _compare_frames._packed.clear()


@pytest.fixture
def fourth_rule(monkeypatch):
    """The whole definition of a new rule: its Rule in compare.RULES and its two strings per language."""
    monkeypatch.setitem(compare.RULES, DECAY.name, DECAY)
    for lang, strings in STRINGS.items():
        for key, text in strings.items():
            monkeypatch.setitem(i18n.table(lang), key, text)
    _clear_compare_caches()
    yield DECAY
    _clear_compare_caches()                      # later tests see three rules again


def test_the_fourth_rule_runs_its_update(fourth_rule):
    s = random_stream(T=6, K=3, V=2, seed=4)
    assert np.ptp(s.alpha) > 0                                      # the decay is not a constant
    recs = compare.run_all(s)
    assert list(recs) == ["linear", "deltanet", "gdn", "decay"]
    np.testing.assert_allclose(recs["decay"].S_new[-1], closed_form("decay", s), atol=1e-12)
    S, want = s.S0.copy(), []                                       # by hand: fade, then add k (beta v)^T
    for t in range(6):
        S = s.alpha[t] * S + s.beta[t] * np.outer(s.k[t], s.v[t])
        want.append(S.T @ s.q[t])
    np.testing.assert_allclose(recs["decay"].output, want, atol=1e-12)
    assert not recs["decay"].prediction.any()                       # it never reads before writing
    assert np.abs(recs["decay"].output - recs["linear"].output).max() > 0.05      # the fade shows


def test_the_playground_closed_forms_take_its_properties(fourth_rule):
    """recall_errors and capacity_errors never name a rule: the new one is the decayed sum of k_i v_i^T,
    S = sum_i alpha^(N-i) k_i v_i^T, and both forms agree with it."""
    N, K, V, alpha = 40, 16, 8, 0.9
    keys, values = ex.capacity_stream(N, K, V, seed=2)
    S = np.einsum("n,nk,nv->kv", alpha ** np.arange(N - 1, -1, -1.0), keys, values)
    want = np.linalg.norm(keys @ S - values, axis=1) / np.linalg.norm(values, axis=1)
    np.testing.assert_allclose(ex.recall_errors("decay", keys, values, alpha=alpha), want, atol=1e-12)
    np.testing.assert_allclose(ex.capacity_errors("decay", N, K, V, alpha=alpha, seed=2), want, atol=1e-12)
    np.testing.assert_allclose(ex.capacity_errors("decay", N, K, V, alpha=1.0, seed=2),
                               ex.capacity_errors("linear", N, K, V, seed=2), atol=1e-12)
    with pytest.raises(ValueError, match="decay"):                 # the message lists the known rules
        ex.recall_errors("softmax", keys, values)


def test_the_figures_draw_it_in_its_colour(fourth_rule):
    Ns = np.array(ex.CAPACITY_NS[:4])
    curves = {r: ex.capacity_curve(r, 16, 16, alpha=0.9, Ns=tuple(Ns)) for r in (*ex.RULES, "decay")}
    labels = {"curve_title": "c", "split_title": "s", "knee": "k", "N": "N", "error": "e"}
    fig = fig_capacity(Ns, curves, 16, int(Ns[1]), rule_titles={r: r for r in curves}, split_labels=["a", "b", "c"],
                       labels=labels)
    colour = {t.name: t.line.color for t in fig.data if t.type == "scatter" and t.name in curves}
    assert colour == {r: compare.RULES[r].colour for r in curves} and colour["decay"] == DECAY.colour
    dist = {r: np.linspace(1, 0, 5) for r in ("deltanet", "decay")}
    svg = repeated_html(dist, rule_titles={r: r for r in dist}, labels={"x": "x", "y": "y"}, metrics=[])
    assert DECAY.colour in svg


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_compare_page_steps_four_rules(fourth_rule, lang):
    """The page itself, with nothing of it changed: four tables and vector panels per frame, the readouts
    name the new rule, and the error grid under the player has its row, computed from its records."""
    at = open_app(lang, "app_pages/compare.py", compare_preset="k1_update")
    assert not at.exception
    panels = step_panels(at)
    assert {"S_decay", "vectors_decay"} <= set(panels) and len(panels) == 8
    assert panels["vectors_decay"][0] == ["—", "—"]                 # no prediction: it never reads
    data, payload = player_payload(at, "compare_player")
    query = payload["frames"][2 * 5 + 4]["narration"]               # token 3, "query": k1 = (5, 0) fades the old (3, 1)
    assert STRINGS[lang]["compare.rule_short_decay"] in query
    p = compare.COMPARE_PRESETS["k1_update"]()
    err = compare.readout_error(compare.run_rule("decay", p.stream), p.target)
    cells = re.findall(r'data-rule="decay" style="[^"]*">([^<]*)</td>', payload["fixed"])
    assert cells == list(cell_text(err)) and err[2] > 0.1           # token 3 reads (6.5, 0.5), not (5, 0)


def test_the_compare_figures_draw_four_rules(fourth_rule):
    """The figure code as the frames call it: a table and a vector panel per rule, a grid row per rule,
    and the new rule's readout in its vector panel's output row."""
    p = compare.city_story()
    recs = compare.run_all(p.stream)
    titles = {r: r for r in recs}
    figure = compare_step_html(recs, p.target, 2, "query", titles=titles, row_labels={n: n for n in VECTOR_ROWS},
                               axis={"key": "k", "value": "v"})
    parser = _Cells()
    parser.feed(figure)
    assert sorted(parser.panels) == sorted(f"{kind}_{r}" for r in recs for kind in ("S", "vectors"))
    out = parser.panels["vectors_decay"][VECTOR_ROWS.index("output")]
    assert out == list(cell_text(recs["decay"].output[2]))
    errors = {r: compare.readout_error(rec, p.target) for r, rec in recs.items()}
    grid = error_grid_html(errors, compare.disagreements(errors), names=titles, corner="")
    assert grid.count('<tr><th class="row">') == 4 and 'data-rule="decay"' in grid
