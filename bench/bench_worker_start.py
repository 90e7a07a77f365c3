"""Bench: how long a worker of the job line takes to start (spawn, its initializer, work.warm), and whether
it imported Plotly on the way (issue 50: through caches.py every worker did, for nothing it ran).

Each start is a fresh server-like process that makes one Slot (app_pages/_support/workers.py) and waits
for its warm-up; this checkout and another one (--root: a before, e.g. `git archive HEAD | tar -x -C DIR`)
take turns, so a burst of load from elsewhere hits both alike. Workers run at one torch thread.

    python bench/bench_worker_start.py --root /tmp/before --repeats 5
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHILD = r"""
import json, sys, time
start = time.perf_counter()
from app_pages._support import work, workers
slot = workers.Slot(0)
slot.warm(work.warm).result()
ready = time.perf_counter() - start
plotly = slot.executor.submit(eval, "'plotly' in __import__('sys').modules").result()
slot.shutdown()
print(json.dumps({"ready_s": ready, "plotly": plotly}))
"""


def one_start(root: Path) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD], cwd=root, capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONPATH": str(root), "OMP_NUM_THREADS": "1"})
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", required=True, help="the other checkout (the before)")
    ap.add_argument("--repeats", type=int, default=5)
    a = ap.parse_args()
    runs = {"this": [], "other": []}
    for _ in range(a.repeats):                      # alternating
        for name, root in (("other", Path(a.root)), ("this", ROOT)):
            runs[name].append(one_start(root))
    for name, root in (("other", a.root), ("this", str(ROOT))):
        ready = [r["ready_s"] for r in runs[name]]
        print(f"{name:5} ({root}): worker ready in median {statistics.median(ready):.2f} s "
              f"(min {min(ready):.2f}, max {max(ready):.2f}, n={len(ready)}); Plotly imported: "
              f"{sorted({r['plotly'] for r in runs[name]})}")
    this, other = (statistics.median(r["ready_s"] for r in runs[k]) for k in ("this", "other"))
    print(f"this / other: {this / other:.2f}x")


if __name__ == "__main__":
    main()
