"""The shipped sweeps: every rule x pairs x seed x that rule's learning rates of one width trained as ONE
stack (gdn/recall/batched.py), one worker process per width sharing the GPU. A config with "layers" (a list)
has a stack per width and depth; one with "updates" (a list) is the update task (data.update_batch), each
number of rewrites a member axis like the pairs.

    python -m gdn.recall.sweep --config assets/recall/config.json --out OUT --seconds 525 --tf32
    python -m gdn.recall.sweep --config assets/recall_update/config.json --out OUT --seconds 420 --tf32
    python -m gdn.recall.sweep --config ... --out OUT --widths 64        # one width (a call of its own)
    python -m gdn.recall.sweep --config ... --out OUT --merge-only       # results.json from the width files
    python -m gdn.recall.report --dir OUT --write                        # REPORT.md (needs its template there)

The step count is fitted to the time: each worker first times a few steps of its stack, then trains
every member for the same number of steps (a multiple of eval_every, between the config's min_steps and
max_steps) so that it ends inside --seconds; a hard stop later than that cuts a stack at one step for all
its members (their rows then say steps_done < steps). Every eval_every steps each worker rewrites its
stack's file (width<d>.json, or width<d>_layers<n>.json: all its rows with their curves so far, and the
device it ran on), so a run killed from outside still leaves every curve up to its last eval. At the end
a worker saves its best-learning-rate models of the config's "inspect" setting, and the parent merges every
stack file in OUT into results.json (the rows, no curves) and runs.jsonl (one run a line, with its curves).
"""
from __future__ import annotations

import argparse
import json
import math
import multiprocessing as mp
import time
from dataclasses import asdict
from pathlib import Path

import torch
from safetensors.torch import save_file

from gdn.recall.batched import in_stack_order, train_stack
from gdn.recall.train import RunConfig

ROW_KEYS = ("rule", "d", "pairs", "seq_len", "seed", "lr", "steps", "steps_done", "batch", "accuracy",
            "final_loss", "seconds")
UPDATE_KEYS = ("layers", "updates", "keys", "values", "kept", "updated", "old")     # the update task's rows carry these too
CALIBRATION_STEPS = (3, 13)        # time steps 3..13 (the first ones pay for allocation and warm-up)
FIT_SHARE = 0.85                   # of the time left, what the fitted steps may fill (evals, contention)
HARD_STOP_GRACE = 45.0             # seconds past --seconds before a stack is cut


def learning_rates(config: dict, rule: str) -> list[float]:
    """The rule's learning-rate grid: config["lrs"] is one list for every rule or a {rule: list} map
    (each rule swept where it trains: linear attention stays at chance at rates the delta rule needs)."""
    lrs = config["lrs"]
    return list(lrs[rule] if isinstance(lrs, dict) else lrs)


def stacks(config: dict) -> list[dict]:
    """The config's stacks, one worker each: {"d": width} (and "layers" where the config lists depths). A
    config's "rule_steps" ({rule: steps}) trains those rules for that many steps in stacks of their own
    ({"rules": [...], "steps": n}); every other rule's stack fits its steps to the time."""
    own = config.get("rule_steps", {})
    groups = [(None, [r for r in config["rules"] if r not in own])] + [
        (n, [r for r in config["rules"] if own.get(r) == n]) for n in sorted(set(own.values()))]
    return [{"d": d} | ({"layers": n} if "layers" in config else {}) | ({"rules": rules, "steps": steps} if own else {})
            for d in config["widths"] for n in config.get("layers", [None]) for steps, rules in groups if rules]


def shape_of(stack: dict) -> dict:
    """What members() needs of a stack: its width, depth and rules (its steps are chosen apart)."""
    return {k: v for k, v in stack.items() if k != "steps"}


def stack_file(stack: dict) -> str:
    return (f"width{stack['d']}" + (f"_layers{stack['layers']}" if "layers" in stack else "")
            + (f"_steps{stack['steps']}" if stack.get("steps") else "") + ".json")


