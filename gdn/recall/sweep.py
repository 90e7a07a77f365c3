"""The shipped MQAR results: every (rule, width, pairs, seed, learning rate) of a config, trained in
parallel worker processes, one result row per run written as it finishes.

    python -m gdn.recall.sweep --config assets/recall/config.json --out /tmp/recall --workers 12 --minutes 9

Writes runs.jsonl (every run, loss curve included, appended as runs finish, so a run cut short by the
time limit loses nothing already done), results.json (the rows the page reads) and, for the config's
"inspect" setting, the trained Gated DeltaNet model of each learning rate as safetensors. On one GPU
the tiny models leave it mostly idle (each step is a few hundred small kernel launches), so several
processes share it; each uses one CPU thread.
"""
from __future__ import annotations

import argparse
import itertools
import json
import multiprocessing as mp
import os
import time
from pathlib import Path

import torch
from safetensors.torch import save_file

from gdn.recall.train import RunConfig, train

ROW_KEYS = ("rule", "d", "pairs", "seq_len", "seed", "lr", "steps", "steps_done", "batch", "accuracy",
            "final_loss", "seconds")


def runs_of(config: dict) -> list[RunConfig]:
    """Every run of the grid in priority order: every setting once at the config's first learning rate
    and first seed, then the other learning rates, then the other seeds (a time limit cuts the least
    needed runs); within a round the costliest settings first."""
    grid = itertools.product(config["rules"], config["widths"], config["pairs"], config["seeds"], config["lrs"])
    runs = [RunConfig(rule=r, d=d, pairs=n, seq_len=config["seq_len"], steps=config["steps"], batch=config["batch"],
                      lr=lr, seed=s, eval_every=config.get("eval_every", 0), test_sequences=config["test_sequences"])
            for r, d, n, s, lr in grid]
    rank = lambda c: (config["seeds"].index(c.seed), config["lrs"].index(c.lr), -c.pairs, -c.d, c.rule)
    return sorted(runs, key=rank)


def _work(job):
    cfg, device, deadline, inspect, out = job
    torch.set_num_threads(1)
    if time.time() > deadline:
        return None
    model, row = train(cfg, device=device, should_stop=lambda: time.time() > deadline)
    if inspect and cfg.rule == "gdn" and (cfg.d, cfg.pairs, cfg.seed) == tuple(inspect):
        state = {k: v.detach().float().cpu().contiguous() for k, v in model.state_dict().items()}
        save_file(state, str(Path(out) / f"gdn_d{cfg.d}_pairs{cfg.pairs}_seed{cfg.seed}_lr{cfg.lr:g}.safetensors"))
    return row


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--config", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--workers", type=int, default=max(1, (os.cpu_count() or 2) - 2))
    p.add_argument("--minutes", type=float, default=18.0, help="stop starting and cut runs after this long")
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    args = p.parse_args(argv)
    config = json.loads(Path(args.config).read_text(encoding="utf-8"))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    start = time.time()
    deadline = start + 60 * args.minutes
    jobs = [(cfg, args.device, deadline, config.get("inspect"), str(out)) for cfg in runs_of(config)]
    rows = []
    with mp.get_context("spawn").Pool(args.workers) as pool, open(out / "runs.jsonl", "a", encoding="utf-8") as log:
        for row in pool.imap_unordered(_work, jobs):
            if row is None:
                continue
            rows.append(row)
            log.write(json.dumps(row) + "\n")
            log.flush()
            print(f"{time.time() - start:6.0f}s {row['rule']:9s} d={row['d']:3d} pairs={row['pairs']:3d} "
                  f"lr={row['lr']:g} seed={row['seed']} acc={row['accuracy']:.3f} ({row['seconds']:.0f}s, "
                  f"{row['steps_done']} steps)", flush=True)
    summary = {"config": config, "device": torch.cuda.get_device_name() if args.device == "cuda" else "cpu",
               "workers": args.workers, "wall_seconds": round(time.time() - start, 1), "torch": torch.__version__,
               "runs": len(jobs), "rows": [{k: r[k] for k in ROW_KEYS} for r in rows]}
    (out / "results.json").write_text(json.dumps(summary, indent=1), encoding="utf-8")
    print(f"done: {len(rows)} of {len(jobs)} runs in {summary['wall_seconds']} s")


if __name__ == "__main__":
    main()
