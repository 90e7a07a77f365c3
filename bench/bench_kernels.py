"""Time our gated-delta-rule kernels against transformers' torch kernels (and fla's Triton kernel on CUDA).

    python bench/bench_kernels.py                 # CPU float32, B=1, H=16, K=V=128, T in {512, 4096, 8192}
    python bench/bench_kernels.py --smoke         # tiny sizes, for CI: checks that it runs, not how fast
    python bench/bench_kernels.py --device cuda   # adds T=32768 and fla's chunk_gated_delta_rule if importable
    python bench/bench_kernels.py --before DIR    # adds another checkout's chunked kernel ("before chunk")
    python bench/bench_kernels.py --device cuda --table   # fp32 / bf16 x T x B: ours, fla, transformers, errors vs float64
    python bench/bench_kernels.py --threads 1 --clock cpu --max-recurrent-T 0   # the CPU goal (>= 3x transformers)
    python bench/bench_kernels.py --smoke --table        # the table's code path on a CPU, tiny sizes
    python bench/bench_kernels.py --device cuda --table --fla-only --modes float32-tf32 bfloat16 --variant in-walk own-kernel

The GPU table of the issue, run from the repository root on a CUDA machine with fla installed (one GPU;
the device is cuda:0, i.e. whatever CUDA_VISIBLE_DEVICES leaves first; no CUDA graph is captured for
fla or transformers, ours replays its state scan from one, see below):

    python bench/bench_kernels.py --device cuda --table --T 4096 32768 --B 1 8 --repeats 7

On CUDA with Triton "ours chunk" runs the chunked kernel as three Triton kernels (gdn/ops/fused.py);
otherwise it replays its torch state scan from a CUDA graph
(gdn/ops/scan.py), and "ours chunk eager" is that with the graph turned off. The table's last two
columns time the torch path in the same rounds ("ours, torch scan"), so the Triton kernels' share is visible.

Every ratio is measured in one run: the kernels being compared are timed in turn, round after round, and
each reports the median of its rounds, so load from other processes hits them alike. Ratios read
"how many times faster the first-named kernel is" (> 1 means faster).

The arithmetic floor: per token and head, a chunk of C tokens costs at least 8*C*d + 6*d^2 FLOP
(Q K^T and K K^T: 4*C*d; L^-1 applied to the chunk's values and the intra-chunk scores times the new
values: 4*C*d; K S, Q S and the state update K^T N: 6*d^2; the [C, C] triangular solve not counted).
Divided by this machine's measured fp32 matmul rate it gives the time no fp32 matmul-based chunked
kernel can beat; we print how far we are above it.
"""
from __future__ import annotations

import argparse
import logging
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from anywhere without installing
from gdn.ops import chunk, scan
from gdn.ops.chunk import chunk_gated_delta_rule
from gdn.ops.naive import recurrent_gated_delta_rule