def members(config: dict, d: int, steps: int, layers: int | None = None, rules: list[str] | None = None,
            **overrides) -> list[RunConfig]:
    """The stack of width d (and depth `layers`): every rule (of `rules`, default the config's) x pairs x
    rewrites x seed x that rule's learning rates, in stack order."""
    base = dict(d=d, seq_len=config["seq_len"], steps=steps, batch=config["batch"], eval_every=config["eval_every"],
                test_sequences=config["test_sequences"]) | ({"layers": layers} if layers else {}) | {
                    k: config[k] for k in ("keys", "values") if k in config} | overrides
    task = {"task": "update"} if "updates" in config else {}
    return in_stack_order([RunConfig(rule=r, pairs=n, lr=lr, seed=s, **task, **base, **({"updates": u} if task else {}))
                           for r in rules or config["rules"] for n in config["pairs"] for u in config.get("updates", [0])
                           for s in config["seeds"] for lr in learning_rates(config, r)])


def _sync(device):
    if str(device).startswith("cuda"):
        torch.cuda.synchronize()


def seconds_per_step(config: dict, stack: dict, device) -> float:
    """Time CALIBRATION_STEPS of the real stack (weights thrown away afterwards)."""
    first, last = CALIBRATION_STEPS
    stamps = {}

    def on_step(step, _):
        if step in (first, last):
            _sync(device)
            stamps[step] = time.perf_counter()

    train_stack(members(config, steps=last, eval_every=0, test_sequences=8, **shape_of(stack)), device=device,
                on_step=on_step)
    return (stamps[last] - stamps[first]) / (last - first)


def fitted_steps(config: dict, per_step: float, seconds_left: float) -> int:
    every = config["eval_every"]
    steps = int(seconds_left * FIT_SHARE / per_step) // every * every
    return max(config["min_steps"], min(config["max_steps"], steps))


def _write_text(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)                                   # a reader never sees half a file


def _write(path: Path, data) -> None:
    _write_text(path, json.dumps(data))


def device_name(device) -> str:
    return torch.cuda.get_device_name() if str(device).startswith("cuda") else "cpu"


def train_width(config: dict, stack: dict, device, start: float, seconds: float, out: Path, tf32: bool = False) -> None:
    """Train one stack (stacks(config)) and write its file; saves the config's "inspect" models it holds."""
    torch.set_num_threads(1)
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.manual_seed(0)
    name = stack_file(stack)
    per_step = seconds_per_step(config, stack, device)
    steps = stack.get("steps") or fitted_steps(config, per_step, start + seconds - time.time())
    cfgs = members(config, steps=steps, **shape_of(stack))
    print(f"{name}: {len(cfgs)} models, {per_step * 1e3:.1f} ms per step -> {steps} steps", flush=True)
    began, report = time.time(), stack | {"models": len(cfgs), "calibrated_ms_per_step": per_step * 1e3,
                                          "device": device_name(device), "torch": torch.__version__, "tf32": tf32}
    curves = [[] for _ in cfgs]

    def on_eval(step, accs):
        for c, a in zip(curves, accs):
            c.append((step, a))
        rows = [{**asdict(cfg), "steps_done": step, "accuracy": a, "curve": curve, "partial": True}
                for cfg, a, curve in zip(cfgs, accs, curves)]
        _write(out / name, report | {"seconds": round(time.time() - began, 1), "rows": rows})
        print(f"{name}: step {step}/{steps} ({time.time() - start:.0f} s) best member {max(accs):.3f}", flush=True)

    model, rows = train_stack(cfgs, device=device, on_eval=on_eval,
                              should_stop=lambda: time.time() > start + seconds + HARD_STOP_GRACE)
    _write(out / name, report | {"seconds": round(time.time() - began, 1), "rows": rows})
    for m, file in inspected(config, cfgs, rows):
        c = cfgs[m]
        save_file(model.unstack(m), str(out / file),
                  metadata={"lr": f"{c.lr:g}", "seed": str(c.seed), "steps": str(rows[m]["steps_done"]),
                            "accuracy": f"{rows[m]['accuracy']:.4f}", "layers": str(c.layers)})
    print(f"{name}: done in {time.time() - began:.0f} s", flush=True)


