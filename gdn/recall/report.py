"""REPORT.md from a sweep's results: how it ran (read from results.json), the table of cells (each the
best learning rate's mean over seeds, every seed, the rate, a mark when not settled), the same claims the
page makes (gdn/recall/findings.py, in English) and each cell against what the papers lead one to expect.
The prose around them is in REPORT_TEMPLATE.md beside the results; nothing in it states a result.

    python -m gdn.recall.report --dir OUT                     # print the table and every run's curve
    python -m gdn.recall.report --dir assets/recall --write   # rewrite assets/recall/REPORT.md
"""
from __future__ import annotations

import argparse
from pathlib import Path

from gdn.i18n import t
from gdn.recall.findings import findings, region, sentence
from gdn.recall.results import (
    LEFT_CHANCE,
    SEED_SPREAD,
    SETTLE_MOVE,
    SETTLE_WINDOW,
    best_cells,
    cells_in,
    load,
    load_runs,
)
from gdn.recall.sweep import learning_rates

MARKS = {"settled": "", "split": " · **seeds disagree**", "at_chance": " · chance", "unsettled": " · **unsettled**"}


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


# What the papers lead one to expect of a cell, by rule and region, and the test that a cell agrees.
# Zoology: attention solves MQAR at every width. DeltaNet paper: DeltaNet near-perfect on Zoology's MQAR,
# ahead of the linear-attention family. Neither reports one head of width d at or past d pairs.
ATTENTION = ("≈ 100 % (Zoology)", lambda c, _: c["accuracy"] >= 0.99)
EXPECT = {
    ("softmax", "inside"): ATTENTION, ("softmax", "at"): ATTENTION, ("softmax", "beyond"): ATTENTION,
    ("deltanet", "inside"): ("near-perfect (DeltaNet paper)", lambda c, _: c["accuracy"] >= 0.95),
    ("gdn", "inside"): ("as DeltaNet (Gated DeltaNet paper)", lambda c, _: c["accuracy"] >= 0.95),
    ("linear", "inside"): ("below the delta rule (DeltaNet paper)",
                           lambda c, cells: c["accuracy"] < cells[("deltanet",) + c["at"]]["accuracy"] - 0.05),
}
NO_COUNTERPART = "no counterpart (no single head of this width at so many pairs)"


def papers_table(cells: dict, config: dict) -> str:
    lines = ["| rule | width × pairs | ours | the papers lead one to expect | agrees |", "|---|---|---|---|---|"]
    for (rule, d, n), cell in sorted(cells.items(), key=lambda kv: (config["rules"].index(kv[0][0]), kv[0][1], kv[0][2])):
        expect, holds = EXPECT.get((rule, region(d, n)), (NO_COUNTERPART, None))
        verdict = ("–" if holds is None else "not settled" if cell["status"] != "settled"
                   else "yes" if holds(cell | {"at": (d, n)}, cells) else "**no**")
        lines.append(f"| {rule} | {d} × {n} | {cell['accuracy'] * 100:.1f} % | {expect} | {verdict} |")
    return "\n".join(lines) + "\n"


def side_runs(folder: Path) -> dict:
    """The tables of the runs beside the sweep, each from its own results file: the pilot that chose the
    sweep's settings and two shorter runs of width 32 (their curves are not shipped, so cells rest on
    the seeds' final accuracies alone)."""
    out = {}
    for name, file in (("pilot", "pilot_results.json"), ("shorter", "shorter32_results.json"),
                       ("replicate", "replicate32_results.json")):
        summary = load(folder / file)
        out[name] = table(best_cells(summary["rows"]), summary["config"])
        out[f"{name}_steps"] = ", ".join(sorted({str(r["steps_done"]) for r in summary["rows"]}))
    return out


