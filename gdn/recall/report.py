"""The sweep's cells as Markdown: one row per (width, pairs), one column per rule, each cell the best
learning rate's mean over seeds, every seed's accuracy, the rate, and a mark when the cell is not settled.

    python -m gdn.recall.report --dir OUT          # print the table of a sweep's OUT (results.json, runs.jsonl)
"""
from __future__ import annotations

import argparse
from pathlib import Path

from gdn.recall.results import best_cells, load, load_runs

MARKS = {"settled": "", "at_chance": " · chance", "unsettled": " · **unsettled**"}


def pct(x: float) -> str:
    return f"{x * 100:.0f}"


def cell_text(cell: dict) -> str:
    seeds = "/".join(pct(a) for a in cell["seed_accuracies"])
    return f"{cell['accuracy'] * 100:.1f} ({seeds}) @{cell['lr']:g}{MARKS[cell['status']]}"


def table(cells: dict, config: dict) -> str:
    rules = config["rules"]
    head = "| width | pairs | " + " | ".join(rules) + " |\n|---|---|" + "---|" * len(rules) + "\n"
    lines = []
    for d in config["widths"]:
        for n in config["pairs"]:
            row = [cell_text(cells[(r, d, n)]) if (r, d, n) in cells else "–" for r in rules]
            lines.append(f"| {d} | {n} | " + " | ".join(row) + " |")
    return head + "\n".join(lines) + "\n"


def cells_of(folder: Path) -> tuple[dict, dict]:
    summary = load(folder / "results.json")
    curves = {(r["rule"], r["d"], r["pairs"], r["seed"], r["lr"]): r["curve"] for r in load_runs(folder / "runs.jsonl")}
    return summary, best_cells(summary["rows"], curves)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--dir", required=True, help="a sweep's output folder")
    args = p.parse_args(argv)
    summary, cells = cells_of(Path(args.dir))
    print(table(cells, summary["config"]))
    for run in load_runs(Path(args.dir) / "runs.jsonl"):
        curve = " ".join(pct(a) for _, a in run["curve"])
        print(f"{run['rule']:8s} d{run['d']} n{run['pairs']} s{run['seed']} lr{run['lr']:g}: {curve}")


if __name__ == "__main__":
    main()
