"""The practice judge's speed, against peers measured in the same run (127.0.0.1 only):

1. A correct submission's verdict: 20 judged one after another (the sandbox where bubblewrap works, as a
   class server judges), alternating with the floor under it, a bare child that only imports torch
   (`python -I -c "import torch"`). Prints p50 / p95 of both and their ratio; the goal is p95 <= 3 s.
2. A class pressing Run together: the app on a free port; another visitor opens the memory page again and
   again, first while nothing else happens (idle), then while 20 sessions (Streamlit's own websocket
   protocol, bench/load_ws.py's client) press Run at the same moment with a correct file. Prints the
   visitor's page loads busy / idle (goal <= 3x) and each submission's seconds to its verdict.

    python bench/bench_practice.py                  # both
    python bench/bench_practice.py --only direct    # or --only class
"""
from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import websockets
from streamlit.proto.WidgetStates_pb2 import WidgetState

from gdn.practice.judge import judge
from gdn.practice.runner import sandbox_problem
from bench.load_classroom import percentile
from bench.load_ws import MEMORY_QUERY, Session, finished
from devtools.app_server import start_server

SOLUTION = (Path(__file__).resolve().parents[1] / "tests" / "practice_solutions" / "four_stages.py").read_text()


def direct(n: int) -> None:
    sandbox = sandbox_problem() is None
    ours, floor = [], []
    for i in range(n):
        t0 = time.perf_counter()
        verdict = judge("four_stages", SOLUTION, sandbox=sandbox, seed=i + 1)
        ours.append(time.perf_counter() - t0)
        assert verdict.passed, verdict
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-I", "-c", "import torch"], check=True)
        floor.append(time.perf_counter() - t0)
    say = lambda xs: f"p50 {statistics.median(xs):.2f} s, p95 {percentile(xs, 95):.2f} s"
    print(f"verdicts ({'sandbox' if sandbox else 'limits'}, {n}, alternating): ours {say(ours)}; "
          f"bare import torch {say(floor)}; ratio p95 {percentile(ours, 95) / percentile(floor, 95):.2f}x; "
          f"goal p95 <= 3 s: {'met' if percentile(ours, 95) <= 3 else 'NOT met'}")


def run_state(s: Session, code: str) -> WidgetState:
    """What the editor's Run sends: the component's trigger aggregator with one "run" event."""
    wid = next(w for k, w in s.widgets.items() if k.endswith("_practice_editor"))
    payload = [{"event": "run", "value": {"code": code, "at": time.time()}}]
    return WidgetState(id=f"$$STREAMLIT_INTERNAL_KEY_{wid}__events", json_trigger_value=json.dumps(payload))


async def submitter(uri: str, go: asyncio.Event, ready: list, out: dict) -> None:
    async with websockets.connect(uri, subprotocols=["streamlit"], max_size=None) as ws:
        s = Session(ws)
        await s.rerun("lang=en&practice_exercise=four_stages", page="practice")
        await s.until(finished, 120)
        ready.append(1)
        await go.wait()
        out["heavy"] += 1
        try:
            await s.rerun("lang=en&practice_exercise=four_stages", page="practice", widgets=[run_state(s, SOLUTION)])
            seen = []
            took = await s.until(lambda kind, body: (seen.append(body) or "tests passed" in body), 300)
            out["verdicts"].append(took)
            out["passed"] += any(b.startswith("All 4 tests passed") for b in seen)
        finally:
            out["heavy"] -= 1


async def visitor(uri: str, out: dict, stop: asyncio.Event) -> None:
    async with websockets.connect(uri, subprotocols=["streamlit"], max_size=None) as ws:
        s = Session(ws)
        while not stop.is_set():
            await s.rerun(MEMORY_QUERY, page="memory_table")
            took = await s.until(finished, 120)
            out["busy" if out["heavy"] else "idle"].append(took)
            await asyncio.sleep(0.2)


async def class_run(base: str, n: int) -> dict:
    uri = base.replace("http", "ws") + "/_stcore/stream"
    out = {"idle": [], "busy": [], "verdicts": [], "passed": 0, "heavy": 0}
    async with websockets.connect(uri, subprotocols=["streamlit"], max_size=None) as ws:   # warm: each page once
        s = Session(ws)
        for page, query in (("memory_table", MEMORY_QUERY), ("practice", "lang=en")):
            await s.rerun(query, page=page)
            await s.until(finished, 120)
    stop = asyncio.Event()
    watching = asyncio.ensure_future(visitor(uri, out, stop))
    while len(out["idle"]) < 10:
        await asyncio.sleep(0.1)
    go, ready = asyncio.Event(), []
    tasks = [asyncio.ensure_future(submitter(uri, go, ready, out)) for _ in range(n)]
    while len(ready) < n:
        await asyncio.sleep(0.05)
    go.set()
    await asyncio.gather(*tasks)
    stop.set()
    await watching
    return out


def class_load(n: int) -> None:
    with start_server() as (base, _):
        out = asyncio.run(class_run(base, n))
    idle, busy = percentile(out["idle"], 95), percentile(out["busy"], 95) if out["busy"] else float("nan")
    print(f"another visitor's memory page, p95: idle {idle:.2f} s ({len(out['idle'])} loads), while {n} Runs are "
          f"judged {busy:.2f} s ({len(out['busy'])} loads): {busy / idle:.2f}x (goal <= 3x)")
    v = out["verdicts"]
    print(f"{n} Runs pressed together: {out['passed']} passed; seconds to each verdict p50 {statistics.median(v):.1f}, "
          f"p95 {percentile(v, 95):.1f}, last {max(v):.1f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", choices=("direct", "class"))
    ap.add_argument("-n", type=int, default=20)
    args = ap.parse_args()
    if args.only in (None, "direct"):
        direct(args.n)
    if args.only in (None, "class"):
        class_load(args.n)


if __name__ == "__main__":
    main()
