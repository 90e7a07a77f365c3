"""python -m gdn.recall --quick: train the quick setting's models on one CPU thread, one accuracy per rule."""
import argparse
import time

import torch

from gdn.recall.models import RULES
from gdn.recall.quick import QUICK, QUICK_RULES, run_quick


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m gdn.recall", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="the page's 'train one now' setting: " + str(QUICK))
    parser.add_argument("--rules", default=",".join(QUICK_RULES), help=f"comma-separated, from {', '.join(RULES)}")
    args = parser.parse_args(argv)
    if not args.quick:
        parser.error("only --quick runs here; the full sweep is python -m gdn.recall.sweep")
    torch.set_num_threads(1)
    start = time.perf_counter()
    for rule, row in run_quick(args.rules.split(",")).items():
        print(f"{rule:9s} accuracy {row['accuracy']:.3f}  ({row['steps_done']} steps, {row['seconds']:.1f} s)")
    print(f"total {time.perf_counter() - start:.1f} s on one thread")


if __name__ == "__main__":      # walk_packages imports this module too (tests/test_boundaries.py)
    main()
