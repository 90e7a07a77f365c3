"""Bench: checkpoint load + the first 64-token trace, ours vs transformers' from_pretrained + forward.

Same folder for both: random weights with the Qwen3.5-0.8B shapes (bench_qwen35.QWEN35_08B, bfloat16,
2 shards). Every run is a fresh process (a cold start, as a new server sees it), timed from after the
imports to the end of the first forward; the contenders alternate round by round so both see the same
load on a shared machine. Ours maps the machine's read-only copy of each weights file
(gdn/qwen35/snapshot.py), kept in a fresh GDN_WEIGHT_CACHE for this run: the copy is made by one load
before the rounds, timed and printed on its own ("first load on this machine"). `--before DIR` adds a
third contender: the same script against another checkout's gdn/ (e.g. main before this change),
measured in the same rounds. `--threads 1,2` runs every contender at each OMP_NUM_THREADS, all in the
same rounds (the thread-count decision of app.py).

    python bench/bench_load.py [--rounds 5] [--threads N[,M]] [--before /path/to/other/checkout] [--keep DIR]
    python bench/bench_load.py --smoke       # a tiny random checkpoint; CI runs this (tests/test_bench_smoke.py)
Goal (docs/architecture.md, Quality bars): ours <= 1.5x transformers.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

CHILD = r"""
import json, sys, time
impl, path, tokens = sys.argv[1], sys.argv[2], int(sys.argv[3])
import torch
if impl == "hf":
    import transformers
    from transformers import Qwen3_5ForCausalLM
    transformers.logging.set_verbosity_error()
    t0 = time.perf_counter()
    model = Qwen3_5ForCausalLM.from_pretrained(path, dtype=torch.bfloat16).eval()
    t1 = time.perf_counter()
    with torch.no_grad():
        model(torch.arange(tokens)[None], use_cache=False)
else:
    from gdn.qwen35 import load_model
    t0 = time.perf_counter()
    model = load_model(path, allow_any_folder=True)
    t1 = time.perf_counter()
    model.trace(torch.arange(tokens))
t2 = time.perf_counter()
print(json.dumps({"load_s": t1 - t0, "forward_s": t2 - t1, "total_s": t2 - t0}))
"""


def run_child(impl: str, code: Path, folder: Path, tokens: int, threads: int | None) -> dict:
    env = {**os.environ, "PYTHONPATH": str(code)}          # GDN_WEIGHT_CACHE: main's, for the whole run
    if threads:
        env["OMP_NUM_THREADS"] = str(threads)
    proc = subprocess.run([sys.executable, "-c", CHILD, impl, str(folder), str(tokens)], capture_output=True,
                          text=True, env=env, cwd=code)
    if proc.returncode:
        sys.exit(f"{impl} failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def make_folder(base: Path, smoke: bool) -> Path:
    from gdn.qwen35.synth import text_config, write_checkpoint
    if smoke:
        return write_checkpoint(base / "tiny", text_config(), seed=0, shards=2)
    from bench.bench_qwen35 import make_checkpoint
    folder = base / "qwen35-0.8b-random"
    make_checkpoint(folder)
    return folder


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--tokens", type=int, default=64)
    ap.add_argument("--threads", default="", help="OMP_NUM_THREADS values, comma-separated (default: torch's own)")
    ap.add_argument("--before", help="another checkout whose gdn/ is timed as 'before' in the same rounds")
    ap.add_argument("--keep", help="checkpoint folder to create or reuse (default: a temp dir)")
    ap.add_argument("--smoke", action="store_true")
    args = ap.parse_args()
    if args.smoke:
        args.rounds, args.tokens = 1, 8
    codes = {"ours": ROOT, "hf": ROOT, **({"before": Path(args.before).resolve()} if args.before else {})}
    threads = [int(t) for t in args.threads.split(",") if t] or [None]
    contenders = {(name if len(threads) == 1 else f"{name}@{t}"): (name, code, t)
                  for t in threads for name, code in codes.items()}
    with tempfile.TemporaryDirectory() as tmp, tempfile.TemporaryDirectory(prefix="gdn-weights-") as cache:
        os.environ["GDN_WEIGHT_CACHE"] = cache
        folder = make_folder(Path(args.keep or tmp), args.smoke)
        first = run_child("ours", ROOT, folder, args.tokens, threads[0])          # makes the machine's copy
        runs: dict[str, list[dict]] = {label: [] for label in contenders}
        for r in range(args.rounds):
            order = list(contenders) if r % 2 == 0 else list(contenders)[::-1]   # alternate who goes first
            for label in order:
                name, code, t = contenders[label]
                runs[label].append(run_child("hf" if name == "hf" else "ours", code, folder, args.tokens, t))
    print(f"checkpoint {folder.name}; {args.tokens}-token first trace; {args.rounds} rounds, fresh process each; "
          f"OMP_NUM_THREADS {args.threads or os.environ.get('OMP_NUM_THREADS', 'default')}")
    print(f"  ours, first load on this machine (copies the weights into the cache): {first['total_s']:.2f} s "
          f"(load {first['load_s']:.2f} s)")
    med = {}
    for label, rs in runs.items():
        med[label] = statistics.median(r["total_s"] for r in rs)
        all_s = ", ".join(f"{r['total_s']:.2f}" for r in rs)
        print(f"  {label:9s} load + first forward: median {med[label]:.2f} s (runs: {all_s}); load "
              f"{statistics.median(r['load_s'] for r in rs):.2f} s, forward {statistics.median(r['forward_s'] for r in rs):.2f} s")
    for t in threads:
        at = "" if len(threads) == 1 else f"@{t}"
        print(f"ratio load+trace{at}: ours / transformers = {med['ours' + at] / med['hf' + at]:.2f}x (goal <= 1.5x)")
        if "before" in codes:
            print(f"ratio load+trace{at}: before / transformers = {med['before' + at] / med['hf' + at]:.2f}x; "
                  f"before / ours = {med['before' + at] / med['ours' + at]:.2f}x")


if __name__ == "__main__":
    main()