def load_before(root):
    """chunk_gated_delta_rule of another checkout (its gdn/ops/chunk.py, loaded under another name;
    its own imports of gdn.ops.* resolve to this checkout, which keeps the same helpers)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("before_chunk", Path(root) / "gdn" / "ops" / "chunk.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.chunk_gated_delta_rule


def eager(fn):
    """fn with the CUDA-graph scan turned off (every scan runs as a Python loop of launches)."""
    def run(*args, **kwargs):
        saved, scan.MIN_GRAPH_CHUNKS = scan.MIN_GRAPH_CHUNKS, float("inf")
        try:
            return fn(*args, **kwargs)
        finally:
            scan.MIN_GRAPH_CHUNKS = saved
    return run


def load_peers():
    """transformers' torch kernels (always) and fla's chunk kernel (when importable, CUDA only)."""
    logging.getLogger("transformers").setLevel(logging.ERROR)  # its "fla not installed" fallback note
    from transformers.models.qwen3_5 import modeling_qwen3_5 as hf
    # transformers wraps these to call fla instead when fla is importable: __wrapped__ is the torch path.
    hf_chunk = getattr(hf.torch_chunk_gated_delta_rule, "__wrapped__", hf.torch_chunk_gated_delta_rule)
    hf_rec = getattr(hf.torch_recurrent_gated_delta_rule, "__wrapped__", hf.torch_recurrent_gated_delta_rule)
    try:
        from fla.ops.gated_delta_rule import chunk_gated_delta_rule as fla_chunk
    except Exception as err:
        fla_chunk, fla_why = None, f"{type(err).__name__}: {err}"
    else:
        fla_why = ""
    return hf_chunk, hf_rec, fla_chunk, fla_why


def make_inputs(B, T, H, d, device, dtype=torch.float32, seed=0, decay_shift=2.0):
    """Qwen3.5-like inputs: raw q, k (normalised in the kernel), beta = sigmoid(.), g = -softplus(. - shift).
    decay_shift 2: gates that forget in ~5 tokens (mean g -0.18); 6: in ~250 (mean g -4e-3), as a trained
    model's slow heads may, where errors carried by the state add up over many chunks."""
    gen = torch.Generator().manual_seed(seed)
    r = lambda *shape: torch.randn(*shape, generator=gen)
    q, k, v = r(B, T, H, d), r(B, T, H, d), r(B, T, H, d)                 # [B, T, H, d]
    beta = torch.sigmoid(r(B, T, H))                                        # [B, T, H] in (0, 1)
    g = -torch.nn.functional.softplus(r(B, T, H) - decay_shift)             # [B, T, H] <= 0
    return [x.to(device=device, dtype=dtype) for x in (q, k, v, g, beta)]


def sync(device):
    if device == "cuda":
        torch.cuda.synchronize()


# What a kernel's time is read from: "wall" (time.perf_counter, the default) or "cpu" (time.thread_time:
# this thread's CPU time, CPU only). At --threads 1 every kernel runs on the calling thread, so "cpu" is
# the same work without the time the thread waited for a core: on a shared machine the wall clock
# swings 2x between rounds, the CPU time a few percent.
CLOCKS = {"wall": time.perf_counter, "cpu": time.thread_time}


