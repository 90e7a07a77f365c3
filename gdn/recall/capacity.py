"""The cells at and past capacity, with enough seeds to count: how often a model makes MQAR's jump there.

At width 32 with 32 or 64 pairs, seeds of one setting end far apart: one stays on the plateau (it predicts
the value tokens' format but not which value) while its sibling recalls 80-100 %. Three seeds cannot say how
often that happens, so those cells were trained again with eight seeds each (assets/recall/capacity32_config.json,
the shipped recipe and steps, on a GPU) and their runs replace the three-seed ones in the shipped results:

    python -m gdn.recall.sweep --config assets/recall/capacity32_config.json --out OUT --seconds 470 --tf32
    python -m gdn.recall.capacity OUT          # writes assets/recall/results.json and runs.jsonl

A seed "made the jump" when it ended at or above JUMPED. The seeds of these cells fall on either side of a
wide gap (on the plateau at most ~21 %, past it at least ~37 %), which tests/test_recall.py checks, so the
counts do not hang on where in the gap the line is drawn. The share is given with a Wilson score interval:
with eight seeds a count of 3 says "somewhere between 14 and 69 %", not "37.5 %".
"""
from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

from gdn.recall.results import RESULTS, RUNS, load, load_runs

CONFIG = RESULTS.parent / "capacity32_config.json"
JUMPED = 0.3                # a seed that ended at or above this accuracy made MQAR's jump
MIN_SEEDS = 8               # a cell is counted (jumps out of seeds) from this many seeds
Z95 = 1.959964              # the normal quantile of a two-sided 95 % interval


def wilson(k: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a share k / n: unlike p +- z sqrt(p(1-p)/n) it stays inside [0, 1] and
    is not zero-wide at 0 / n or n / n, which eight seeds often give."""
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)


def jumps(cell: dict) -> dict | None:
    """{"k": seeds that made the jump, "n": seeds, "lo", "hi": the 95 % interval of the share} at the cell's
    learning rate; None for a cell with fewer than MIN_SEEDS seeds."""
    accs = cell["seed_accuracies"]
    if len(accs) < MIN_SEEDS:
        return None
    k = sum(a >= JUMPED for a in accs)
    lo, hi = wilson(k, len(accs))
    return {"k": k, "n": len(accs), "lo": lo, "hi": hi}


def _cell(run: dict) -> tuple:
    return run["rule"], run["d"], run["pairs"]


def merged(summary: dict, runs: list[dict], extra: dict, extra_runs: list[dict]) -> tuple[dict, list[dict]]:
    """The shipped summary and runs with every cell the extra sweep trained replaced by its runs (all its
    learning rates and seeds). The summary's planned runs and stacks count both sweeps (the extra one's
    stacks marked "again": they trained cells anew); "replaced" says which cells came from where."""
    replaced = {_cell(r) for r in extra["rows"]}
    keep = lambda rows: [r for r in rows if _cell(r) not in replaced]
    dropped = len(summary["rows"]) - len(keep(summary["rows"]))
    out = dict(summary, rows=keep(summary["rows"]) + extra["rows"], runs=summary["runs"] - dropped + extra["runs"],
               stacks=summary["stacks"] + [s | {"again": True} for s in extra["stacks"]])
    out["replaced"] = {"cells": sorted([list(c) for c in replaced]), "config": extra["config"], "dropped": dropped}
    return out, keep(runs) + extra_runs


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description="Put a capacity sweep's cells (its --out folder) into the shipped results.")
    p.add_argument("sweep", type=Path, help="the sweep's --out folder (results.json, runs.jsonl)")
    p.add_argument("--into", type=Path, default=RESULTS.parent)
    args = p.parse_args(argv)
    extra, extra_runs = load(args.sweep / RESULTS.name), load_runs(args.sweep / RUNS.name)
    summary, runs = merged(load(args.into / RESULTS.name), load_runs(args.into / RUNS.name), extra, extra_runs)
    (args.into / RESULTS.name).write_text(json.dumps(summary), encoding="utf-8")      # as the sweep writes them
    (args.into / RUNS.name).write_text("".join(json.dumps(r) + "\n" for r in runs), encoding="utf-8")
    print(f"{len(summary['replaced']['cells'])} cells replaced; {len(summary['rows'])} rows, {len(runs)} runs")


if __name__ == "__main__":
    main()
