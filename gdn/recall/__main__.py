"""python -m gdn.recall --quick [--seed N] [--task update]: train the quick setting's models on one CPU thread.
MQAR prints one accuracy per rule; the update task one line per rule, `<rule> updated <acc> kept <acc> old
<rate>`: accuracy on rewritten keys (their latest value), on keys never rewritten, and how often a rewritten
key was answered with a value it held before. Then the steps each trained and the wall time waited."""
import argparse
import time

import torch

from gdn.recall.models import RULES
from gdn.recall.quick import QUICK, QUICK_RULES, run_quick
from gdn.recall.update import UPDATE_QUICK, UPDATE_RULES, run_update_quick, score_line


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m gdn.recall", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="the page's 'train one now' setting: MQAR "
                        f"{QUICK}; update {UPDATE_QUICK}")
    parser.add_argument("--task", choices=("mqar", "update"), default="mqar",
                        help="mqar: recall every pair; update: half the keys change value before they are asked")
    parser.add_argument("--seed", type=int, default=0, help="weights and training batches (the test set is fixed)")
    parser.add_argument("--rules", default=None, help=f"comma-separated, from {', '.join(RULES)} (default: "
                        f"{','.join(QUICK_RULES)} for mqar, {','.join(UPDATE_RULES)} for update)")
    parser.add_argument("--seconds", type=float, default=None, help="stop every rule at this wall time (default: none)")
    args = parser.parse_args(argv)
    if not args.quick:
        parser.error("only --quick runs here; the full sweeps are python -m gdn.recall.sweep and gdn.recall.update_sweep")
    rules = args.rules.split(",") if args.rules else QUICK_RULES if args.task == "mqar" else UPDATE_RULES
    unknown = [r for r in rules if r not in RULES]
    if unknown:
        parser.error(f"unknown rule {', '.join(unknown)}: choose from {', '.join(RULES)}")
    torch.set_num_threads(1)
    start = time.perf_counter()
    if args.task == "update":
        rows = run_update_quick(rules, seed=args.seed, seconds=args.seconds)
        for rule, row in rows.items():
            print(score_line(rule, row))
    else:
        rows = run_quick(rules, seed=args.seed, seconds=args.seconds)
        for rule, row in rows.items():
            print(f"{rule:9s} accuracy {row['accuracy']:.3f}")
    for rule, row in rows.items():
        cut = "" if row["steps_done"] == row["steps"] else f" of {row['steps']} planned: cut by --seconds"
        print(f"{rule:9s} {row['steps_done']} steps{cut}")
    print(f"seed {args.seed}: {time.perf_counter() - start:.1f} s wall on one thread, rules trained side by side")


if __name__ == "__main__":      # walk_packages imports this module too (tests/test_boundaries.py)
    main()
