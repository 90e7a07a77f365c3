"""What the update-task sweep says, as claims with their numbers (update_results.py's cells): the page's and
REPORT.md's sentences, each chosen by what its numbers allow (tests/test_update_findings.py derives which
may be said from synthetic results, independently of this code).

The comparisons are between the weaker of the two delta rules and linear attention, on rewritten keys (the
update task's point), read only from cells whose compared rules all settled; the rest are named by the
"settled" finding and never compared.
"""
from __future__ import annotations

from gdn.recall.findings import DELTA_RULES, LEAD, Finding
from gdn.recall.results import SEED_SPREAD, median_reach
from gdn.recall.update_results import REACH, main_score

COMPARED = ("linear", *DELTA_RULES)
MOSTLY = 0.5                # "most of its mistakes are old values" from this share of the wrong answers up


def pct(x: float) -> int:
    return round(x * 100)


def _settled(cells: dict, keys) -> bool:
    return all(k in cells and cells[k]["status"] == "settled" for k in keys)


def _most_rewrites(cells: dict, config: dict, rules, depths, pairs: int) -> int | None:
    """The most rewrites at which every cell of these rules and depths settled (None: no such setting):
    a sentence about "the most rewrites" quotes the most it can read."""
    settled = [u for u in config["updates"] if u and _settled(cells, [(r, n, pairs, u) for r in rules for n in depths])]
    return max(settled, default=None)


def _gap(cells: dict, layers: int, pairs: int, updates: int) -> float:
    """Weaker delta rule minus linear attention on the cell's main score."""
    score = main_score(updates)
    return min(cells[(r, layers, pairs, updates)][score] for r in DELTA_RULES) - cells[("linear", layers, pairs, updates)][score]


def findings(cells: dict, config: dict) -> list[Finding]:
    out = []
    pairs = max(config["pairs"])
    for layers in config["layers"]:
        most = _most_rewrites(cells, config, COMPARED, [layers], pairs)
        out += _rewrites(cells, config, layers, pairs, most) if most else []
        out += _old_values(cells, layers, pairs, most) if most else []
        out += _control(cells, config, layers, pairs)
        soft = _most_rewrites(cells, config, ("softmax", *DELTA_RULES), [layers], pairs)
        out += _softmax(cells, layers, pairs, soft) if soft else []
    both = _most_rewrites(cells, config, COMPARED, [1, 2], pairs) if {1, 2} <= set(config["layers"]) else None
    out += _depth(cells, config, pairs, both) if both else []
    out += _sooner(cells, config, pairs, max(config["updates"]))
    out.append(_status(cells))
    return out


def _rewrites(cells, config, layers, pairs, most_updates) -> list[Finding]:
    """Across every settled setting with rewrites: the delta rules ahead everywhere, behind everywhere, or neither."""
    shown = [u for u in config["updates"] if u and _settled(cells, [(r, layers, pairs, u) for r in COMPARED])]
    gaps = [_gap(cells, layers, pairs, u) for u in shown]
    least, most = min(gaps), max(gaps)
    key = "update_lead" if least >= LEAD else "update_behind" if most <= -LEAD else "update_mixed"
    at = {r: pct(cells[(r, layers, pairs, most_updates)]["updated"]) for r in COMPARED}
    return [Finding(key, at | {"layers": layers, "pairs": pairs, "updates": most_updates, "settings": len(shown),
                               "least": pct(least), "most": pct(most), "lead": pct(LEAD)})]


def _old_values(cells, layers, pairs, updates) -> list[Finding]:
    """How linear attention's misses on rewritten keys split between old values and anything else."""
    keys = [(r, layers, pairs, updates) for r in COMPARED]
    if not _settled(cells, keys):
        return []
    lin = cells[keys[0]]
    wrong = 1 - lin["updated"]
    if wrong <= 0:
        return []
    share = min(1.0, lin["old"] / wrong)
    return [Finding("old_most" if share >= MOSTLY else "old_some",
                    {"layers": layers, "updates": updates, "linear": pct(lin["old"]), "share": pct(share),
                     "wrong": pct(wrong), "deltanet": pct(cells[keys[1]]["old"]), "gdn": pct(cells[keys[2]]["old"])})]


