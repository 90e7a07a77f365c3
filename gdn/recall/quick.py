"""The "train one now" setting: small enough for one CPU thread in under a minute, hard enough that
linear attention stalls where the delta rule climbs (QUICK below: 10 pairs from 40 possible keys in a
width-24 memory, more keys than dimensions, so linear attention's sums of k v^T blur together while the
delta rule corrects what each key reads before writing; with fewer pairs than dimensions the delta rule
has room to do so). Tried on one thread before choosing (accuracy at the end, linear / DeltaNet): width
16 gave 86 / 92 % after 1200 steps, width 12 80 / 69 %, width 16 with 64 possible keys 50 / 19 %; width
24 reached 83 / 99 % after 600 steps, and with the 300 steps kept here 84 / 98 %: DeltaNet passes 90 % at
step 175 while linear attention levels off in the low 80s. The rules train together as one stack
(gdn/recall/batched.py): one set of launches per step for all of them, and their curves grow side by side.

    python -m gdn.recall --quick          # one accuracy per rule
"""
from __future__ import annotations

import time

from gdn.recall.batched import in_stack_order, train_stack
from gdn.recall.train import RunConfig

QUICK = dict(d=24, pairs=10, seq_len=40, steps=300, batch=64, lr=3e-2, keys=40, values=16, test_sequences=128,
             eval_every=25)
QUICK_RULES = ("linear", "deltanet")


def quick_config(rule: str, **overrides) -> RunConfig:
    return RunConfig(rule=rule, **{**QUICK, **overrides})


def run_quick(rules=QUICK_RULES, *, seconds: float | None = None, on_step=None, **overrides) -> dict[str, dict]:
    """Train the quick models of `rules` together on one thread; seconds bounds the run (every rule stops
    at the same step). on_step(rule, step, loss, accuracy or None) reports progress, each rule in turn.
    Returns the result row of each rule. One thread: the caller sets it (python -m gdn.recall does; the
    app starts with OMP_NUM_THREADS=1)."""
    cfgs = in_stack_order([quick_config(r, **overrides) for r in rules])
    every = cfgs[0].eval_every
    stop_at = None if seconds is None else time.perf_counter() + seconds

    last_losses = [None] * len(cfgs)

    def stepped(step, losses):
        last_losses[:] = losses.tolist()
        if on_step is not None and not (every and step % every == 0):      # eval steps report with their accuracy
            for c, loss in zip(cfgs, last_losses):
                on_step(c.rule, step, loss, None)

    def evaluated(step, accs):
        if on_step is not None:
            for c, loss, acc in zip(cfgs, last_losses, accs):
                on_step(c.rule, step, loss, acc)

    _, rows = train_stack(cfgs, on_step=stepped, on_eval=evaluated,
                          should_stop=None if stop_at is None else (lambda: time.perf_counter() > stop_at))
    return {c.rule: row for c, row in zip(cfgs, rows)}