def time_round_robin(fns, repeats, device, clock="wall"):
    """fns: {name: callable}. One warm-up call each, then `repeats` rounds timing each once per round.
    Returns {name: sorted list of seconds}."""
    now = CLOCKS[clock]
    for fn in fns.values():
        fn()
    times = {name: [] for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            sync(device)
            t0 = now()
            fn()
            sync(device)
            times[name].append(now() - t0)
    return {name: sorted(ts) for name, ts in times.items()}


def matmul_rate(device, n, repeats=5):
    """Measured fp32 FLOP/s of one n x n x n matmul on this device: the best of `repeats`, i.e. the
    rate the hardware can reach (a median would fold other processes' load into the floor)."""
    a = torch.randn(n, n, device=device)
    b = torch.randn(n, n, device=device)
    t = time_round_robin({"mm": lambda: a @ b}, repeats, device)["mm"][0]
    return 2 * n ** 3 / t


def rel_err(a, b):
    return ((a.float() - b.float()).norm() / b.float().norm()).item()


def torch_scan(fn):
    """fn with the Triton kernels turned off: the GPU path in torch (gdn/ops/scan.py's state scan) instead."""
    def run(*args, **kwargs):
        saved, chunk.fused_available = chunk.fused_available, lambda *_: False
        try:
            return fn(*args, **kwargs)
        finally:
            chunk.fused_available = saved
    return run


def bench_one(T, args, peers):
    hf_chunk, hf_rec, fla_chunk, _ = peers
    B, H, d, C, dev = 1, args.heads, args.dim, args.chunk_size, args.device
    q, k, v, g, beta = make_inputs(B, T, H, d, dev)
    kw = dict(initial_state=None, output_final_state=False, use_qk_l2norm_in_kernel=True)  # all by keyword
    fns = {
        "ours chunk": lambda: chunk_gated_delta_rule(q, k, v, g=g, beta=beta, chunk_size=C, **kw),
        "transformers chunk": lambda: hf_chunk(q, k, v, g=g, beta=beta, chunk_size=C, **kw),
    }
    if dev == "cuda":
        fns["ours chunk eager"] = lambda: eager(chunk_gated_delta_rule)(q, k, v, g=g, beta=beta, chunk_size=C, **kw)
    if args.before_fn is not None:
        fns["before chunk"] = lambda: args.before_fn(q, k, v, g=g, beta=beta, chunk_size=C, **kw)
    if fla_chunk is not None:
        fns["fla chunk"] = lambda: fla_chunk(q=q, k=k, v=v, g=g, beta=beta, **kw)
        qb, kb, vb = (x.bfloat16() for x in (q, k, v))
        fns["fla chunk bf16"] = lambda: fla_chunk(q=qb, k=kb, v=vb, g=g, beta=beta, **kw)
    with_recurrent = T <= args.max_recurrent_T
    if with_recurrent:
        fns["ours recurrent"] = lambda: recurrent_gated_delta_rule(q, k, v, g=g, beta=beta, **kw)
        fns["transformers recurrent"] = lambda: hf_rec(q, k, v, g=g, beta=beta, **kw)
    with torch.inference_mode():
        runs = time_round_robin(fns, args.repeats, dev, args.clock)
        t = {name: statistics.median(ts) for name, ts in runs.items()}
        o_ours = fns["ours chunk"]()[0]
        err = rel_err(o_ours, fns["transformers chunk"]()[0])
        err_fla = rel_err(fns["fla chunk"]()[0], o_ours) if fla_chunk is not None else None

    print(f"\nT={T}  (B={B}, H={H}, K=V={d}, C={C}, {dev}, float32, median of {args.repeats}; best in brackets;"
          f" {args.clock} clock)")
    for name in t:
        print(f"  {name:24s}{t[name] * 1e3:9.2f} ms  ({runs[name][0] * 1e3:.2f})")
    print(f"  ratio T={T} chunk: transformers chunk / ours chunk = {t['transformers chunk'] / t['ours chunk']:.2f}x"
          f"   (output rel. diff {err:.1e})")
    if fla_chunk is not None:
        print(f"  ratio T={T} fla: ours chunk / fla chunk = {t['ours chunk'] / t['fla chunk']:.2f}x"
              f"   (fla slower when < 1; fp32 output rel. diff {err_fla:.1e}); "
              f"ours chunk / fla chunk bf16 = {t['ours chunk'] / t['fla chunk bf16']:.2f}x")
        for other in ("ours chunk eager", "before chunk"):
            if other in t:
                print(f"  ratio T={T} fla: {other} / fla chunk = {t[other] / t['fla chunk']:.2f}x")
    if "before chunk" in t:
        print(f"  ratio T={T} before: before chunk / ours chunk = {t['before chunk'] / t['ours chunk']:.2f}x")
    if with_recurrent:
        print(f"  ratio T={T} recurrent: ours recurrent / ours chunk = {t['ours recurrent'] / t['ours chunk']:.2f}x")
        print(f"  ratio T={T} recurrent: transformers recurrent / ours recurrent = "
              f"{t['transformers recurrent'] / t['ours recurrent']:.2f}x")
    flop = (8 * C * d + 6 * d * d) * T * H * B
    floor = flop / args.rate
    print(f"  floor T={T}: {flop / 1e9:.2f} GFLOP / {args.rate / 1e9:.0f} GFLOP/s = {floor * 1e3:.2f} ms;"
          f" ours chunk is {t['ours chunk'] / floor:.2f}x the floor (best run {runs['ours chunk'][0] / floor:.2f}x)")


# --table's dtype rows: the inputs' dtype and our fp32_precision (fla has one precision per dtype)
MODES = {"float32": (torch.float32, "tf32x3"), "float32-tf32": (torch.float32, "tf32"),
         "bfloat16": (torch.bfloat16, "tf32x3")}


def with_settings(fn, **settings):
    """fn run with gdn.ops.fused's module settings (OUTPUT_IN_WALK, ...) set, then put back."""
    from gdn.ops import fused

    def run(*args, **kwargs):
        saved = {name: getattr(fused, name) for name in settings}
        for name, value in settings.items():
            setattr(fused, name, value)
        try:
            return fn(*args, **kwargs)
        finally:
            for name, value in saved.items():
                setattr(fused, name, value)
    return run


def variants(args):
    """--variant's kernels: our call with one of gdn.ops.fused's choices forced, timed in the same rounds."""
    from gdn.ops import fused
    plain_tf32 = {**fused.FP32_PRECISIONS, "tf32": fused.Recipe(products=2, refine=False, half_w=False)}
    narrow = fused.WALK_SHAPES_WITH_OUTPUT[-1]
    known = {"in-walk": dict(OUTPUT_IN_WALK=True), "own-kernel": dict(OUTPUT_IN_WALK=False),
             # the walk writing the outputs with other blocks of state columns than WALK_SHAPES_WITH_OUTPUT's
             "in-walk-32": dict(OUTPUT_IN_WALK=True, WALK_SHAPES_WITH_OUTPUT=((32, 4), narrow)),
             "in-walk-64x8": dict(OUTPUT_IN_WALK=True, WALK_SHAPES_WITH_OUTPUT=((64, 8), narrow)),
             "tf32-truncated": dict(FP32_PRECISIONS=plain_tf32)}       # the hardware's cut, not rounded first
    return {name: known[name] for name in args.variant}


def table(args, peers):
    """One markdown row per (mode, T, B): median ms of ours, fla and transformers' torch chunk (timed in
    turn, round after round), the ratios ours / fla and transformers / ours, and each output's relative
    distance (Frobenius) from our chunked kernel run in float64 on the same (rounded) inputs, beside the
    floor: the distance of that float64 output rounded to the inputs' dtype. --fla-only leaves out
    transformers and the torch scan (their columns read nan); each --variant adds a line under the row."""
    hf_chunk, _, fla_chunk, _ = peers
    H, d, C, dev = args.heads, args.dim, args.chunk_size, args.device
    kw = dict(initial_state=None, output_final_state=False, use_qk_l2norm_in_kernel=True)
    print("\n| dtype | T | B | ours ms | fla ms | transformers ms | ours / fla | transformers / ours "
          "| err ours | err fla | err transformers | floor | ours, torch scan ms | err torch scan |"
          "\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for mode in args.modes:
        dtype, precision = MODES[mode]
        for T in args.T:
            for B in args.B:
                q, k, v, g, beta = make_inputs(B, T, H, d, dev, decay_shift=args.decay_shift)
                q, k, v = (x.to(dtype) for x in (q, k, v))              # g, beta stay float32 (as in Qwen3.5)
                ours = lambda: chunk_gated_delta_rule(q, k, v, g=g, beta=beta, chunk_size=C, fp32_precision=precision,
                                                      **kw)[0]
                fns = {"ours": ours}
                if not args.fla_only:
                    fns["transformers"] = lambda: hf_chunk(q, k, v, g=g, beta=beta, chunk_size=C, **kw)[0]
                    fns["torch scan"] = torch_scan(ours)
                if fla_chunk is not None:
                    fns["fla"] = lambda: fla_chunk(q=q, k=k, v=v, g=g, beta=beta, **kw)[0]
                for name, settings in variants(args).items():
                    fns[name] = with_settings(ours, **settings)
                with torch.inference_mode():
                    runs = time_round_robin(fns, args.repeats, dev, args.clock)
                    if dev == "cuda":
                        torch.cuda.empty_cache()
                    # one sequence at a time: B = 8 at T 32768 in float64 at once outgrew an 80 GB card
                    ref = torch.cat([chunk_gated_delta_rule(*(x[b:b + 1].double() for x in (q, k, v)),
                                                            g=g[b:b + 1].double(), beta=beta[b:b + 1].double(),
                                                            chunk_size=C, **kw)[0] for b in range(B)])
                    err = {name: rel_err(fn().double(), ref) for name, fn in fns.items()}
                    err["floor"] = rel_err(ref.to(dtype).double(), ref)   # rounding the exact output to dtype
                    del ref
                ms = {name: statistics.median(ts) * 1e3 for name, ts in runs.items()}
                nan = float("nan")
                fla_ms = ms.get("fla", nan)
                print(f"| {mode} | {T} | {B} | {ms['ours']:.2f} | {fla_ms:.2f} | {ms.get('transformers', nan):.2f} "
                      f"| {ms['ours'] / fla_ms:.2f}x | {ms.get('transformers', nan) / ms['ours']:.2f}x "
                      f"| {err['ours']:.1e} | {err.get('fla', nan):.1e} | {err.get('transformers', nan):.1e} "
                      f"| {err['floor']:.1e} | {ms.get('torch scan', nan):.2f} | {err.get('torch scan', nan):.1e} |",
                      flush=True)
                for name in variants(args):
                    print(f"  variant {name}: {ms[name]:.2f} ms, {ms[name] / fla_ms:.2f}x fla, "
                          f"{ms[name] / ms['ours']:.2f}x ours, err {err[name]:.1e}", flush=True)
                if dev == "cuda":
                    torch.cuda.empty_cache()


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--device", default="cpu", choices=["cpu", "cuda"], help="cuda: the first visible GPU")
    p.add_argument("--clock", default="wall", choices=sorted(CLOCKS),
                   help="wall: elapsed time; cpu: this thread's CPU time (CPU only, meant for --threads 1)")
    p.add_argument("--smoke", action="store_true", help="tiny sizes (CI): runs everything, times nothing useful")
    p.add_argument("--T", type=int, nargs="*", help="sequence lengths (default depends on --device)")
    p.add_argument("--repeats", type=int, default=5, help="timed rounds per kernel (median reported)")
    p.add_argument("--chunk-size", type=int, default=64)
    p.add_argument("--max-recurrent-T", type=int, default=8192, help="skip the token loops above this T")
    p.add_argument("--threads", type=int, default=None, help="torch.set_num_threads (default: leave as is)")
    p.add_argument("--before", help="another checkout whose chunked kernel is timed as 'before chunk'")
    p.add_argument("--table", action="store_true", help="the fp32 / bf16 x T x B table (see table())")
    p.add_argument("--B", type=int, nargs="*", default=[1, 8], help="batch sizes of --table")
    p.add_argument("--modes", nargs="*", default=["float32", "bfloat16"], choices=sorted(MODES),
                   help="--table's rows: the inputs' dtype (float32-tf32: fp32_precision='tf32', fla's precision)")
    p.add_argument("--fla-only", action="store_true", help="--table: time ours against fla alone (faster)")
    p.add_argument("--variant", nargs="*", default=[], choices=["in-walk", "own-kernel", "in-walk-32", "in-walk-64x8", "tf32-truncated"],
                   help="--table: also time ours with one of gdn.ops.fused's choices forced (see variants())")
    p.add_argument("--decay-shift", type=float, default=2.0,
                   help="--table's gates: g = -softplus(x - shift); 6 for slow gates (see make_inputs)")
    args = p.parse_args(argv)
    if args.smoke and not args.threads:
        args.threads = 1  # tiny ops gain nothing from threads, and spinning OpenMP threads stall on a busy CI box
    if args.threads:
        torch.set_num_threads(args.threads)
    if args.device == "cuda" and not torch.cuda.is_available():
        p.error("--device cuda: torch.cuda.is_available() is False")
    if args.clock == "cpu" and args.device != "cpu":
        p.error("--clock cpu times the calling thread: a GPU kernel's time is not in it")
    args.heads, args.dim = (2, 16) if args.smoke else (16, 128)
    if args.smoke:
        args.T, args.repeats, args.chunk_size = args.T or [33, 64], min(args.repeats, 3), min(args.chunk_size, 16)
    elif not args.T:
        args.T = [512, 4096, 8192] + ([32768] if args.device == "cuda" else [])
    peers = load_peers()
    args.before_fn = load_before(args.before) if args.before else None
    args.rate = matmul_rate(args.device, 256 if args.smoke else (8192 if args.device == "cuda" else 2048))
    name = torch.cuda.get_device_name() if args.device == "cuda" else f"{torch.get_num_threads()} threads"
    print(f"torch {torch.__version__} on {args.device} ({name}); fp32 matmul rate {args.rate / 1e9:.0f} GFLOP/s")
    print("fla: " + ("importable" if peers[2] is not None else f"not available ({peers[3]})"))
    if args.table:
        table(args, peers)
        return
    for T in args.T:
        bench_one(T, args, peers)


if __name__ == "__main__":
    main()
