"""What the shipped sweep says, as claims with their numbers: every sentence the recall page and REPORT.md
write about the results is one of these, filled in from results.json, so none can drift from the data
(tests/test_recall.py re-derives each from the rows by plain loops).

The cells are split by how the pairs compare with the memory's width d (a d x d state holds at most d
directions exactly):
    inside    pairs <= d / 2      room to spare: a delta rule should recall everything
    at        pairs == d          every direction taken
    beyond    pairs > d           more pairs than directions: something must be lost
"""
from __future__ import annotations

from dataclasses import dataclass, field

from gdn.recall.capacity import JUMPED, jumps
from gdn.recall.results import LEFT_CHANCE, REACH, SEED_SPREAD, median_reach

DELTA_RULES = ("deltanet", "gdn")
LEAD = 0.15                      # a rule "leads" when its mean is ahead by at least this (the seeds' allowed spread)


@dataclass(frozen=True)
class Finding:
    """One claim: `key` names its sentence (recall.finding_<key> in each language), `params` fills it."""
    key: str
    params: dict = field(default_factory=dict)


def region(d: int, pairs: int) -> str:
    return "inside" if 2 * pairs <= d else "at" if pairs == d else "beyond" if pairs > d else "between"


def _cells_in(cells: dict, rule: str, where: str, widths) -> list[tuple[int, int, dict]]:
    return sorted((d, n, c) for (r, d, n), c in cells.items() if r == rule and d in widths and region(d, n) == where)


def span(lo: float, hi: float) -> str:
    """'97–100' for a range of accuracies, '100' when both ends round alike."""
    lo, hi = round(lo * 100), round(hi * 100)
    return f"{lo}" if lo == hi else f"{lo}–{hi}"


def _span(cells: dict, rule: str, where: str, widths) -> tuple[float, float]:
    accs = [c["accuracy"] for _, _, c in _cells_in(cells, rule, where, widths)]
    return min(accs), max(accs)


def findings(cells: dict, config: dict, min_width: int = 32) -> list[Finding]:
    """The page's claims about the cells of widths >= min_width, in reading order."""
    widths = [d for d in config["widths"] if d >= min_width]
    rules = config["rules"]
    out = []
    if all(r in rules for r in ("linear", *DELTA_RULES)) and _cells_in(cells, "deltanet", "inside", widths):
        params = {r: span(*_span(cells, r, "inside", widths)) for r in ("linear", *DELTA_RULES)}
        gaps = {(d, n): round((min(cells[(r, d, n)]["accuracy"] for r in DELTA_RULES) - c["accuracy"]) * 100)
                for d, n, c in _cells_in(cells, "linear", "inside", widths)}   # weaker delta rule - linear, points
        least, most = min(gaps.values()), max(gaps.values())
        widest, narrowest = max(gaps, key=gaps.get), min(gaps, key=gaps.get)
        if least >= round(LEAD * 100):                      # the delta rules ahead by LEAD in every cell
            key, gap, (d, n) = "inside_lead", least, narrowest
        elif least >= 0 and most > 0:                       # never behind, ahead by at most `most`
            key, gap, (d, n) = "inside_close", most, widest
        elif least < 0 < most:                              # ahead in one cell, behind in another
            key, gap, (d, n) = "inside_mixed", most, widest
            params |= {"behind": -least, "d2": narrowest[0], "pairs2": narrowest[1]}
        elif most < 0:                                      # linear attention ahead in every cell
            key, gap, (d, n) = "inside_behind", -most, widest
        else:                                               # level everywhere, or level and behind
            key, gap, (d, n) = "inside_match", 0, widest
        out.append(Finding(key, params | {"gap": gap, "d": d, "pairs": n}))
        out += _sooner(cells, widths)
    for where in ("at", "beyond"):
        for d, n, _ in _cells_in(cells, "deltanet", where, widths):
            shown = [r for r in ("linear", *DELTA_RULES) if (r, d, n) in cells]
            first, second = sorted(shown, key=lambda r: -cells[(r, d, n)]["accuracy"])[:2]
            margin = cells[(first, d, n)]["accuracy"] - cells[(second, d, n)]["accuracy"]
            settled = all(cells[(r, d, n)]["status"] == "settled" for r in (first, second))
            clear = settled and margin >= LEAD              # else a "leader" would be one seed's luck
            accs = {r: round(cells[(r, d, n)]["accuracy"] * 100) for r in shown}
            out.append(Finding(f"{where}_{'lead' if clear else 'tie'}",
                               {"d": d, "pairs": n, **accs, "ahead": first, "lead": round(LEAD * 100)}))
    out += _jumps(cells, widths)
    softmax = [c for (r, d, _), c in cells.items() if r == "softmax" and d in widths and c["status"] == "settled"]
    if softmax:                                             # unsettled cells are listed below, not floored here
        out.append(Finding("softmax", {"lo": round(min(c["accuracy"] for c in softmax) * 100, 1)}))
    shown = [(r, d, n) for (r, d, n) in cells if d in widths]
    by_status = {s: sorted(k for k in shown if cells[k]["status"] == s) for s in ("unsettled", "split", "at_chance")}
    out.append(Finding("settled", {"settled": sum(cells[k]["status"] == "settled" for k in shown), "cells": len(shown),
                                   "unsettled": by_status["unsettled"], "split": by_status["split"],
                                   "chance": by_status["at_chance"], "spread": round(SEED_SPREAD * 100),
                                   "left": round(LEFT_CHANCE * 100)}))
    return out


