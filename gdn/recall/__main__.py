"""python -m gdn.recall --quick [--seed N]: train the quick setting's models on one CPU thread, one accuracy
per rule, the steps each trained and the wall time waited."""
import argparse
import time

import torch

from gdn.recall.models import RULES
from gdn.recall.quick import QUICK, QUICK_RULES, run_quick


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m gdn.recall", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="the page's 'train one now' setting: " + str(QUICK))
    parser.add_argument("--seed", type=int, default=0, help="weights and training batches (the test set is fixed)")
    parser.add_argument("--rules", default=",".join(QUICK_RULES), help=f"comma-separated, from {', '.join(RULES)}")
    parser.add_argument("--seconds", type=float, default=None, help="stop every rule at this wall time (default: none)")
    args = parser.parse_args(argv)
    if not args.quick:
        parser.error("only --quick runs here; the full sweep is python -m gdn.recall.sweep")
    torch.set_num_threads(1)
    start = time.perf_counter()
    rows = run_quick(args.rules.split(","), seed=args.seed, seconds=args.seconds)
    for rule, row in rows.items():
        cut = "" if row["steps_done"] == row["steps"] else f" of {row['steps']} planned: cut by --seconds"
        print(f"{rule:9s} accuracy {row['accuracy']:.3f}  ({row['steps_done']} steps{cut})")
    print(f"seed {args.seed}: {time.perf_counter() - start:.1f} s wall on one thread, rules trained side by side")


if __name__ == "__main__":      # walk_packages imports this module too (tests/test_boundaries.py)
    main()
