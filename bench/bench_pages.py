"""Server time from a slider change or step to a new figure, for the memory, playground, compare, cost and real-model pages.

Each case calls what the page calls on a cache miss (the gdn computation with fresh parameters,
then the fig_* builder, then the JSON the browser receives) and reports the median per change, next
to a peer measured in the same run: building and serialising a trivial one-trace figure.
The goal (docs/architecture.md, Quality bars) is <= 30 ms per change. Figures with subplots, shapes and annotations are
built once per labels and size and then only get new data (gdn.figures.common.from_skeleton): the cases
time a warm skeleton, what a learner moving a slider gets. Run: python bench/bench_pages.py [--repeats N] [--only TEXT]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")     # as app.py sets it for the server (bench/README.md, Threads)

import numpy as np
import plotly.graph_objects as go

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from gdn.figures import chunking as fch
from gdn.figures import compare as fc
from gdn.figures import cost as fco
from gdn.figures import memory as fm
from gdn.figures import playground as fp
from gdn.figures import playground_html as fph
from gdn.figures import real_model as frm
from gdn.lessons import chunking as ce
from gdn.lessons import cost
from gdn.lessons import playground as ex
from gdn.lessons.compare import COMPARE_PRESETS, RULES, run_all
from gdn.lessons.memory import random_stream
from gdn.lessons.stream import STAGES, step_records
from gdn.units import half_life

RULE_TITLES = {r: r for r in RULES}


def trivial(i):
    return go.Figure(go.Scatter(x=[0, 1], y=[0, i]))


def overwrite(i):
    """One frame of the overwrite toy (HTML: the page builds its grid once per shape, then answers in the browser)."""
    ow = ex.overwrite(3 + i % 4, 3, 3, geometry="angle", angle_deg=10.0 + i, alpha=0.9, beta=0.5 + i / 100)
    labels = dict.fromkeys(["old", "interference", "missed", "total", "bars_title", "rows_title", "bars_axis",
                            "value_axis"], "x")
    return fph.overwrite_html(ow.readout, ow.target, ow.old, ow.along, ow.error, rule_titles=list(RULES),
                              row_labels=list("otldg"), labels=labels, metrics=[], notes=[])


def repeat(i):
    """One frame of the repeated-writes toy (HTML: the page builds its grid once, then answers in the browser)."""
    return fph.repeated_html(ex.repeated_writes(8 + i % 12, beta=0.3 + i / 100), rule_titles=RULE_TITLES,
                             labels={"x": "t", "y": "d"}, metrics=[])


def knorm(i):
    grid = np.linspace(0, 3, 121)
    errors, clipped = ex.clip_for_display(ex.repeated_writes(30, beta=1.0, knorm=0.5 + i / 10)["deltanet"])
    labels = dict.fromkeys(["factor_title", "error_title", "factor", "knorm", "distance", "shrink", "overshoot",
                            "diverge", "clipped", "writes"], "x")
    return fph.key_norm_html(grid, ex.along_k_factor(grid, 1.0), 0.5 + i / 10, errors, clipped=clipped, state="shrink",
                             labels=labels, metrics=[], notes=[])


def halflife(i):
    """One frame of the half-life toy (HTML: the page builds all 101 once, then answers in the browser)."""
    alpha = 0.5 + i / 50
    return fph.half_life_html(ex.decay_curves([0.5, 0.9, 0.99, alpha], 100), [0.5, 0.9, 0.99], alpha,
                              half_life(alpha), labels={"n": "n", "kept": "k", "half_at": "{n}"}, metrics=[])


FIXED = {}


def capacity_toy(i):
    """An alpha move: the page's cache still holds the linear and deltanet curves; only gdn's is new."""
    FIXED.update({r: FIXED.get(r) if r in FIXED else ex.capacity_curve(r, 16, 16) for r in ("linear", "deltanet")})
    curves = {**FIXED, "gdn": ex.capacity_curve("gdn", 16, 16, alpha=0.9 + i / 1000)}
    return fp.fig_capacity(np.array(ex.CAPACITY_NS), curves, 16, 256, rule_titles=RULE_TITLES,
                           split_labels=list("abc"), labels=dict.fromkeys(["curve_title", "split_title", "knee", "N",
                                                                           "error"], "x"))


def capacity_128_alpha(i):
    """d_k = 128 (not a toy size): moving the alpha slider recomputes only the gdn curve."""
    ex.capacity_curve("gdn", 128, 128, alpha=0.95 + i / 1000)
    return trivial(i)


def capacity_128_new_keys(i):
    """A d_k (or seed, geometry) change at d_k = 128: the page recomputes all three curves with no
    stream or unrolled keys cached yet (a new seed per call stands for the new keys)."""
    for r in RULES:
        ex.capacity_curve(r, 128, 128, alpha=0.95 if r == "gdn" else 1.0, seed=1000 + i)
    return trivial(i)


MEMORY_TITLES = {n: n for n in ("S_prev", "S_decayed", "write", "S_new", "keys", "read", "output")}


def memory_step(i):
    """A step the learner has not seen yet: a new token and stage of an edited stream every call."""
    rec = step_records(random_stream(T=4, K=3, V=3, seed=i))
    return fm.fig_memory_step(rec, i % 4, STAGES[(i // 4) % len(STAGES)], titles=MEMORY_TITLES,
                              axis={"key": "key dim", "value": "value dim", "dim": "dim"}, height=490)


def memory_timeline(i):
    rec = step_records(random_stream(T=8, K=2, V=2, seed=i))
    return fm.fig_timeline(rec, i % 8, labels={"alpha": "α", "beta": "β", "token": "token t"})


def chunking_merge(i):
    """The chunking page's token slider: tokens t and t + 1 merged, four 3 x 3 maps."""
    demo = ce.affine_demo(random_stream(T=12, K=3, V=3, seed=0), i % 11)
    return fch.matrix_row_html([demo.A_t, demo.A_next, demo.merged, demo.swapped],
                               [f"A_{i % 11 + 1}", f"A_{i % 11 + 2}", "merged", "swapped"], ticks=["1", "2", "3"],
                               row_title="key dim", col_title="key dim")