def inspected(config: dict, cfgs: list[RunConfig], rows: list[dict]) -> list[tuple[int, str]]:
    """(member, file name) of the models to keep, each at its best learning rate: MQAR's "inspect" is
    [width, pairs, seed] of one Gated DeltaNet; the update task's {"rules", "pairs", "updates", "seed"} names
    one model per rule and depth."""
    spec = config["inspect"]
    if isinstance(spec, list):
        d, pairs, seed = spec
        want = {("gdn", pairs, 0, seed): f"gdn_d{d}_pairs{pairs}.safetensors"} if cfgs[0].d == d else {}
    else:
        want = {(r, spec["pairs"], spec["updates"], spec["seed"]):
                f"{r}_layers{cfgs[0].layers}_pairs{spec['pairs']}_updates{spec['updates']}.safetensors"
                for r in spec["rules"]}
    picked = []
    for key, file in want.items():
        matches = [m for m, c in enumerate(cfgs) if (c.rule, c.pairs, c.updates, c.seed) == key]
        if matches:
            picked.append((max(matches, key=lambda m: rows[m]["accuracy"]), file))
    return picked


def planned_runs(config: dict) -> int:
    per_stack = sum(len(learning_rates(config, r)) for r in config["rules"])
    axes = ("widths", "pairs", "seeds", "layers", "updates")
    return per_stack * math.prod(len(config[k]) for k in axes if k in config)


def merge(config: dict, out: Path, extra: dict | None = None) -> dict:
    """results.json from the stack files: the rows the page reads (no curves), the stacks' timings; and
    runs.jsonl, one run a line with its test-accuracy and training-loss curves (the update task's score
    curve too)."""
    widths = []
    for stack in stacks(config):              # a stack's rows of its own rules only (a file may hold more)
        f = out / stack_file(stack)
        if f.exists():
            w = json.loads(f.read_text(encoding="utf-8"))
            widths.append(w | {"rows": [r for r in w["rows"] if r["rule"] in stack.get("rules", config["rules"])]})
    keys = ROW_KEYS + (UPDATE_KEYS if "updates" in config else ())
    curves = lambda r: {"curve": r["curve"], "loss_curve": r.get("loss_curve", [])} | (
        {"score_curve": r.get("score_curve", [])} if "updates" in config else {})
    runs = [{k: r.get(k) for k in keys} | curves(r) for w in widths for r in w["rows"]]
    summary = {"config": config, "stacks": [{k: v for k, v in w.items() if k != "rows"} for w in widths],
               "runs": planned_runs(config), "rows": [{k: r[k] for k in keys} for r in runs]} | (extra or {})
    _write(out / "results.json", summary)
    _write_text(out / "runs.jsonl", "".join(json.dumps(r) + "\n" for r in runs))
    return summary


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--config", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--seconds", type=float, default=420.0, help="every width's training ends by then")
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--tf32", action="store_true", help="float32 matmuls as TF32 (bench/recall_profile.py: the gain)")
    p.add_argument("--widths", type=int, nargs="*", help="train only these of the config's widths (one call each "
                   "gives each width the whole GPU); the merge takes every width file already in --out")
    p.add_argument("--stacks", nargs="*", help="train only these stacks (their file names without .json, e.g. "
                   "width24_layers1_steps2000); the merge takes every stack file already in --out")
    p.add_argument("--merge-only", action="store_true", help="train nothing: merge the width files in --out")
    args = p.parse_args(argv)
    start = time.time()
    config = json.loads(Path(args.config).read_text(encoding="utf-8"))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    chosen = [] if args.merge_only else [s for s in stacks(config) if (not args.widths or s["d"] in args.widths)
                                         and (not args.stacks or stack_file(s)[:-5] in args.stacks)]
    chosen.sort(key=lambda s: (-s["d"], -s.get("layers", 0)))          # the biggest first
    ctx = mp.get_context("spawn")
    workers = [ctx.Process(target=train_width, args=(config, stack, args.device, start, args.seconds, out, args.tf32))
               for stack in chosen]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    summary = merge(config, out)
    print(f"done: {len(summary['rows'])} rows of {summary['runs']} planned; this call {time.time() - start:.0f} s; "
          f"exit codes {[w.exitcode for w in workers]}", flush=True)


if __name__ == "__main__":
    main()
