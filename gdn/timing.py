"""Timing the token loop against the chunked kernel (what the chunking page's live measurement runs, in a
worker process at one thread: app_pages/_support/work.py), and the shipped reference curve.

    time_kernels(lengths)             median seconds of both kernels per length (they take turns)
    load_reference()                  the curve bench/bench_chunking_curve.py measured and shipped
    estimate_seconds(reference)       how long a live run took on the reference machine

Not a lesson: the page reads these numbers (gdn.lessons.chunking.crossover_length says what they show),
and bench/ measures with the same function.
"""
from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import torch

from gdn.ops.chunk import CHUNK_SIZE, chunk_gated_delta_rule
from gdn.ops.naive import recurrent_gated_delta_rule

# The speed comparison times one head of Qwen3.5's size: a single head shows both regimes. The token loop
# pays per token, the chunked form pays a fixed set-up per chunk (the C x C matrices and one triangular
# solve), so for a few tokens the loop is faster and from a few dozen on the chunks are (bench/ measured).
TIMING_HEADS, TIMING_DIM = 1, 128
REFERENCE_FILE = Path(__file__).resolve().parents[1] / "assets" / "chunking_reference.json"
# Short enough to finish in seconds on a busy 2-core server, wide enough to hold both regimes.
LIVE_LENGTHS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048)
LIVE_REPEATS = 5


def time_kernels(lengths: list[int], *, heads: int = TIMING_HEADS, dim: int = TIMING_DIM, repeats: int = 3,
                 chunk_size: int = CHUNK_SIZE, progress=None) -> dict[str, np.ndarray]:
    """Median seconds of both kernels (float32, CPU, B=1) for each length; progress(i, n) if given.
    The two kernels take turns, repeat after repeat, so a burst of load from elsewhere hits both alike."""
    results = {"T": np.array(lengths), "recurrent": [], "chunk": []}
    gen = torch.Generator().manual_seed(0)
    small = [torch.randn(1, 8, 1, dim, generator=gen) for _ in range(3)]
    for kernel in (recurrent_gated_delta_rule, chunk_gated_delta_rule):    # warm-up: first calls pay setup
        kernel(*small, g=-torch.rand(1, 8, 1), beta=torch.rand(1, 8, 1))
    kernels = (("recurrent", recurrent_gated_delta_rule, {}),
               ("chunk", chunk_gated_delta_rule, {"chunk_size": chunk_size}))
    for i, T in enumerate(lengths):
        q, k, v = (torch.randn(1, T, heads, dim, generator=gen) for _ in range(3))     # [1, T, H, d]
        g, beta = -torch.rand(1, T, heads, generator=gen), torch.rand(1, T, heads, generator=gen)
        runs = {name: [] for name, _, _ in kernels}
        for _ in range(repeats):
            for name, kernel, kw in kernels:
                start = time.perf_counter()
                kernel(q, k, v, g=g, beta=beta, use_qk_l2norm_in_kernel=True, **kw)
                runs[name].append(time.perf_counter() - start)
        for name in runs:
            results[name].append(float(np.median(runs[name])))
        if progress:
            progress(i + 1, len(lengths))
    return {name: np.array(x) for name, x in results.items()}


def load_reference(path: Path = REFERENCE_FILE) -> dict:
    """The reference curve bench/bench_chunking_curve.py measured: {"machine": str (in full), "cores", "threads",
    "measured": date,
    "heads", "dim", "chunk_size", "repeats", "timing": {"T", "recurrent", "chunk"} as arrays}."""
    data = json.loads(path.read_text(encoding="utf-8"))
    data["timing"] = {name: np.array(data["timing"][name], dtype=np.float64 if name != "T" else np.int64)
                      for name in ("T", "recurrent", "chunk")}
    return data


def estimate_seconds(reference: dict, lengths=LIVE_LENGTHS, repeats: int = LIVE_REPEATS) -> float:
    """Seconds a live run of `lengths` took on the reference machine: both kernels, every repeat, read off
    the reference curve (interpolated on log-log axes between its measured lengths)."""
    ref = reference["timing"]
    logT = np.log(ref["T"].astype(float))
    per_call = sum(np.exp(np.interp(np.log(lengths), logT, np.log(ref[name]))) for name in ("recurrent", "chunk"))
    return float(repeats * per_call.sum())


# A live measurement runs at one thread, in a worker process (which sets it: torch.set_num_threads cannot
# be called from a Streamlit session thread): on a busy 2-core server, torch's OpenMP threads wait on each
# other for every small op, and the token loop ran ~20x slower with 2 threads than with 1 (measured: 40 s
# vs 1.8 s for T = 1..256). One thread is also how the reference curve was measured: the two curves
# compare like with like.
LIVE_THREADS = 1
