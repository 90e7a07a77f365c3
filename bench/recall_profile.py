"""Where one training step of an MQAR stack (gdn/recall/batched.py) spends its time, and what the
obvious switches buy: the short convolution as four shifted multiply-adds or as one grouped conv1d, and
float32 matmuls in full precision or TF32. Prints each variant's median step time, its ratio to the
first variant measured in the same run, and a profile of one step grouped by source line.

    python bench/recall_profile.py --config assets/recall/config.json --d 64            # on the device
    python bench/recall_profile.py --smoke                                              # tiny, any machine
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from anywhere without installing
from gdn.recall import stacked  # noqa: E402
from gdn.recall.batched import StackAdamW, _Data, build_stack, member_losses  # noqa: E402
from gdn.recall.models import CONV  # noqa: E402
from gdn.recall.sweep import members  # noqa: E402


def shifted_conv(x, weight):
    """The convolution as it was written before: four shifted slices of a padded copy."""
    T = x.shape[2]
    padded = F.pad(x, (0, 0, CONV - 1, 0))
    y = padded[:, :, 0:T] * weight[:, None, None, :, 0]
    for j in range(1, CONV):
        y = y + padded[:, :, j:j + T] * weight[:, None, None, :, j]
    return y


CONVS = {"grouped": stacked._causal_conv, "shifted": shifted_conv}


def sync(device):
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def step_times(cfgs, device, steps: int) -> list[float]:
    model, data = build_stack(cfgs, device), _Data(cfgs, device)
    opt = StackAdamW(model, cfgs[0].weight_decay)
    lrs = torch.full((len(cfgs),), 1e-3, device=device)
    times = []
    for step in range(steps + 2):                       # two warm-up steps pay for allocation
        sync(device)
        t0 = time.perf_counter()
        tokens, where, answers = data.train(step)
        losses, _, _ = member_losses(model, tokens, where, answers)
        for p in model.parameters():
            p.grad = None
        losses.sum().backward()
        opt.step(lrs)
        sync(device)
        times.append(time.perf_counter() - t0)
    return times[2:]


def profile_step(cfgs, device, rows: int) -> None:
    from torch.profiler import ProfilerActivity, profile
    model, data = build_stack(cfgs, device), _Data(cfgs, device)
    tokens, where, answers = data.train(0)
    member_losses(model, tokens, where, answers)[0].sum().backward()
    acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device.startswith("cuda") else [])
    with profile(activities=acts, with_stack=True) as prof:
        member_losses(model, tokens, where, answers)[0].sum().backward()
        sync(device)
    key = "self_cuda_time_total" if device.startswith("cuda") else "self_cpu_time_total"
    print(prof.key_averages(group_by_stack_n=4).table(sort_by=key, row_limit=rows, max_name_column_width=40))


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--config", default="assets/recall/config.json")
    p.add_argument("--d", type=int, default=64)
    p.add_argument("--batch", type=int, default=None, help="the config's unless given")
    p.add_argument("--steps", type=int, default=6)
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--rows", type=int, default=30)
    p.add_argument("--smoke", action="store_true", help="a tiny stack, two steps, CPU")
    args = p.parse_args(argv)
    config = json.loads(Path(args.config).read_text(encoding="utf-8"))
    if args.smoke:
        config |= {"pairs": [2], "seeds": [0], "seq_len": 16, "batch": 2, "lrs": [1e-3]}
        config.pop("lrs_by_rule", None)
        args.d, args.steps, args.device, args.rows = 8, 2, "cpu", 5
    overrides = {"batch": args.batch} if args.batch else {}
    cfgs = members(config, args.d, args.steps, **overrides)
    print(f"width {args.d}: {len(cfgs)} models, batch {cfgs[0].batch}, T {cfgs[0].seq_len}, {args.device}")
    base = None
    for tf32 in (False, True):
        for name, conv in CONVS.items():
            torch.backends.cuda.matmul.allow_tf32 = tf32
            stacked._causal_conv = conv
            med = statistics.median(step_times(cfgs, args.device, args.steps))
            base = base or med
            print(f"conv {name:8s} tf32 {str(tf32):5s}: {med * 1e3:8.1f} ms per step  ({med / base:.2f}x the first)")
    stacked._causal_conv = CONVS["grouped"]
    profile_step(cfgs, args.device, args.rows)


if __name__ == "__main__":
    main()
