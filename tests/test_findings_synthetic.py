"""Findings that cannot lie (issue 48): every sentence the recall and update pages generate, checked on
synthetic results built to trip them (ties, reversals, one cell against the rest, cells that did not settle).
What may be said is derived here from what each sentence claims, not from the code's branches: for every
finding, the claim its key makes must hold of the numbers, and the numbers it quotes must be the cells'."""
import itertools
import statistics

import pytest

from gdn.i18n import t
from gdn.recall import findings as mqar
from gdn.recall import update_findings as upd

LEAD = 15     # points: "ahead" means ahead by this much (the seeds' allowed spread)


# --- MQAR: inside capacity ------------------------------------------------------------------------
def mqar_cells(accs: dict, status: str = "settled", reach: dict | None = None) -> dict:
    """accs: (d, pairs) -> {rule: accuracy}; every cell given `status` and per-seed steps to 90 %."""
    cells = {}
    for (d, n), by_rule in accs.items():
        for rule, acc in by_rule.items():
            cells[(rule, d, n)] = {"accuracy": acc, "status": status, "reach": (reach or {}).get(rule, [500, 500, 500])}
    return cells


def inside_claims(gaps: list[int]) -> set[str]:
    """Which inside-capacity sentences are true of these gaps (weaker delta rule minus linear attention, in
    whole points, one per inside cell), read off what each sentence says."""
    true = set()
    if all(g >= LEAD for g in gaps):
        true.add("inside_lead")                               # "ahead ... in every such cell, by at least"
    if all(g >= 0 for g in gaps) and any(g > 0 for g in gaps):
        true.add("inside_close")                              # "comes within {gap} points ... in every such cell"
    if any(g > 0 for g in gaps) and any(g < 0 for g in gaps):
        true.add("inside_mixed")                              # "no rule is ahead in every such cell"
    if all(g < 0 for g in gaps):
        true.add("inside_behind")                             # "linear attention is ahead ... in every such cell"
    if all(g <= 0 for g in gaps):
        true.add("inside_match")                              # "level with ... or ahead in every such cell"
    return true


GAP_CASES = [[30, 20], [10, 0], [0, 0], [-5, -20], [30, -40], [-30, 40, 0], [15, 14], [0, -3], [2]]


@pytest.mark.parametrize("gaps", GAP_CASES)
def test_the_inside_capacity_sentence_is_one_its_gaps_make_true(gaps):
    """The issue's case among them: linear attention 30 points behind in one cell and 40 ahead in another."""
    inside = [(64, n) for n in (4, 8, 16, 32)][:len(gaps)]
    accs = {cell: {"linear": 0.5, "deltanet": 0.5 + g / 100 + 0.02, "gdn": 0.5 + g / 100} for cell, g in zip(inside, gaps)}
    f = next(f for f in mqar.findings(mqar_cells(accs), {"widths": [64], "rules": ["linear", "deltanet", "gdn"]})
             if f.key.startswith("inside_") and "sooner" not in f.key)
    assert f.key in inside_claims(gaps), (gaps, f.key)
    quoted = {"inside_lead": min(gaps), "inside_close": max(gaps), "inside_mixed": max(gaps),
              "inside_behind": -max(gaps), "inside_match": 0}[f.key]
    assert f.params["gap"] == quoted
    if f.key == "inside_mixed":
        assert f.params["behind"] == -min(gaps)
        assert dict(zip(inside, gaps))[(f.params["d2"], f.params["pairs2"])] == min(gaps)
    for lang in ("en", "zh"):
        assert "{" not in mqar.sentence(f, lambda key, **p: t(key, lang, **p))


@pytest.mark.parametrize("reach, sooner", [
    ({"linear": [1000, 1250, None], "deltanet": [500, 500, 750], "gdn": [500, 750, 750]}, True),
    ({"linear": [500, 500, 500], "deltanet": [500, 500, 500], "gdn": [250, 250, 250]}, False),     # a tie is not sooner
    ({"linear": [None, None, 500], "deltanet": [250, 250, 250], "gdn": [None, None, None]}, False),  # gdn never got there
])
def test_learns_sooner_is_said_only_when_the_curves_show_it(reach, sooner):
    accs = {(64, 8): {"linear": 0.99, "deltanet": 1.0, "gdn": 1.0}}
    found = {f.key: f for f in mqar.findings(mqar_cells(accs, reach=reach),
                                             {"widths": [64], "rules": ["linear", "deltanet", "gdn"]})}
    key = "inside_sooner" if sooner else "inside_not_sooner"
    assert key in found
    never = 10 ** 9
    for rule, steps in reach.items():
        median = statistics.median(never if s is None else s for s in steps)
        assert found[key].params[f"{rule}_at"] == (None if median == never else median)
    text = mqar.sentence(found[key], lambda k, **p: t(k, "en", **p))
    assert ("learn sooner" in text and "not" not in text.split(":")[-1]) == sooner