def compare(i):
    p = COMPARE_PRESETS["city" if i % 2 else "k1_update"]()
    recs = run_all(p.stream)
    t = i % p.stream.shape[0]
    return fc.fig_compare_step(recs, p.target, t, "query", titles=RULE_TITLES,
                               row_labels={n: n for n in fc.VECTOR_ROWS}, axis={"key": "k", "value": "v"})


def cost_slider(i):
    """The page's context slider: same model and look, the T mark moves (cost_page changes the model)."""
    cfg = cost.load_sizes()["Qwen3.5-0.8B"]
    T = np.unique(np.geomspace(1, 2 ** 18, 64).round())
    curves = cost.memory_curves(cfg, T, batch=1, dtype="bf16", interval=4)
    return fco.fig_cost(T, curves, [(256.0, "a", "red"), (2.0 ** (i % 18), f"T = {2 ** (i % 18):,}", "gray")],
                        labels={k: k for k in ("state", "kv", "hybrid", "full", "x", "y")})


def cost_page(i):
    cfg = list(cost.load_sizes().values())[i % 7]
    T = np.unique(np.geomspace(1, 2 ** 18, 64).round())               # as the page draws it
    curves = cost.memory_curves(cfg, T, batch=1 + i, dtype="bf16", interval=1 + i % 6)
    return fco.fig_cost(T, curves, [(256.0, "a", "red"), (768.0, "b", "blue")],
                        labels={k: k for k in ("state", "kv", "hybrid", "full", "x", "y")})


def real_model_layer(i):
    """The real-model page's layer picker: the gates and guesses as HTML (what the page draws up to
    draws_as_html allows), 64 tokens x 16 heads as in Qwen3.5-0.8B."""
    r = np.random.default_rng(i)
    T = 64
    return frm.gates_html(r.random((T, 16)), r.random((T, 16)), tokens=[f" w{t}" for t in range(T)], layer=i % 18,
                          top_tokens=[[f"g{t}{k}" for k in range(3)] for t in range(T)],
                          top_p=np.sort(r.random((T, 3)))[:, ::-1], titles={"alpha": "α", "beta": "β", "predictions": "p"},
                          labels={"token": "token", "layer": "layer", "head": "head"})


CASES = {"trivial figure (peer)": trivial, "playground overwrite": overwrite, "playground repeated writes": repeat,
         "playground key norm": knorm, "playground half-life": halflife, "playground capacity d_k=16": capacity_toy,
         "memory step (new step)": memory_step, "memory timeline": memory_timeline, "chunking token slider": chunking_merge,
         "compare step": compare, "cost": cost_page, "cost context slider": cost_slider,
         "real model layer (gates as HTML, 64 tokens x 16 heads)": real_model_layer,
         "playground capacity d_k=128, alpha (not toy)": capacity_128_alpha,
         "playground capacity d_k=128, new keys: 3 curves (not toy)": capacity_128_new_keys}


def time_case(fn, repeats: int) -> float:
    """Median ms of fn(i) and its serialisation: a figure's JSON (what st.plotly_chart sends), or the HTML
    string itself (what st.html sends)."""
    send = lambda out: out if isinstance(out, str) else out.to_json()
    send(fn(0))                                                           # warm imports and plotly validators
    times = []
    for i in range(1, repeats + 1):
        start = time.perf_counter()
        send(fn(i))
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--only", default="", help="run only the cases whose name contains this text")
    args = parser.parse_args()
    peer = time_case(trivial, args.repeats)
    print(f"peer: trivial figure build + JSON = {peer:.2f} ms")
    for name, fn in list(CASES.items())[1:]:
        if args.only not in name:
            continue
        ms = time_case(fn, max(3, args.repeats // 3) if "not toy" in name else args.repeats)
        verdict = "  ok (<= 30 ms)" if ms <= 30 else "  SLOW (> 30 ms)"
        print(f"slider -> figure, {name}: {ms:.1f} ms per change ({ms / peer:.1f}x the trivial figure){verdict}")


if __name__ == "__main__":
    main()
