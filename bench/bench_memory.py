"""Bench: memory of the processes that serve one checkpoint, summed PSS over the checkpoint's file size.

What it runs, per replica: one process that opens the checkpoint as the real-model page does (source.load:
config, tokenizer and headers, no weight; before issue 50 the server read every weight, `--before` runs
that) and starts the app's own `--workers` worker processes (app_pages/_support/workers.py: forked from a
fork server that imported torch once), each running one Run as the page's job (work.gate_run: the model
loaded, a 64-token prompt through every layer). Not a Streamlit server: that would add a browser and
minutes per replica on a 2-core box, and a server's own memory beside its imports is small. `--direct`
runs the loader in plain fresh processes instead (a "server" and `--workers` "worker" processes side by
side, each importing torch itself). OMP_NUM_THREADS=1 as the app runs; once every replica has finished its
Runs, the PSS of every process of it (proportional set size, /proc/PID/smaps_rollup: a page shared by n
processes counts 1/n to each, so the sum is what the machine holds for them) is read and summed. The
weight cache (GDN_WEIGHT_CACHE) is a fresh folder per measurement: the first worker makes the machine's copy.

    python bench/bench_memory.py [--replicas 1,4] [--workers 2] [--before /path/to/other/checkout] [--keep DIR]
    python bench/bench_memory.py --smoke      # a tiny random checkpoint (tests/test_bench_smoke.py)
Goal (issue 50): a replica and its workers <= 1.5x the checkpoint's size; 4 replicas on one host <= 2x.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench.bench_load import make_folder  # noqa: E402  the same 0.8B-shaped (or --smoke tiny) checkpoint

CHILD = r"""
import sys, torch
role, path, tokens, workers = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
from gdn.qwen35 import load_model
model = load_model(path, lazy=True, allow_any_folder=True)
if role in ("server-old", "replica-old"):   # the server before issue 50: every weight read (compute.model)
    model.load_layers(None)
elif role == "worker":                      # a worker's Run: the model loaded, every layer traced
    model.load_layers(None)
    model.trace(torch.arange(tokens) % model.cfg.vocab_size)
if role.startswith("replica"):              # the app's own worker processes, one Run (the page's job) each
    from app_pages._support import work
    from app_pages._support.workers import Slot
    slots = [Slot(i) for i in range(workers)]
    ids = tuple(i % model.cfg.vocab_size for i in range(tokens))
    for done in [slot.submit(i + 1, work.gate_run, (path, ids)) for i, slot in enumerate(slots)]:
        done.result()
print("ready", flush=True)
sys.stdin.read()                            # hold everything until the parent has read the memory
"""


def pss_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
        if line.startswith("Pss:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError(f"no Pss line for process {pid}")


def process_tree(root: int) -> list[int]:
    """root and every process descended from it (a replica's fork server, its workers, the resource tracker)."""
    parent_of = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            parent_of[int(stat.parent.name)] = int(stat.read_text().rpartition(")")[2].split()[1])
        except (OSError, ValueError, IndexError):
            continue                               # a process that ended meanwhile
    tree, grown = [root], True
    while grown:
        more = [pid for pid, parent in parent_of.items() if parent in tree and pid not in tree]
        tree += more
        grown = bool(more)
    return tree


def measure(code: Path, folder: Path, replicas: int, workers: int, server_role: str, tokens: int) -> dict:
    """Start the processes, wait until each has done its part, read their PSS (with every process under
    them), end them. server_role "replica" / "replica-old": one process per replica that runs the app's
    workers (app_pages/_support/workers.py); else a server and `workers` worker processes side by side."""
    per_replica = [server_role] if server_role.startswith("replica") else [server_role] + ["worker"] * workers
    roles = [role for _ in range(replicas) for role in per_replica]
    with tempfile.TemporaryDirectory(prefix="gdn-weights-bench-") as cache:
        env = {**os.environ, "PYTHONPATH": str(code), "OMP_NUM_THREADS": "1", "GDN_WEIGHT_CACHE": cache}
        procs = [subprocess.Popen([sys.executable, "-c", CHILD, role, str(folder), str(tokens), str(workers)],
                                  cwd=code, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
                 for role in roles]
        try:
            for p in procs:
                if p.stdout.readline().strip() != "ready":
                    sys.exit(f"a {roles[procs.index(p)]} process failed (returncode {p.wait()})")
            trees = [process_tree(p.pid) for p in procs]
            pss = [sum(pss_bytes(pid) for pid in tree) for tree in trees]
        finally:
            for p in procs:
                p.stdin.close()
            for p in procs:
                p.wait()
    by_role: dict[str, list[int]] = {}
    for role, b in zip(roles, pss):
        by_role.setdefault(role, []).append(b)
    return {"total": sum(pss), "by_role": by_role, "processes": sum(len(tree) for tree in trees)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--replicas", default="1,4", help="replica counts, comma-separated")
    ap.add_argument("--workers", type=int, default=2, help="worker processes per replica (the app: its CPUs)")
    ap.add_argument("--before", help="another checkout (e.g. main before issue 50), measured at 1 replica")
    ap.add_argument("--tokens", type=int, default=64)
    ap.add_argument("--keep", help="checkpoint folder to create or reuse (default: a temp dir)")
    ap.add_argument("--direct", action="store_true",
                    help="the loader in plain processes (a server and its workers side by side) instead of a "
                         "replica running the app's own worker processes")
    ap.add_argument("--smoke", action="store_true")
    args = ap.parse_args()
    if args.smoke:
        args.replicas, args.workers, args.tokens = "1,2", 1, 8
    with tempfile.TemporaryDirectory() as tmp:
        folder = make_folder(Path(args.keep or tmp), args.smoke)
        size = sum(p.stat().st_size for p in folder.glob("*.safetensors"))
        print(f"checkpoint {folder.name}: {size / 1e9:.2f} GB of safetensors; {args.workers} workers per replica, "
              f"{args.tokens}-token Run each; summed PSS / file size")
        ours, old = ("server", "server-old") if args.direct else ("replica", "replica-old")
        runs = [("ours", ROOT, ours, int(r)) for r in args.replicas.split(",") if r]
        if args.before:
            runs.insert(0, ("before", Path(args.before).resolve(), old, 1))
        for label, code, server_role, replicas in runs:
            got = measure(code, folder, replicas, args.workers, server_role, args.tokens)
            roles = ", ".join(f"{role} {sum(b) / len(b) / 1e9:.2f} GB each" for role, b in got["by_role"].items())
            print(f"  {label:6s} {replicas} replica(s), {got['processes']} processes: summed PSS "
                  f"{got['total'] / 1e9:.2f} GB = {got['total'] / size:.2f}x the checkpoint ({roles})")


if __name__ == "__main__":
    main()