# --- the update task ------------------------------------------------------------------------------
CONFIG = {"rules": ["softmax", "linear", "deltanet", "gdn"], "layers": [1, 2], "pairs": [6], "updates": [0, 1, 2, 4]}


def update_cells(updated: dict, *, old=None, status=None, reach=None) -> dict:
    """updated: (layers, updates) -> {rule: main score}. old: (layers, updates) -> {rule: old rate} (default:
    linear attention's misses all old values, the delta rules' none). status: cell key -> status."""
    cells = {}
    for (layers, u), by_rule in updated.items():
        for rule, score in by_rule.items():
            miss = 1 - score
            o = (old or {}).get((layers, u), {}).get(rule, miss if rule == "linear" else 0.0) if u else None
            key = (rule, layers, 6, u)
            cells[key] = {"updated": score if u else None, "kept": 0.95 if u else score, "old": o,
                          "status": (status or {}).get(key, "settled"), "reach": (reach or {}).get(rule, [100, 100, 100]),
                          "steps": 800}
    return cells


def grid(gap_of, base=0.5) -> dict:
    """Every (layers, updates) cell with linear attention at `base` and the delta rules gap_of(layers, u) above."""
    out = {}
    for layers, u in itertools.product(CONFIG["layers"], CONFIG["updates"]):
        g = gap_of(layers, u)
        out[(layers, u)] = {"softmax": 1.0, "linear": base, "deltanet": base + g + 0.01, "gdn": base + g}
    return out


def update_claims(gaps: list[float]) -> set[str]:
    true = set()
    if all(g >= LEAD / 100 for g in gaps):
        true.add("update_lead")                  # "both delta rules are ahead ... in all settings with rewrites"
    if all(g <= -LEAD / 100 for g in gaps):
        true.add("update_behind")                # "linear attention is ahead ... in all settings"
    if not all(g >= LEAD / 100 for g in gaps):
        true.add("update_mixed")                 # "no rule is ahead by {lead} points in every one"
    return true


@pytest.mark.parametrize("name, gap_of", [
    ("delta ahead everywhere", lambda n, u: 0.4),
    ("ahead except one setting", lambda n, u: 0.05 if u == 1 else 0.4),
    ("linear ahead everywhere", lambda n, u: -0.3),
    ("a reversal", lambda n, u: -0.3 if u == 4 else 0.3),
    ("a tie", lambda n, u: 0.0),
])
def test_the_rewrite_sentence_of_each_depth_is_true_of_every_setting_with_rewrites(name, gap_of):
    found = upd.findings(update_cells(grid(gap_of)), CONFIG)
    said = [f for f in found if f.key.startswith("update_")]
    assert [f.params["layers"] for f in said] == CONFIG["layers"]
    for f in said:
        gaps = [gap_of(f.params["layers"], u) for u in CONFIG["updates"] if u]
        assert f.key in update_claims(gaps), (name, f.key)
        assert (f.params["least"], f.params["most"]) == (round(min(gaps) * 100), round(max(gaps) * 100))
        assert f.params["settings"] == len(gaps)


