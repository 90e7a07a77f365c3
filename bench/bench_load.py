"""Bench: checkpoint load + the first 64-token trace, ours vs transformers' from_pretrained + forward.

Same folder for both: random weights with the Qwen3.5-0.8B shapes (bench_qwen35.QWEN35_08B, bfloat16,
2 shards). Every run is a fresh process (a cold start, as a new server sees it), timed from after the
imports to the end of the first forward; the contenders alternate round by round so both see the same
load on a shared machine. `--before DIR` adds a third contender: the same script against another
checkout's gdn/ (e.g. main before this change), measured in the same rounds.

    python bench/bench_load.py [--rounds 5] [--threads N] [--before /path/to/other/checkout] [--keep DIR]
    python bench/bench_load.py --smoke       # a tiny random checkpoint; CI runs this (tests/test_bench_smoke.py)
Goal (ARCHITECTURE.md): ours <= 1.5x transformers.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
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
    env = {**os.environ, "PYTHONPATH": str(code)}
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
    ap.add_argument("--threads", type=int, help="OMP_NUM_THREADS for every contender (default: torch's own)")
    ap.add_argument("--before", help="another checkout whose gdn/ is timed as 'before' in the same rounds")
    ap.add_argument("--keep", help="checkpoint folder to create or reuse (default: a temp dir)")
    ap.add_argument("--smoke", action="store_true")
    args = ap.parse_args()
    if args.smoke:
        args.rounds, args.tokens = 1, 8
    contenders = {"ours": ROOT, "hf": ROOT}
    if args.before:
        contenders["before"] = Path(args.before).resolve()
    with tempfile.TemporaryDirectory() as tmp:
        folder = make_folder(Path(args.keep or tmp), args.smoke)
        runs: dict[str, list[dict]] = {name: [] for name in contenders}
        for r in range(args.rounds):
            order = list(contenders) if r % 2 == 0 else list(contenders)[::-1]   # alternate who goes first
            for name in order:
                runs[name].append(run_child("hf" if name == "hf" else "ours", contenders[name], folder, args.tokens,
                                            args.threads))
    print(f"checkpoint {folder.name}; {args.tokens}-token first trace; {args.rounds} rounds, fresh process each; "
          f"OMP_NUM_THREADS={args.threads or os.environ.get('OMP_NUM_THREADS', 'default')}")
    med = {}
    for name, rs in runs.items():
        med[name] = statistics.median(r["total_s"] for r in rs)
        all_s = ", ".join(f"{r['total_s']:.2f}" for r in rs)
        print(f"  {name:6s} load + first forward: median {med[name]:.2f} s (runs: {all_s}); load {statistics.median(r['load_s'] for r in rs):.2f} s, "
              f"forward {statistics.median(r['forward_s'] for r in rs):.2f} s")
    print(f"ratio load+trace: ours / transformers = {med['ours'] / med['hf']:.2f}x (goal <= 1.5x)")
    if "before" in med:
        print(f"ratio load+trace: before / transformers = {med['before'] / med['hf']:.2f}x; "
              f"before / ours = {med['before'] / med['ours']:.2f}x")


if __name__ == "__main__":
    main()
