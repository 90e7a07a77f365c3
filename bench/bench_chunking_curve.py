"""Measure the chunking page's reference curve: seconds per call of the token loop and of the chunked
kernel against sequence length, for one head of Qwen3.5's size, and write it to assets/.

    python bench/bench_chunking_curve.py                  # 1 thread, T = 1 .. 8192, writes the asset
    python bench/bench_chunking_curve.py --threads 2 --out /tmp/curve.json
    python bench/bench_chunking_curve.py --smoke          # tiny sizes, prints only (checks that it runs)

The page shows this curve at once and runs a short live measurement on its own server beside it, so a
learner sees both the full range and what this machine does today. Both kernels are timed in turn in
the same run (gdn.timing.time_kernels), so every printed ratio compares like with like.
The JSON names the machine it was measured on; rerun this script on the machine you teach from to
replace it.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from anywhere without installing
from gdn import timing as kernel_timing
from gdn.lessons import chunking as ce

LENGTHS = [2 ** p for p in range(0, 14)]          # 1 .. 8192 tokens


def cpu_name() -> str:
    """The CPU's model name from /proc/cpuinfo (Linux), else what platform reports."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def core_count() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()


def machine(threads: int) -> str:
    """The machine in full, for whoever reads the file (the page shows only cores and threads)."""
    cores = core_count()
    return (f"{cores}-core {platform.machine()} CPU ({cpu_name()}), torch {torch.__version__.split('+')[0]}, "
            f"{threads} thread{'s' if threads > 1 else ''}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--out", type=Path, default=kernel_timing.REFERENCE_FILE)
    ap.add_argument("--smoke", action="store_true", help="T = 1, 2, 64 with 2 repeats; nothing written")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    lengths, repeats = ([1, 2, 64], 2) if args.smoke else (LENGTHS, args.repeats)
    timing = kernel_timing.time_kernels(lengths, repeats=repeats,
                             progress=lambda i, n: print(f"  {i}/{n} lengths", file=sys.stderr, flush=True))
    for T, rec, chunk in zip(timing["T"], timing["recurrent"], timing["chunk"]):
        print(f"T={T:5d}  recurrent {rec * 1e3:9.3f} ms  chunk {chunk * 1e3:9.3f} ms  "
              f"ratio recurrent / chunk = {rec / chunk:.2f}x")
    print(f"crossover: chunk faster from T = {ce.crossover_length(timing)}; "
          f"token loop faster up to T = {ce.loop_wins_up_to(timing)}")
    if args.smoke:
        return
    data = {"machine": machine(args.threads), "cores": core_count(), "threads": args.threads, "measured": datetime.date.today().isoformat(),
            "heads": kernel_timing.TIMING_HEADS, "dim": kernel_timing.TIMING_DIM,
            "chunk_size": kernel_timing.CHUNK_SIZE, "dtype": "float32",
            "repeats": repeats, "statistic": "median seconds per call",
            "timing": {"T": [int(T) for T in timing["T"]], "recurrent": [float(x) for x in timing["recurrent"]],
                       "chunk": [float(x) for x in timing["chunk"]]}}
    args.out.write_text(json.dumps(data, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
