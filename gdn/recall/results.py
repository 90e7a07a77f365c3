"""The shipped sweep (assets/recall/results.json and runs.jsonl) as the page's cells: per (rule, width,
pairs), the learning rate whose seeds did best on average (as the papers report sweeps), every seed's
accuracy at that rate, and whether the cell can be read as a result:

    settled     every seed's curve had stopped moving and the seeds agree (spread <= SEED_SPREAD)
    split       every seed's curve had stopped moving but the seeds ended apart: the outcome depends on
                the seed (training longer does not bring them together), so no ranking is read into it
    at chance   no seed ever left chance (its best test accuracy stayed under LEFT_CHANCE)
    unsettled   anything else: curves still moving at the end; a learner must not read a ranking into it

MQAR is learnt suddenly or not at all, so one seed can sit at chance while its sibling is at 100 %: the
mean alone would hide that, hence the seeds and the status.
"""
from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import numpy as np

RESULTS = Path(__file__).resolve().parents[2] / "assets" / "recall" / "results.json"
RUNS = RESULTS.parent / "runs.jsonl"
CHANCE = 1 / 128            # one of the 128 value tokens
LEFT_CHANCE = 0.05          # a run whose best test accuracy stays under this never left chance
SEED_SPREAD = 0.15          # seeds of a settled cell lie within this of each other
SETTLE_WINDOW = 0.25        # a settled curve moved by at most SETTLE_MOVE over this last share of training
SETTLE_MOVE = 0.02
STATUSES = ("settled", "split", "at_chance", "unsettled")
REACH = 0.9                 # "learns sooner" is read from the first eval at which a seed reaches this accuracy


def load(path: Path = RESULTS) -> dict:
    return json.loads(Path(path).read_text(encoding="utf-8"))


def load_runs(path: Path = RUNS) -> list[dict]:
    return [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]


def curve_settled(curve: list, steps: int) -> bool:
    """Did the test accuracy move by at most SETTLE_MOVE over the last SETTLE_WINDOW of the steps? The window
    opens at the last eval at or before its start, so evals every 250 of 1500 steps check 1000..1500."""
    start = max((s for s, _ in curve if s <= steps * (1 - SETTLE_WINDOW)), default=0)   # the eval the window opens at
    tail = [a for s, a in curve if s >= start]
    return len(tail) >= 2 and max(tail) - min(tail) <= SETTLE_MOVE


def best_cells(rows: list[dict], curves: dict | None = None) -> dict[tuple[str, int, int], dict]:
    """(rule, d, pairs) -> {"accuracy": mean over seeds at the best lr, "low" / "high": its worst and best
    seed, "seed_accuracies" [seed order], "lr", "seeds", "lrs_tried", "steps", "status"}. curves maps
    (rule, d, pairs, seed, lr) to that run's [(step, accuracy)]; without it the status rests on the
    final accuracies alone (seeds apart are "unsettled": with no curve, "split" cannot be told)."""
    by_lr = defaultdict(list)
    for r in rows:
        by_lr[(r["rule"], r["d"], r["pairs"], r["lr"])].append(r)
    cells = {}
    for (rule, d, pairs, lr), runs in by_lr.items():
        runs = sorted(runs, key=lambda r: r["seed"])
        acc = float(np.mean([r["accuracy"] for r in runs]))
        cell = cells.setdefault((rule, d, pairs), {"accuracy": -1.0, "lrs_tried": []})
        cell["lrs_tried"].append(lr)
        if acc > cell["accuracy"]:
            accs = [r["accuracy"] for r in runs]
            cell.update(accuracy=acc, low=min(accs), high=max(accs), seed_accuracies=accs, lr=lr, seeds=len(runs),
                        steps=min(r["steps_done"] for r in runs), status=_status(runs, curves))
            if curves is not None:          # each seed's first eval at REACH (None: never), for "learns sooner"
                cell["reach"] = [next((s for s, a in curves.get(_key(r), []) if a >= REACH), None) for r in runs]
    return cells


def median_reach(steps: list[int | None]) -> int | None:
    """The median of seeds' first steps at REACH, a seed that never got there counting as later than any
    (None: the median seed never got there)."""
    never = float("inf")
    m = float(np.median([never if s is None else s for s in steps]))
    return None if m == never else int(m)


def _key(run: dict) -> tuple:
    return run["rule"], run["d"], run["pairs"], run["seed"], run["lr"]


def _status(runs: list[dict], curves: dict | None) -> str:
    keyed = [_key(r) for r in runs]
    walks = [curves[k] if curves and k in curves else [(r["steps_done"], r["accuracy"])] for k, r in zip(keyed, runs)]
    if all(max(a for _, a in walk) < LEFT_CHANCE for walk in walks):
        return "at_chance"
    accs = [r["accuracy"] for r in runs]
    apart = max(accs) - min(accs) > SEED_SPREAD
    if curves is None:                      # final accuracies alone: whether a curve still moved is unknown
        return "unsettled" if apart else "settled"
    if not all(curve_settled(walk, r["steps_done"]) for walk, r in zip(walks, runs)):
        return "unsettled"
    return "split" if apart else "settled"


def cells_in(folder: Path) -> tuple[dict, dict]:
    """A sweep's folder (results.json, runs.jsonl) -> its summary and its cells, each run's curve read
    for its status."""
    summary = load(Path(folder) / RESULTS.name)
    curves = {(r["rule"], r["d"], r["pairs"], r["seed"], r["lr"]): r["curve"] for r in load_runs(Path(folder) / RUNS.name)}
    return summary, best_cells(summary["rows"], curves)


def shipped_cells() -> dict[tuple[str, int, int], dict]:
    """The shipped sweep's cells."""
    return cells_in(RESULTS.parent)[1]


def grid(cells: dict, rules, widths, pairs, key: str = "accuracy", missing=np.nan) -> np.ndarray:
    """[rules, widths, pairs] of a cell's `key` (accuracy, low, high, status), `missing` where no run
    finished (an object array when that or the key is not a number)."""
    numeric = isinstance(missing, float) and key != "status"
    out = np.full((len(rules), len(widths), len(pairs)), missing, dtype=float if numeric else object)
    for i, r in enumerate(rules):
        for j, d in enumerate(widths):
            for k, n in enumerate(pairs):
                if (r, d, n) in cells:
                    out[i, j, k] = cells[(r, d, n)][key]
    return out


def seed_grid(cells: dict, rules, widths, pairs) -> np.ndarray:
    """[rules, widths, pairs, most seeds] every seed's accuracy at the cell's best lr, NaN-padded."""
    S = max((len(c["seed_accuracies"]) for c in cells.values()), default=0)
    out = np.full((len(rules), len(widths), len(pairs), S), np.nan)
    for (r, d, n), c in cells.items():
        if r in rules and d in widths and n in pairs:
            accs = c["seed_accuracies"]
            out[list(rules).index(r), list(widths).index(d), list(pairs).index(n), :len(accs)] = accs
    return out


def status_grid(cells: dict, rules, widths, pairs) -> np.ndarray:
    """[rules, widths, pairs] each cell's status (object array), "unsettled" where no run finished."""
    return grid(cells, rules, widths, pairs, key="status", missing="unsettled")
