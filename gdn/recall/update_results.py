"""The shipped update-task sweep (assets/recall_update/: config.json, results.json, runs.jsonl) as cells:
per (rule, layers, pairs, updates), the learning rate whose seeds did best, every seed's three scores and
whether the cell can be read as a result (the statuses of gdn/recall/results.py).

A cell's main score is what its questions test: the accuracy on rewritten keys (their latest value) where
keys were rewritten, else the accuracy on the keys (updates = 0: plain recall in the same layout, the
control). The old-value rate is the share of questions on rewritten keys answered with a value the key held
before: the blur of a memory that adds writes instead of replacing them.
"""
from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import numpy as np

from gdn.recall.results import SEED_SPREAD, SETTLE_MOVE, SETTLE_WINDOW

FOLDER = Path(__file__).resolve().parents[2] / "assets" / "recall_update"
SCORES = ("updated", "kept", "old")
REACH = 0.9                 # "steps to learn": the first eval at which the main score reaches this


def percent(x: float | None) -> str:
    """'45' for 0.45; '–' for a score nobody was asked (no rewritten keys)."""
    return "–" if x is None else f"{x * 100:.0f}"


def steps_by_rule(summary: dict) -> tuple[int, dict[str, int]]:
    """The steps most rules trained, and {rule: steps} of the rules trained otherwise (config "rule_steps")."""
    by_rule = {}
    for r in summary["rows"]:
        by_rule.setdefault(r["rule"], r["steps_done"])
    common = max(set(by_rule.values()), key=list(by_rule.values()).count)
    return common, {r: n for r, n in by_rule.items() if n != common}


def main_score(updates: int) -> str:
    return "updated" if updates else "kept"


def load(folder: Path = FOLDER) -> tuple[dict, list[dict]]:
    """The sweep's summary (results.json) and its runs with their curves (runs.jsonl)."""
    folder = Path(folder)
    summary = json.loads((folder / "results.json").read_text(encoding="utf-8"))
    runs = [json.loads(line) for line in (folder / "runs.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()]
    return summary, runs


def main_curve(run: dict) -> list[tuple[int, float]]:
    """[(step, main score)] from the run's score curve [(step, kept, updated, old)]."""
    at = 2 if run["updates"] else 1
    return [(point[0], point[at]) for point in run.get("score_curve", []) if point[at] is not None]


def first_reach(curve: list[tuple[int, float]], level: float = REACH) -> int | None:
    """The first step whose score is at least `level`, None if none was."""
    return next((step for step, score in curve if score >= level), None)


def cells_of(runs: list[dict], chance: float) -> dict[tuple[str, int, int, int], dict]:
    """(rule, layers, pairs, updates) -> {"updated", "kept", "old": means over the seeds (None where no such
    question), "seeds": {score: [per seed]}, "reach": [first step at REACH per seed], "lr", "steps",
    "status"}. A run whose best main score stays under 2 x chance never left chance."""
    by_lr = defaultdict(list)
    for r in runs:
        by_lr[(r["rule"], r["layers"], r["pairs"], r["updates"], r["lr"])].append(r)
    cells = {}
    for (rule, layers, pairs, updates, lr), group in sorted(by_lr.items()):
        group = sorted(group, key=lambda r: r["seed"])
        score = main_score(updates)
        mean = float(np.mean([r[score] for r in group]))
        key = (rule, layers, pairs, updates)
        if key in cells and cells[key][score] >= mean:
            continue
        seeds = {s: [r[s] for r in group] for s in SCORES}
        cells[key] = {s: (float(np.mean(v)) if None not in v else None) for s, v in seeds.items()} | {
            "seeds": seeds, "reach": [first_reach(main_curve(r)) for r in group], "lr": lr,
            "steps": min(r["steps_done"] for r in group), "status": status(group, 2 * chance)}
    return cells


def trend_settled(curve: list[tuple[int, float]], steps: int) -> bool:
    """Did the score stop moving? The least-squares line through the evals of the last SETTLE_WINDOW of the
    steps may rise or fall by at most SETTLE_MOVE across that window. A trend, not max - min as MQAR's
    curves are read: this test set asks a few hundred questions about rewritten keys, so one eval jitters
    by about 2 points (binomial noise) and a flat curve would never pass a max - min test."""
    start = steps * (1 - SETTLE_WINDOW)
    tail = [(s, a) for s, a in curve if s >= start]
    if len(tail) < 3:
        return False
    x, y = np.array([s for s, _ in tail], float), np.array([a for _, a in tail])
    slope = np.polyfit(x, y, 1)[0]
    return abs(slope * (steps - start)) <= SETTLE_MOVE


def status(group: list[dict], left_chance: float) -> str:
    """settled / split / at_chance / unsettled, as results.py defines them, on the main score's curves (a
    curve's settling read from its trend: trend_settled)."""
    walks = [main_curve(r) or [(r["steps_done"], r[main_score(r["updates"])])] for r in group]
    if all(max(score for _, score in walk) < left_chance for walk in walks):
        return "at_chance"
    finals = [r[main_score(r["updates"])] for r in group]
    if not all(trend_settled(walk, r["steps_done"]) for walk, r in zip(walks, group)):
        return "unsettled"
    return "split" if max(finals) - min(finals) > SEED_SPREAD else "settled"


def shipped() -> tuple[dict, dict]:
    """The shipped sweep's summary and cells."""
    summary, runs = load()
    return summary, cells_of(runs, 1 / summary["config"].get("values", 128))