def _sooner(cells: dict, widths) -> list[Finding]:
    """Steps to REACH inside capacity, from the curves: each rule's median over its inside cells' seeds (a
    seed that never got there counts as never). "Sooner" only when both delta rules' medians come first."""
    reach = {r: [s for _, _, c in _cells_in(cells, r, "inside", widths) for s in c.get("reach", [])]
             for r in ("linear", *DELTA_RULES)}
    if not all(reach.values()):
        return []
    median = {r: median_reach(steps) for r, steps in reach.items()}
    first = all(median[r] is not None and (median["linear"] is None or median[r] < median["linear"]) for r in DELTA_RULES)
    return [Finding("inside_sooner" if first else "inside_not_sooner",
                    {"reach": round(REACH * 100)} | {f"{r}_at": m for r, m in median.items()})]


def _jumps(cells: dict, widths) -> list[Finding]:
    """Per width, the cells at or past capacity trained with enough seeds to count (gdn/recall/capacity.py):
    how many of each cell's seeds made MQAR's jump, with the share's 95 % interval."""
    out = []
    for d in widths:
        counted = [(n, r, j) for (r, w, n), c in sorted(cells.items()) if w == d and r in ("linear", *DELTA_RULES)
                   and region(d, n) in ("at", "beyond") and (j := jumps(c))]
        if counted:
            rows = [{"rule": r, "pairs": n, "made": j["k"], "seeds": j["n"], "lo": round(j["lo"] * 100), "hi": round(j["hi"] * 100)}
                    for n, r, j in sorted(counted, key=lambda x: (x[0], ("linear", *DELTA_RULES).index(x[1])))]
            stayed = [a for (r, w, n), c in cells.items() if w == d and (n, r) in {(n, r) for n, r, _ in counted}
                      for a in c["seed_accuracies"] if a < JUMPED]
            out.append(Finding("jumps", {"d": d, "cells": rows, "jumped": round(JUMPED * 100),
                                         "stayed": round(max(stayed, default=0) * 100)}))
    return out


def sentence(f: Finding, tr) -> str:
    """The claim in words: tr(key, **fields) looks up the language's strings (the page's ui.tr, or
    gdn.i18n.t with a language for REPORT.md and the tests)."""
    rule = lambda r: tr(f"recall.rule_{r}")
    cells = lambda keys: ", ".join(tr("recall.cell_name", rule=rule(r), d=d, pairs=n) for r, d, n in keys) or tr("recall.none")
    params = dict(f.params)
    if f.key == "jumps":
        params["cells"] = tr("recall.jump_sep").join(tr("recall.jump_cell", **{**c, "rule": rule(c["rule"])})
                                                  for c in params["cells"])
        return tr("recall.finding_jumps", **params)
    if f.key == "settled":
        key = "settled_all" if params["settled"] == params["cells"] else "settled_some"
        params.update(unsettled=cells(params["unsettled"]), split=cells(params["split"]), chance=cells(params["chance"]))
        return tr(f"recall.finding_{key}", **params)
    if "ahead" in params:
        params["ahead"] = rule(params["ahead"])
    for r in ("linear", *DELTA_RULES):
        if f"{r}_at" in params:
            at = params[f"{r}_at"]
            params[f"{r}_at"] = tr("recall.never_reached") if at is None else tr("recall.at_step", step=at)
    return tr(f"recall.finding_{f.key}", **params)
