"""Bench: memory of the processes that serve one checkpoint, summed PSS over the checkpoint's file size.

What it runs (a stand-in for replicas, measured on the loader directly: a real replica's Streamlit server
and workers on a 2-core box would add a browser and minutes per replica): for each replica, one "server"
process that opens the checkpoint as the real-model page does (source.load: config, tokenizer and headers,
no weight; before issue 50 the server read every weight, `--before` runs that) and `--workers` "worker"
processes that load it and run a Run (work.model + one 64-token trace through every layer). All processes
are fresh (sys.executable, OMP_NUM_THREADS=1 as the app runs); once every one has finished its Run, the PSS
of each (proportional set size, /proc/PID/smaps_rollup: a page shared by n processes counts 1/n to each,
so the sum is what the machine holds for them) is read and summed. The weight cache (GDN_WEIGHT_CACHE) is a
fresh folder per measurement: the first worker makes the machine's copy.

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

CHILD = r"""
import sys, torch
role, path, tokens = sys.argv[1], sys.argv[2], int(sys.argv[3])
from gdn.qwen35 import load_model
model = load_model(path, lazy=True, allow_any_folder=True)
if role == "server-old":                    # the server before issue 50: every weight read (compute.model)
    model.load_layers(None)
elif role == "worker":                      # a worker's Run: the model loaded, every layer traced
    model.load_layers(None)
    model.trace(torch.arange(tokens) % model.cfg.vocab_size)
print("ready", flush=True)
sys.stdin.read()                            # hold everything until the parent has read the memory
"""


def pss_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
        if line.startswith("Pss:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError(f"no Pss line for process {pid}")


def measure(code: Path, folder: Path, replicas: int, workers: int, server_role: str, tokens: int) -> dict:
    """Start the processes, wait until each has done its part, read their PSS, end them."""
    roles = [role for _ in range(replicas) for role in [server_role] + ["worker"] * workers]
    with tempfile.TemporaryDirectory(prefix="gdn-weights-bench-") as cache:
        env = {**os.environ, "PYTHONPATH": str(code), "OMP_NUM_THREADS": "1", "GDN_WEIGHT_CACHE": cache}
        procs = [subprocess.Popen([sys.executable, "-c", CHILD, role, str(folder), str(tokens)], cwd=code, env=env,
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True) for role in roles]
        try:
            for p in procs:
                if p.stdout.readline().strip() != "ready":
                    sys.exit(f"a {roles[procs.index(p)]} process failed (returncode {p.wait()})")
            pss = [pss_bytes(p.pid) for p in procs]
        finally:
            for p in procs:
                p.stdin.close()
            for p in procs:
                p.wait()
    by_role: dict[str, list[int]] = {}
    for role, b in zip(roles, pss):
        by_role.setdefault(role, []).append(b)
    return {"total": sum(pss), "by_role": by_role}


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
    ap.add_argument("--replicas", default="1,4", help="replica counts, comma-separated")
    ap.add_argument("--workers", type=int, default=2, help="worker processes per replica (the app: its CPUs)")
    ap.add_argument("--before", help="another checkout (e.g. main before issue 50), measured at 1 replica")
    ap.add_argument("--tokens", type=int, default=64)
    ap.add_argument("--keep", help="checkpoint folder to create or reuse (default: a temp dir)")
    ap.add_argument("--smoke", action="store_true")
    args = ap.parse_args()
    if args.smoke:
        args.replicas, args.workers, args.tokens = "1,2", 1, 8
    with tempfile.TemporaryDirectory() as tmp:
        folder = make_folder(Path(args.keep or tmp), args.smoke)
        size = sum(p.stat().st_size for p in folder.glob("*.safetensors"))
        print(f"checkpoint {folder.name}: {size / 1e9:.2f} GB of safetensors; {args.workers} workers per replica, "
              f"{args.tokens}-token Run each; summed PSS / file size")
        runs = [("ours", ROOT, "server", int(r)) for r in args.replicas.split(",") if r]
        if args.before:
            runs.insert(0, ("before", Path(args.before).resolve(), "server-old", 1))
        for label, code, server_role, replicas in runs:
            got = measure(code, folder, replicas, args.workers, server_role, args.tokens)
            roles = ", ".join(f"{role} {sum(b) / len(b) / 1e9:.2f} GB each" for role, b in got["by_role"].items())
            print(f"  {label:6s} {replicas} replica(s), {len(sum(got['by_role'].values(), []))} processes: summed PSS "
                  f"{got['total'] / 1e9:.2f} GB = {got['total'] / size:.2f}x the checkpoint ({roles})")


if __name__ == "__main__":
    main()
