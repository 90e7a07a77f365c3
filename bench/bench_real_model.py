"""Bench: the real-model page's path from "Run" to the first figure, and its peak memory.

For each prompt length: encode -> gate_run (every GDN layer, chunked kernel; no state norms: the page
computes those for the one layer it shows, on demand) -> the α
heatmap figure serialised to JSON (what Streamlit sends). Each length runs in its own subprocess, so the
peak RSS is that run's own; "peak over load" is the peak minus the RSS right after the model loaded.

    python bench/bench_real_model.py                    # the shipped trained demo (the app's default model)
    python bench/bench_real_model.py --model random     # the shipped random-weight demo
    python bench/bench_real_model.py --model 0.8b       # random weights in Qwen3.5-0.8B shapes (temp dir)
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

TEXT = ("The password is 4821. We walked to the market and talked about the rain. The password is now 7730. "
        "记忆会衰减，新的写入会覆盖旧的。 ")


def rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def child(folder: str, tokens: int) -> dict:
    import numpy as np
    import torch

    from gdn.figures.real_model import fig_gate_pair
    from gdn.qwen35 import load_model
    from gdn.qwen35.analysis import gate_run
    torch.set_num_threads(int(os.environ.get("BENCH_THREADS", "2")))
    model = load_model(folder, allow_any_folder=True)
    gate_run(model, list(range(1, 9)))                                     # warm-up
    base = rss()
    labels = {"token": "token", "layer": "layer", "head": "head"}
    start = time.perf_counter()
    ids = model.tokenizer.encode(TEXT * 400, max_tokens=tokens).ids if model.tokenizer else list(range(1, tokens + 1))
    run = gate_run(model, ids)
    pieces = [str(i) for i in ids]
    alpha = np.exp(run.g[0])
    fig = fig_gate_pair(alpha, alpha, tokens=pieces, layer=run.layers[0], name="α", titles=["α", "α"], labels=labels)
    fig.to_json()
    first = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    return {"tokens": len(ids), "first_figure_s": round(first, 3), "peak_rss_mb": round(peak / 1e6),
            "peak_over_load_mb": round((peak - base) / 1e6)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="trained", choices=["trained", "random", "0.8b"])
    ap.add_argument("--tokens", default="64,512,2048")
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        print(json.dumps(child(a.child[0], int(a.child[1]))))
        return
    with tempfile.TemporaryDirectory() as tmp:
        if a.model in ("trained", "random"):
            from gdn.qwen35.sources import DEMO_PATH, TRAINED_PATH
            folder = str(TRAINED_PATH if a.model == "trained" else DEMO_PATH)
        else:
            sys.path.insert(0, str(Path(__file__).resolve().parent))
            from bench_qwen35 import QWEN35_08B

            from gdn.qwen35.synth import text_config, write_checkpoint
            folder = str(write_checkpoint(Path(tmp) / "q08b", text_config(**QWEN35_08B), seed=0, shards=2))
        for n in a.tokens.split(","):
            out = subprocess.run([sys.executable, __file__, "--child", folder, n], capture_output=True, text=True)
            print(out.stdout.strip() or out.stderr[-2000:], flush=True)


if __name__ == "__main__":
    main()
