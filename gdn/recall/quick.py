"""The "train one now" setting: small enough for one CPU thread in under a minute, hard enough that
linear attention stalls where the delta rule climbs (width 16, 10 pairs from 40 possible keys: more
keys than dimensions, so linear attention's sums of k v^T blur together while the delta rule corrects
what each key reads before writing).

    python -m gdn.recall --quick          # one accuracy per rule
"""
from __future__ import annotations

import time

from gdn.recall.train import RunConfig, train

QUICK = dict(d=16, pairs=10, seq_len=40, steps=400, batch=64, lr=3e-2, keys=40, values=16, test_sequences=128,
             eval_every=50)
QUICK_RULES = ("linear", "deltanet")


def quick_config(rule: str, **overrides) -> RunConfig:
    return RunConfig(rule=rule, **{**QUICK, **overrides})


def run_quick(rules=QUICK_RULES, *, seconds: float | None = None, on_step=None, **overrides) -> dict[str, dict]:
    """Train each rule's quick model in turn on one thread; seconds bounds the whole run (split evenly).
    on_step(rule, step, loss, accuracy or None) reports progress. Returns the result row of each rule.
    One thread: the caller sets it (python -m gdn.recall does; the app starts with OMP_NUM_THREADS=1)."""
    rows = {}
    for i, rule in enumerate(rules):
        stop_at = None if seconds is None else time.perf_counter() + seconds / (len(rules) - i)
        cfg = quick_config(rule, **overrides)
        _, rows[rule] = train(cfg, on_step=None if on_step is None else (lambda *a, r=rule: on_step(r, *a)),
                              should_stop=None if stop_at is None else (lambda s=stop_at: time.perf_counter() > s))
        if seconds is not None:
            seconds -= rows[rule]["seconds"]
    return rows