def across_runs(cells: dict, folder: Path) -> str:
    """Each width-32 cell the shipped run did not settle, its seeds in every run of width 32 (the shorter
    runs first): whether more steps brought them together is read here, not claimed in the template."""
    runs = [(load(folder / file), file) for file in ("replicate32_results.json", "shorter32_results.json")]
    runs = [(best_cells(summary["rows"]), summary["rows"][0]["steps_done"]) for summary, _ in runs]
    runs.append((cells, next(c["steps"] for (_, d, _), c in cells.items() if d == 32)))
    head = "| cell | " + " | ".join(f"{steps} steps" for _, steps in runs) + " |\n|---|" + "---|" * len(runs) + "\n"
    keys = sorted(k for k, c in cells.items() if k[1] == 32 and c["status"] not in ("settled", "at_chance"))
    seeds = lambda c: "/".join(pct(a) for a in c["seed_accuracies"]) + MARKS[c["status"]] if c else "–"
    lines = [f"| {rule} {d}×{n} | " + " | ".join(seeds(run.get((rule, d, n))) for run, _ in runs) + " |"
             for rule, d, n in keys]
    return head + "\n".join(lines) + "\n"


def again_text(summary: dict) -> str:
    """The cells trained again with more seeds (gdn/recall/capacity.py), in place of the sweep's: '' if none."""
    again = summary.get("replaced")
    if not again:
        return ""
    cells = ", ".join(f"{rule} {d}×{n}" for rule, d, n in again["cells"])
    runs = sum([r["rule"], r["d"], r["pairs"]] in again["cells"] for r in summary["rows"])
    return (f", except the cells {cells}, trained again with {len(again['config']['seeds'])} seeds each and the "
            f"same recipe (`assets/recall/capacity32_config.json`, merged by `gdn/recall/capacity.py`: "
            f"{runs} runs in place of the sweep's {again['dropped']})")


def report(summary: dict, cells: dict, template: str, folder: Path) -> str:
    config, stacks = summary["config"], summary["stacks"]
    en = lambda key, **fields: t(key, "en", **fields)
    steps = {r["d"]: r["steps_done"] for r in summary["rows"]}                # every member of a stack alike
    fields = dict(
        runs=len(summary["rows"]), planned=summary["runs"], rules=", ".join(config["rules"]),
        widths=", ".join(map(str, config["widths"])), pairs=", ".join(map(str, config["pairs"])),
        seeds=len(config["seeds"]), batch=config["batch"], seq_len=config["seq_len"], tests=config["test_sequences"],
        lrs="; ".join(f"{r} {', '.join(f'{x:g}' for x in learning_rates(config, r))}" for r in config["rules"]),
        steps=", ".join(f"{n} at width {d}" for d, n in sorted(steps.items())), steps_32=steps.get(32, "–"),
        device=stacks[0].get("device", "?"), torch=stacks[0].get("torch", "?"),
        tf32="TF32" if stacks[0].get("tf32") else "full float32",
        stacks="; ".join(f"width {s['d']}{' (the cells trained again)' if s.get('again') else ''}: {s['models']} models, "
                         f"{s['calibrated_ms_per_step']:.0f} ms a step, {s['seconds']:.0f} s" for s in stacks),
        spread=round(SEED_SPREAD * 100), window=round(SETTLE_WINDOW * 100), move=round(SETTLE_MOVE * 100),
        left=round(LEFT_CHANCE * 100), table=table(cells, config),
        findings="\n".join(f"- {sentence(f, en)}" for f in findings(cells, config)), papers=papers_table(cells, config),
        across=across_runs(cells, folder), again=again_text(summary))
    return template.format(**fields, **side_runs(folder))


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--dir", required=True, help="a sweep's output folder")
    p.add_argument("--write", action="store_true", help="write REPORT.md there from REPORT_TEMPLATE.md")
    args = p.parse_args(argv)
    summary, cells = cells_in(Path(args.dir))
    if args.write:
        folder = Path(args.dir)
        template = (folder / "REPORT_TEMPLATE.md").read_text(encoding="utf-8")
        (folder / "REPORT.md").write_text(report(summary, cells, template, folder), encoding="utf-8")
        return
    print(table(cells, summary["config"]))
    for run in load_runs(Path(args.dir) / "runs.jsonl"):
        curve = " ".join(pct(a) for _, a in run["curve"])
        print(f"{run['rule']:8s} d{run['d']} n{run['pairs']} s{run['seed']} lr{run['lr']:g}: {curve}")


if __name__ == "__main__":
    main()
