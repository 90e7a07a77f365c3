"""Server CPU per full script run of each step of bench/load_ws.py's round, against the trivial page.

A class's capacity is bounded by the CPU one replica spends per run (every page load and every scrub is a
full run under one interpreter). This bench opens one websocket session per server (Streamlit's own
protocol, as bench/load_ws.py speaks it), walks load_ws's round memory -> scrub -> scrub -> compare ->
start back to back, and charges each run the server's CPU time (utime + stime of the process, all its
threads, from /proc) from its request to the next request. The peer is bench/trivial_page.py (one slider,
one Plotly chart) on its own server, rerun as often in the same rounds, so a busy neighbour hits both.
--before DIR adds another checkout of the repository (e.g. `git worktree add /tmp/before main`) served
the same way, its rounds interleaved with ours.

    python bench/bench_run_cpu.py --rounds 6 --runs 20 --server-cpus 0 --client-cpus 1 [--before /tmp/before]

Prints per step: CPU ms per run (median over rounds), its ratio to the trivial page's, the wall time's
p50 / p95, and with --before the ratio after / before.
"""
from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import websockets

from bench.load_classroom import parse_cpus, percentile
from bench.load_ws import MEMORY_QUERY, ROUND, Session, cpu_seconds, finished
from devtools.app_server import start_server


async def one_step(s: Session, step: str, i: int) -> None:
    if step == "trivial":
        await s.rerun("", page="")
    elif step == "scrub":
        await s.rerun(MEMORY_QUERY, page="memory_table", widgets=[s.relay(1 + i % 5, "write")])
    else:
        await s.rerun(MEMORY_QUERY if step == "memory_table" else "lang=en", page=step)
    await s.until(finished, 120)


async def walk(base: str, pid: int, steps: tuple[str, ...], runs: int, out: dict) -> None:
    """runs rounds of steps on one session; out[step] gets (cpu s, wall s) per run."""
    async with websockets.connect(base.replace("http", "ws") + "/_stcore/stream", subprotocols=["streamlit"],
                                  max_size=None) as ws:
        s = Session(ws)
        for step in steps:                                  # the widget ids (the relay's) and warm caches
            await one_step(s, step, 0)
        for i in range(runs):
            for step in steps:
                c0, t0 = cpu_seconds(pid), time.perf_counter()
                await one_step(s, step, i)
                await asyncio.sleep(0.005)                  # what the server does after script_finished
                out.setdefault(step, []).append((cpu_seconds(pid) - c0, time.perf_counter() - t0))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=6, help="rounds; each walks every server's steps --runs times")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--server-cpus", default="0")
    ap.add_argument("--client-cpus", default="1")
    ap.add_argument("--before", default="", help="another checkout of the repository, served the same way")
    a = ap.parse_args()
    os.sched_setaffinity(0, parse_cpus(a.client_cpus))
    prefix = ("taskset", "-c", a.server_cpus)
    steps = tuple(dict.fromkeys(ROUND))                      # memory_table, scrub, compare, start
    with contextlib.ExitStack() as stack:
        servers = {"trivial": (stack.enter_context(start_server(prefix=prefix, script="bench/trivial_page.py")), ("trivial",))}
        servers["app"] = (stack.enter_context(start_server(prefix=prefix)), ROUND)
        if a.before:
            servers["before"] = (stack.enter_context(start_server(prefix=prefix, root=Path(a.before))), ROUND)
        per_round = {name: [] for name in servers}
        for _ in range(a.rounds):
            for name, ((base, proc), walked) in servers.items():
                out: dict = {}
                asyncio.run(walk(base, proc.pid, walked, a.runs if name != "trivial" else 2 * a.runs, out))
                per_round[name].append(out)

    def cpu_ms(name: str, step: str) -> float:         # median over rounds of the round's mean CPU per run
        return 1000 * statistics.median(statistics.fmean(c for c, _ in r[step]) for r in per_round[name])

    def wall(name: str, step: str) -> str:
        xs = [w for r in per_round[name] for _, w in r[step]]
        return f"wall p50 {1000 * percentile(xs, 50):.0f} ms, p95 {1000 * percentile(xs, 95):.0f} ms"

    base = cpu_ms("trivial", "trivial")
    print(f"server CPU per full run, {a.rounds} rounds x {a.runs} walks of {' -> '.join(ROUND)}, server CPUs "
          f"{a.server_cpus}, client CPUs {a.client_cpus}; medians over rounds")
    print(f"  {'trivial page':<14} {base:6.1f} ms  (1.00x trivial)  {wall('trivial', 'trivial')}")
    for step in steps:
        line = f"  {step:<14} {cpu_ms('app', step):6.1f} ms  ({cpu_ms('app', step) / base:.2f}x trivial)  {wall('app', step)}"
        if a.before:
            b = cpu_ms("before", step)
            line += f"  | before {b:.1f} ms ({b / base:.2f}x trivial), after/before {cpu_ms('app', step) / b:.2f}"
        print(line)
    mean = lambda name: statistics.fmean(cpu_ms(name, s) for s in ROUND)
    line = f"  {'round mean':<14} {mean('app'):6.1f} ms  ({mean('app') / base:.2f}x trivial)"
    if a.before:
        line += f"  | before {mean('before'):.1f} ms, after/before {mean('app') / mean('before'):.2f}"
    print(line)


if __name__ == "__main__":
    main()