def _control(cells, config, layers, pairs) -> list[Finding]:
    """updates = 0: the same layout with nothing rewritten. Are the rules level there?"""
    if 0 not in config["updates"] or not _settled(cells, [(r, layers, pairs, 0) for r in COMPARED]):
        return []
    accs = {r: cells[(r, layers, pairs, 0)]["kept"] for r in COMPARED}
    spread = max(accs.values()) - min(accs.values())
    return [Finding("control_level" if spread < LEAD else "control_apart",
                    {r: pct(a) for r, a in accs.items()} | {"layers": layers, "spread": pct(spread),
                                                            "lead": pct(LEAD), "ahead": max(accs, key=accs.get)})]


def _softmax(cells, layers, pairs, updates) -> list[Finding]:
    """Softmax attention keeps every token, yet these models give it no positions: does it read the latest
    write, or blend every write of the key as linear attention does?"""
    keys = [(r, layers, pairs, updates) for r in ("softmax", *DELTA_RULES)]
    if not _settled(cells, keys):
        return []
    soft = cells[keys[0]]
    behind = min(cells[k]["updated"] for k in keys[1:]) - soft["updated"]
    return [Finding("softmax_blurs" if behind >= LEAD else "softmax_reads",
                    {"layers": layers, "updates": updates, "softmax": pct(soft["updated"]), "old": pct(soft["old"]),
                     "behind": pct(behind)})]


def _depth(cells, config, pairs, updates) -> list[Finding]:
    """One layer against two: does a second layer let linear attention close the gap?"""
    if sorted(config["layers"])[:2] != [1, 2]:
        return []
    keys = [(r, n, pairs, updates) for r in COMPARED for n in (1, 2)]
    if not _settled(cells, keys):
        return []
    one, two = _gap(cells, 1, pairs, updates), _gap(cells, 2, pairs, updates)
    key = "depth_closes" if one - two >= LEAD else "depth_widens" if two - one >= LEAD else "depth_same"
    return [Finding(key, {"one": pct(one), "two": pct(two), "linear_one": pct(cells[("linear", 1, pairs, updates)]["updated"]),
                          "linear_two": pct(cells[("linear", 2, pairs, updates)]["updated"]), "updates": updates,
                          "lead": pct(LEAD)})]


def _sooner(cells, config, pairs, updates) -> list[Finding]:
    """Steps to REACH on rewritten keys (median over seeds; a seed that never got there counts as never), one
    layer. "Sooner" is said only when a delta rule's median is an earlier step than linear attention's."""
    keys = {r: (r, 1, pairs, updates) for r in COMPARED}
    if 1 not in config["layers"] or not all(k in cells for k in keys.values()):
        return []
    median = {r: median_reach(cells[k]["reach"]) for r, k in keys.items()}
    delta_first = all(median[r] is not None and (median["linear"] is None or median[r] < median["linear"])
                      for r in DELTA_RULES)
    return [Finding("sooner" if delta_first else "not_sooner",
                    {"reach": pct(REACH), "updates": updates, "steps": cells[keys["linear"]]["steps"]} |
                    {f"{r}_at": median[r] for r in COMPARED})]


def _status(cells) -> Finding:
    by = {s: sorted(k for k, c in cells.items() if c["status"] == s) for s in ("unsettled", "split", "at_chance")}
    return Finding("settled", {"settled": sum(c["status"] == "settled" for c in cells.values()), "cells": len(cells),
                               "spread": pct(SEED_SPREAD)} | by)


def sentence(f: Finding, tr) -> str:
    """The claim in words (tr: the page's ui.tr, or gdn.i18n.t with a language)."""
    params = dict(f.params)
    rule = lambda r: tr(f"recall.rule_{r}")
    if f.key == "settled":
        named = lambda keys: ", ".join(tr("update.cell_name", rule=rule(r), layers=n, updates=u)
                                       for r, n, _, u in keys) or tr("recall.none")
        key = "settled_all" if params["settled"] == params["cells"] else "settled_some"
        params.update({s: named(params[s]) for s in ("unsettled", "split", "at_chance")})
        return tr(f"update.finding_{key}", **params)
    if "ahead" in params:
        params["ahead"] = rule(params["ahead"])
    for r in COMPARED:
        if f"{r}_at" in params:
            at = params[f"{r}_at"]
            params[f"{r}_at"] = tr("update.never", steps=params["steps"]) if at is None else tr("update.at_step", step=at)
    return tr(f"update.finding_{f.key}", **params)
