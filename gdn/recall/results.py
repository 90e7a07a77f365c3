"""The shipped sweep (assets/recall/results.json) as the page's tables: per (rule, width, pairs), the best
learning rate's accuracy (averaged over the seeds that ran at that rate), as the papers report sweeps,
with the lowest and highest seed at that rate (MQAR training either leaves chance or stays there, so
two seeds of one cell can differ by the whole scale)."""
from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import numpy as np

RESULTS = Path(__file__).resolve().parents[2] / "assets" / "recall" / "results.json"


def load(path: Path = RESULTS) -> dict:
    return json.loads(Path(path).read_text(encoding="utf-8"))


def best_cells(rows: list[dict]) -> dict[tuple[str, int, int], dict]:
    """(rule, d, pairs) -> {"accuracy": mean over seeds at the best lr, "low" / "high": its worst and best
    seed, "lr", "seeds", "lrs_tried", "steps"}."""
    by_lr = defaultdict(list)
    for r in rows:
        by_lr[(r["rule"], r["d"], r["pairs"], r["lr"])].append(r)
    cells = {}
    for (rule, d, pairs, lr), runs in by_lr.items():
        acc = float(np.mean([r["accuracy"] for r in runs]))
        cell = cells.setdefault((rule, d, pairs), {"accuracy": -1.0, "lrs_tried": []})
        cell["lrs_tried"].append(lr)
        if acc > cell["accuracy"]:
            accs = [r["accuracy"] for r in runs]
            cell.update(accuracy=acc, low=min(accs), high=max(accs), lr=lr, seeds=len(runs),
                        steps=min(r["steps_done"] for r in runs))
    return cells


def grid(cells: dict, rules, widths, pairs, key: str = "accuracy") -> np.ndarray:
    """[rules, widths, pairs] of a cell's `key` (accuracy, low, high), NaN where no run finished."""
    out = np.full((len(rules), len(widths), len(pairs)), np.nan)
    for i, r in enumerate(rules):
        for j, d in enumerate(widths):
            for k, n in enumerate(pairs):
                if (r, d, n) in cells:
                    out[i, j, k] = cells[(r, d, n)][key]
    return out