def test_no_sentence_compares_a_cell_that_did_not_settle_and_the_settled_sentence_names_it():
    cells = update_cells(grid(lambda n, u: 0.4), status={("linear", 1, 6, 4): "unsettled", ("gdn", 2, 6, 0): "split"})
    found = upd.findings(cells, CONFIG)
    for f in found:                                          # the cells each sentence reads, all settled
        p = f.params
        if f.key.startswith(("update_", "old_")):
            assert p["layers"] != 1 or p["updates"] == 2      # one layer: 4 rewrites unsettled, so 2 is the most
            if f.key.startswith("update_"):
                assert p["settings"] == (2 if p["layers"] == 1 else 3)
        if f.key.startswith("control_"):
            assert p["layers"] == 1                           # two layers, no rewrites: seeds split
        if f.key.startswith("depth_"):
            assert p["updates"] == 2                          # the most rewrites settled at both depths
    status = next(f for f in found if f.key == "settled").params
    assert status["unsettled"] == [("linear", 1, 6, 4)] and status["split"] == [("gdn", 2, 6, 0)]
    assert (status["settled"], status["cells"]) == (len(cells) - 2, len(cells))
    for lang in ("en", "zh"):
        text = upd.sentence(next(f for f in found if f.key == "settled"), lambda k, **p: t(k, lang, **p))
        assert t("recall.rule_linear", lang) in text and "{" not in text


@pytest.mark.parametrize("old_rate, most", [(0.4, True), (0.1, False), (0.25, True)])
def test_the_blur_sentence_says_most_only_when_most_misses_are_old_values(old_rate, most):
    updated = grid(lambda n, u: 0.4)                       # linear attention 50 % right: 50 % wrong
    cells = update_cells(updated, old={(n, 4): {"linear": old_rate} for n in (1, 2)})
    f = next(f for f in upd.findings(cells, CONFIG) if f.key.startswith("old_") and f.params["layers"] == 1)
    share = old_rate / 0.5
    assert f.key == ("old_most" if share >= 0.5 else "old_some") and most == (share >= 0.5)
    assert f.params["share"] == round(share * 100) and f.params["linear"] == round(old_rate * 100)


@pytest.mark.parametrize("one, two, want", [(0.5, 0.1, "depth_closes"), (0.3, 0.3, "depth_same"), (0.1, 0.4, "depth_widens"),
                                             (0.3, 0.2, "depth_same")])
def test_the_depth_sentence_follows_the_gap_at_one_and_two_layers(one, two, want):
    f = next(f for f in upd.findings(update_cells(grid(lambda n, u: one if n == 1 else two)), CONFIG)
             if f.key.startswith("depth_"))
    closes, widens = one - two >= LEAD / 100, two - one >= LEAD / 100
    assert f.key == want == ("depth_closes" if closes else "depth_widens" if widens else "depth_same")
    assert (f.params["one"], f.params["two"]) == (round(one * 100), round(two * 100))


def test_the_control_sentence_says_level_only_when_the_rules_are_within_the_lead_without_rewrites():
    level = update_cells(grid(lambda n, u: 0.4 if u else 0.05))
    apart = update_cells(grid(lambda n, u: 0.4))
    keys = lambda cells: {f.key for f in upd.findings(cells, CONFIG) if f.key.startswith("control_")}
    assert keys(level) == {"control_level"} and keys(apart) == {"control_apart"}


@pytest.mark.parametrize("reach, sooner", [
    ({"linear": [None, 700, None], "deltanet": [200, 300, 200], "gdn": [300, 300, 400]}, True),
    ({"linear": [200, 200, 300], "deltanet": [200, 300, 200], "gdn": [100, 100, 100]}, False),
])
def test_update_learns_sooner_only_from_the_curves(reach, sooner):
    f = next(f for f in upd.findings(update_cells(grid(lambda n, u: 0.4), reach=reach), CONFIG) if "sooner" in f.key)
    assert f.key == ("sooner" if sooner else "not_sooner")
    for rule, steps in reach.items():
        m = statistics.median(10 ** 9 if s is None else s for s in steps)
        assert f.params[f"{rule}_at"] == (None if m == 10 ** 9 else m)
    for lang in ("en", "zh"):
        assert "{" not in upd.sentence(f, lambda k, **p: t(k, lang, **p))


@pytest.mark.parametrize("softmax, blurs", [(0.3, True), (0.85, False), (0.75, True)])
def test_softmax_is_said_to_blur_only_when_it_trails_both_delta_rules(softmax, blurs):
    updated = grid(lambda n, u: 0.4)                              # delta rules at 0.90 and 0.91
    for key in updated:
        updated[key]["softmax"] = softmax
    f = next(f for f in upd.findings(update_cells(updated), CONFIG) if f.key.startswith("softmax_") and f.params["layers"] == 1)
    behind = 0.9 - softmax
    assert (f.key == "softmax_blurs") == blurs == (behind >= LEAD / 100)
    assert f.params["behind"] == round(behind * 100)
