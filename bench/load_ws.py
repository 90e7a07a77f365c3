"""Load test without browsers: N sessions speak Streamlit's own websocket protocol to one server.

Chromium needs about a core per few open pages, so on a small machine a browser load test measures the
browsers (bench/load_classroom.py says how busy each side was). This client costs almost nothing: each
session sends what the frontend still sends now that stepping, playing and scrubbing a figure happen in
the browser (app_pages/_support/player.py), and times the server's answer:

    page load      a page opened (the memory table, compare, start): the rerun -> its script_finished
    scrub          the player's position sent with the next click outside it (the relay component, a full
                   run of the memory page): the rerun -> its script_finished
    real run       Run pressed with a prompt of its own -> the "... tokens through ..." caption arrives,
                   once a minute per real-model session

A browsing session goes round memory -> scrub -> scrub -> compare -> start with --think seconds between
answers; sessions arrive spread over --ramp seconds (a class opening the link) and stop at --duration.
Before the clock starts, one session opens every page once (the frames of an example are built once per
server and shared by every session).

    python bench/load_ws.py --sessions 60 --real 5 --think 2 --duration 90 --server-cpus 0-1 --client-cpus 2
    python bench/load_ws.py ... --url http://127.0.0.1:8600      # through deploy/serve-class.sh's nginx

One real-model session disconnects right after pressing Run (a student closing the tab); the rest must
still finish. Prints p50 / p95, the server's peak RSS and how busy its CPUs were. 127.0.0.1 only.

Heavy work pressed at once (issue 38): --train N sessions open the recall page and press Train together
(seeds 0..N-1), --burst makes the --real sessions press Run together too (no ramp, one Run each, after a
lone Run is timed), and the memory-page loads are counted apart while any of those waits or runs and
while none does. --verify then trains each seed alone (python -m gdn.recall --quick) and compares its
accuracies with what the page said:

    python bench/load_ws.py --sessions 6 --real 0 --train 4 --duration 150 --ramp 0 --server-cpus 0-1 --verify
    python bench/load_ws.py --sessions 10 --real 5 --burst --duration 40 --ramp 0 --server-cpus 0-1

--trials N repeats the burst N times (issue 50: "the slowest <= 4x a lone Run in each of 5 trials"): each
trial times a lone Run, then the --real sessions press Run together, every prompt new to the server (nothing
kept answers it); each trial's Runs and its slowest / lone ratio are printed:

    python bench/load_ws.py --sessions 8 --real 5 --burst --trials 5 --duration 30 --ramp 0 --server-cpus 0-1 --client-cpus 1
"""
from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import re
import statistics
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import websockets
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState

from gdn.qwen35.tokenizer import trim_prompt
from bench.load_classroom import parse_cpus, percentile, rss_of_tree
from devtools.app_server import start_server

MEMORY_QUERY = "lang=en&memory_preset=k1_update"
ROUND = ("memory_table", "scrub", "scrub", "compare", "start")     # a browsing session's round of pages
REAL_EVERY_S = 60.0


def is_figure(kind: str, body: str) -> bool:
    """A figure arrived: a Plotly chart, or one of the figures the pages draw as HTML (the real model's gates)."""
    return kind == "plotly_chart" or (kind == "html" and ("gdn-figure" in body or "rm-gates" in body))


def model_text(prompt: str) -> str:
    """What the real-model page tokenizes for the shipped demo models (app_pages/_real_model/prompt.py): the
    prompt without its surrounding blanks, then a leading space, as in their training. Counting anything else
    gives a token too many or few, and the run's "N tokens through" line is then never seen."""
    return " " + trim_prompt(prompt)[0]


class Session:
    """One browser tab, as the server sees it."""

    def __init__(self, ws):
        self.ws, self.widgets, self.fragments = ws, {}, {}     # widget id by key suffix; fragment of each

    async def rerun(self, query: str, page: str = "", widgets=(), fragment: str = "") -> None:
        msg = BackMsg()
        state = msg.rerun_script
        state.query_string, state.page_name, state.fragment_id = query, page, fragment
        state.widget_states.widgets.extend(widgets)
        await self.ws.send(msg.SerializeToString())

    async def until(self, done, timeout: float) -> float:
        """Read ForwardMsgs until done(element type, text) is true; remember widget ids. Returns seconds."""
        t0 = time.perf_counter()
        while True:
            msg = ForwardMsg()
            msg.ParseFromString(await asyncio.wait_for(self.ws.recv(), timeout))
            if msg.WhichOneof("type") == "script_finished" and done("script_finished", ""):
                return time.perf_counter() - t0
            if msg.WhichOneof("type") == "delta" and msg.delta.WhichOneof("type") == "new_element":
                element = msg.delta.new_element
                kind = element.WhichOneof("type")
                inner = getattr(element, kind)
                wid = getattr(inner, "id", "")
                if wid:
                    key = wid.rsplit("-", 1)[-1]
                    self.widgets[key], self.fragments[key] = wid, msg.delta.fragment_id
                if done(kind, getattr(inner, "body", "")):
                    return time.perf_counter() - t0

    def trigger(self, key: str) -> WidgetState:
        return WidgetState(id=self.widgets[key], trigger_value=True)

    def relay(self, t: int, stage: str) -> WidgetState:
        """What the views' relay sends before a click outside the player: the position it stepped to
        (assets/common/view.js, flush)."""
        wid = next(w for k, w in self.widgets.items() if k.endswith("gdn_view_relay"))
        message = {"kind": "position", "id": "memory", "t": t, "stage": stage}
        return WidgetState(id=wid, json_value=json.dumps({"sent": {"n": t, "messages": [message]}}))


finished = lambda kind, _: kind == "script_finished"


async def browse_session(uri: str, out: dict, rng: random.Random) -> None:
    await asyncio.sleep(rng.uniform(0, out["ramp"]))
    async with websockets.connect(uri, subprotocols=["streamlit"], max_size=None) as ws:
        s = Session(ws)
        for n in range(10_000):
            if time.monotonic() >= out["end"]:
                return
            what = ROUND[n % len(ROUND)]
            if what == "scrub":
                await s.rerun(MEMORY_QUERY, page="memory_table", widgets=[s.relay(rng.randint(1, 5), "write")])
            else:
                await s.rerun(MEMORY_QUERY if what == "memory_table" else "lang=en", page=what)
            heavy = out["heavy"] > 0                    # a training or a Run waits or runs meanwhile
            took = await s.until(finished, out["timeout"])
            out["scrub" if what == "scrub" else "load"].append(took)
            if what == "memory_table":
                out["memory_busy" if heavy and out["heavy"] > 0 else "memory_idle"].append(took)
            await asyncio.sleep(out["think"])           # a student reads the page before the next click


async def real_session(uri: str, i: int, out: dict, abandon: bool, rng: random.Random) -> None:
    await asyncio.sleep(rng.uniform(0, out["ramp"]))
    async with websockets.connect(uri, subprotocols=["streamlit"], max_size=None) as ws:
        s = Session(ws)
        t0 = time.perf_counter()
        await s.rerun("lang=en", page="real_model")
        await s.until(is_figure, out["timeout"])
        out["first_real"].append(time.perf_counter() - t0)
        await s.until(finished, out["timeout"])
        mark, told = f"{out['n_tokens'][i]} tokens through", []
        while True:
            started = time.monotonic()
            prompt = WidgetState(id=s.widgets["real_model_prompt_edit"], string_value=out["prompt"](i))
            await s.rerun("lang=en", page="real_model", widgets=[prompt, s.trigger("real_model_run")])
            if abandon:
                out["abandoned"] += 1
                return                                   # the tab closes while its run waits or computes
            out["real"].append(await s.until(lambda _, body: told.append("in line" in body) or mark in body,
                                             out["timeout"]))
            await s.until(finished, out["timeout"])
            out["told_line"] += any(told)
            if started + REAL_EVERY_S >= out["end"]:
                return
            await asyncio.sleep(started + REAL_EVERY_S - time.monotonic())


TRAIN_DONE = re.compile(r"Seed (\d+), all steps trained, (\d+) s waited: linear attention (\d+) %, DeltaNet (\d+) %")
TRAIN_CUT = re.compile(r"Seed (\d+): stopped at step (\d+) of (\d+)")         # the page before issue 38


async def train_session(uri: str, seed: int, out: dict, go: asyncio.Event, ready: list) -> None:
    """Open the recall page, wait for every trainer to have it open, press Train with this seed together
    with them, and wait for the result: its text, seconds, and whether the page said the place in line."""
    async with websockets.connect(uri, subprotocols=["streamlit"], max_size=None) as ws:
        s = Session(ws)
        query = f"lang=en&recall_seed={seed}"
        await s.rerun(query, page="recall")
        await s.until(finished, out["timeout"])
        ready.append(seed)
        await go.wait()
        got, told = [], []

        def done(kind, body):
            told.append("ahead of you" in body or "next in line" in body)
            if TRAIN_DONE.search(body) or TRAIN_CUT.search(body):
                got.append(body)
                return True
            return False
        out["heavy"] += 1
        try:
            await s.rerun(query, page="recall", widgets=[s.trigger("recall_train")])
            seconds = await s.until(done, out["timeout"])
        finally:
            out["heavy"] -= 1
        out["train"].append({"seed": seed, "seconds": seconds, "text": got[0], "told_place": any(told)})


async def burst_run(uri: str, i: int, out: dict, go: asyncio.Event | None, ready: list, key: str) -> None:
    """One Run with prompt i (pressed when `go` is set, with the others): seconds to its result, appended to out[key]."""
    async with websockets.connect(uri, subprotocols=["streamlit"], max_size=None) as ws:
        s = Session(ws)
        await s.rerun("lang=en", page="real_model")
        await s.until(finished, out["timeout"])
        ready.append(i)
        if go is not None:
            await go.wait()
        mark = f"{out['n_tokens'][i]} tokens through"
        prompt = WidgetState(id=s.widgets["real_model_prompt_edit"], string_value=out["prompt"](i))
        out["heavy"] += 1
        try:
            await s.rerun("lang=en", page="real_model", widgets=[prompt, s.trigger("real_model_run")])
            out.setdefault(key, []).append(await s.until(lambda _, body: mark in body, out["timeout"]))
        finally:
            out["heavy"] -= 1
        await s.until(finished, out["timeout"])


async def pressed_together(make, n: int) -> list:
    """n sessions made by make(i, go, ready) press at the same moment, once all have their page open."""
    go, ready = asyncio.Event(), []
    tasks = [asyncio.ensure_future(make(i, go, ready)) for i in range(n)]
    while len(ready) < n and not any(t.done() for t in tasks):
        await asyncio.sleep(0.05)
    go.set()
    return tasks


async def warm_up(uri: str, timeout: float) -> None:
    """One visit to every page before the clock starts: a class meets a server that has drawn each page
    once (each example's frames are built once per server, then shared)."""
    async with websockets.connect(uri, subprotocols=["streamlit"], max_size=None) as ws:
        s = Session(ws)
        for page in ("memory_table", "compare", "start", "real_model", "recall"):
            await s.rerun(MEMORY_QUERY if page == "memory_table" else "lang=en", page=page)
            await s.until(finished, timeout)


async def run(base: str, sessions: int, real: int, timeout: float, think: float, duration: float,
              ramp: float, pid: int | None = None, train: int = 0, burst: bool = False, trials: int = 1) -> dict:
    from gdn.qwen35 import load_tokenizer
    from gdn.qwen35.sources import TRAINED_PATH
    tok = load_tokenizer(TRAINED_PATH)
    prompt = lambda i: f"the tiger is red . session {i} asks : ask tiger ? " * (20 + i)
    out = {"load": [], "scrub": [], "real": [], "first_real": [], "told_line": 0, "abandoned": 0, "failed": [],
           "timeout": timeout, "think": think, "prompt": prompt, "ramp": ramp, "end": time.monotonic() + duration,
           "heavy": 0, "memory_idle": [], "memory_busy": [], "train": [], "burst": [], "lone_run": [],
           "n_tokens": [len(tok.encode(model_text(prompt(i)), max_tokens=512).ids) for i in range((real + 1) * trials)]}
    uri = base.replace("http", "ws") + "/_stcore/stream"
    await warm_up(uri, timeout)
    out["cpu0"] = cpu_seconds(pid) if pid else 0.0       # the server's own CPU from here on: the class's load
    out["end"] = time.monotonic() + duration
    rng = random.Random(0)
    if burst and real:                                   # a lone Run first (prompt `real`: cached by nobody)
        await burst_run(uri, real, out, None, [], "lone_run")
        out["end"] = time.monotonic() + duration
    tasks = [asyncio.ensure_future(browse_session(uri, out, rng)) for _ in range(sessions - real)]
    if burst:
        await asyncio.sleep(min(20.0, duration / 4))    # idle page loads first
        for trial in range(1, trials):                  # the extra trials, each on prompts of its own: lone, then together
            first = trial * (real + 1)
            await burst_run(uri, first + real, out, None, [], f"lone_run_{trial}")
            await asyncio.gather(*await pressed_together(
                lambda i, go, ready: burst_run(uri, first + i, out, go, ready, f"burst_{trial}"), real))
            await asyncio.sleep(min(5.0, duration / 8))   # idle page loads between the trials
        tasks += await pressed_together(lambda i, go, ready: burst_run(uri, i, out, go, ready, "burst"), real)
    else:
        tasks += [asyncio.ensure_future(real_session(uri, i, out, abandon=i == 0, rng=rng)) for i in range(real)]
    if train:
        if not burst:
            await asyncio.sleep(min(20.0, duration / 4))
        tasks += await pressed_together(lambda i, go, ready: train_session(uri, i, out, go, ready), train)
    for result in await asyncio.gather(*tasks, return_exceptions=True):
        if isinstance(result, BaseException):
            out["failed"].append(f"{type(result).__name__}: {str(result)[:100]}")
    return out


def cpu_seconds(pid: int) -> float:
    """utime + stime of the process (every thread, finished ones included), in seconds: the server's own
    CPU, whatever else shares its cores (busy() counts the neighbours too)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def busy(cpus: set[int]) -> tuple[int, int]:
    """(busy, total) jiffies of these CPUs so far, from /proc/stat."""
    b = t = 0
    with open("/proc/stat") as f:
        for line in f:
            m = re.match(r"cpu(\d+) (.*)", line)
            if m and int(m.group(1)) in cpus:
                v = [int(x) for x in m.group(2).split()]
                t += sum(v[:8])
                b += sum(v[:8]) - v[3] - v[4]                    # minus idle and iowait
    return b, t


def report_trainings(done: list[dict], verify: bool, cpus: set[int]) -> None:
    """Each training's wait and result; with verify, the same seed trained alone (one process per seed, on
    the server's CPUs, after the server stopped) must give the same accuracies."""
    print(f"  trainings: {len(done)} finished, told their place in line: {sum(d['told_place'] for d in done)}")
    alone = lone_trainings([d["seed"] for d in done], cpus) if verify else {}
    for d in sorted(done, key=lambda d: d["seed"]):
        m, cut = TRAIN_DONE.search(d["text"]), TRAIN_CUT.search(d["text"])
        shown = f"linear {m.group(3)} %, DeltaNet {m.group(4)} %" if m else f"CUT at step {cut.group(2)}"
        line = f"    seed {d['seed']}: {d['seconds']:.0f} s, {shown}"
        if d["seed"] in alone:
            lin, dn, wall = alone[d["seed"]]
            # the page shows whole percent, the command three decimals (998/1024 = 0.975 there, 97 % here)
            same = m is not None and all(abs(int(m.group(g)) - x * 100) <= 0.55 for g, x in ((3, lin), (4, dn)))
            line += (f"; alone: linear {lin * 100:.0f} %, DeltaNet {dn * 100:.0f} % ({'same' if same else 'DIFFERENT'}),"
                     f" {wall:.0f} s")
        print(line)
    if alone:
        waits = [d["seconds"] for d in done]
        lone = statistics.median(w for *_, w in alone.values())
        print(f"  training -> result: p50 {percentile(waits, 50):.0f} s, p95 {percentile(waits, 95):.0f} s = "
              f"{percentile(waits, 95) / lone:.1f}x a lone training (median {lone:.0f} s)")


def lone_trainings(seeds: list[int], cpus: set[int]) -> dict[int, tuple[float, float, float]]:
    """python -m gdn.recall --quick --seed N for each seed, as many at once as there are CPUs: each seed's
    accuracies (linear, DeltaNet) and seconds."""
    import subprocess
    from concurrent.futures import ThreadPoolExecutor
    root = Path(__file__).resolve().parents[1]

    def one(seed):
        text = subprocess.run(["taskset", "-c", ",".join(map(str, sorted(cpus))), sys.executable, "-m", "gdn.recall",
                               "--quick", "--seed", str(seed)], capture_output=True, text=True, cwd=root,
                              env={**os.environ, "OMP_NUM_THREADS": "1"}, check=True).stdout
        acc = dict(re.findall(r"^(\w+)\s+accuracy ([\d.]+)", text, re.M))
        wall = float(re.search(r"([\d.]+) s wall", text).group(1))
        return seed, (float(acc["linear"]), float(acc["deltanet"]), wall)
    with ThreadPoolExecutor(len(cpus)) as pool:
        return dict(pool.map(one, seeds))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sessions", type=int, default=30)
    ap.add_argument("--real", type=int, default=5)
    ap.add_argument("--server-cpus", default="0")
    ap.add_argument("--client-cpus", default="1")
    ap.add_argument("--omp", default="", help="OMP_NUM_THREADS for the server (empty: unset)")
    ap.add_argument("--timeout", type=float, default=300.0)
    ap.add_argument("--url", default="", help="an already running server or nginx (e.g. deploy/serve-class.sh) on "
                                              "127.0.0.1; --server-cpus then only says which CPUs to watch")
    ap.add_argument("--think", type=float, default=2.0, help="seconds between an answer and the next click")
    ap.add_argument("--duration", type=float, default=90.0, help="seconds of browsing (real-model runs: one a minute)")
    ap.add_argument("--ramp", type=float, default=20.0, help="sessions arrive spread over this many seconds")
    ap.add_argument("--train", type=int, default=0, help="sessions that press the recall page's Train together")
    ap.add_argument("--burst", action="store_true", help="the --real sessions press Run together, once each")
    ap.add_argument("--trials", type=int, default=1, help="with --burst: a lone Run then the Runs pressed together, "
                                                          "this many times, each on new prompts")
    ap.add_argument("--verify", action="store_true", help="train each --train seed alone afterwards and compare")
    ap.add_argument("--root", default="", help="serve another checkout of the repository (a before, e.g. a git "
                                               "worktree of main)")
    a = ap.parse_args()
    if not 1 <= a.sessions <= 200 or not 0 <= a.real <= a.sessions:
        ap.error("1 <= sessions <= 200 and 0 <= real <= sessions")
    os.sched_setaffinity(0, parse_cpus(a.client_cpus))
    # every session comes from 127.0.0.1, one client to the job line: lift its per-client cap for the bench
    env = {"GDN_JOBS_PER_CLIENT": "200", **({"OMP_NUM_THREADS": a.omp} if a.omp else {})}
    server_cpus = parse_cpus(a.server_cpus)
    if a.url and not a.url.startswith("http://127.0.0.1:"):
        ap.error("--url must be a server on 127.0.0.1")
    root = {"root": Path(a.root)} if a.root else {}
    server = contextlib.nullcontext((a.url, None)) if a.url else start_server(prefix=("taskset", "-c", a.server_cpus),
                                                                             env=env, **root)
    with server as (base, proc):
        pid = proc.pid if proc else None
        peak, stop = [rss_of_tree(pid) if pid else 0], threading.Event()
        threading.Thread(target=lambda: [peak.append(rss_of_tree(pid) if pid else 0)
                                         for _ in iter(lambda: stop.wait(0.5), True)], daemon=True).start()
        b0, t0_j, t0, c0 = *busy(server_cpus), time.perf_counter(), time.process_time()
        out = asyncio.run(run(base, a.sessions, a.real, a.timeout, a.think, a.duration, a.ramp, pid, a.train, a.burst,
                              a.trials))
        b1, t1_j = busy(server_cpus)
        own = cpu_seconds(pid) - out["cpu0"] if pid else None
        stop.set()
        wall, client_cpu = time.perf_counter() - t0, time.process_time() - c0
    f = lambda xs: f"p50 {percentile(xs, 50):.2f} s, p95 {percentile(xs, 95):.2f} s (n={len(xs)})"
    print(f"sessions {a.sessions} ({a.real} real-model, 1 abandoned), server CPUs {a.server_cpus} "
          f"({100 * (b1 - b0) / max(t1_j - t0_j, 1):.0f}% busy), OMP_NUM_THREADS {a.omp or 'unset'}, "
          f"think time {a.think:g} s, {a.duration:g} s of browsing, wall {wall:.0f} s" + (f", via {a.url}" if a.url else ""))
    print(f"  page load:                   {f(out['load'])}")
    print(f"  scrub (relay, full run):     {f(out['scrub'])}")
    print(f"  page load or scrub:          {f(out['load'] + out['scrub'])}")
    print(f"  real model, first figure:    {f(out['first_real'])}")
    print(f"  real model, Run -> result:   {f(out['real'])}; told their place in line: {out['told_line']}")
    print(f"  memory page, nothing heavy:  {f(out['memory_idle'])}")
    print(f"  memory page, heavy work on:  {f(out['memory_busy'])}")
    if out["lone_run"]:
        # trial 0 is the original one (its lone Run before the idle page loads, its burst last)
        out["lone_run_0"], out["burst_0"] = out["lone_run"], out["burst"]
        for trial in range(a.trials):
            lone, runs = out.get(f"lone_run_{trial}", [float("nan")])[0], sorted(out.get(f"burst_{trial}", []))
            slowest = max(runs, default=float("nan"))
            print(f"  trial {trial + 1}: {len(runs)} Runs pressed together {', '.join(f'{r:.2f}' for r in runs)} s; "
                  f"slowest = {slowest / lone:.1f}x a lone Run ({lone:.2f} s)")
    if out["train"]:
        report_trainings(out["train"], a.verify, server_cpus)
    print(f"  failed sessions: {len(out['failed'])} {out['failed'][:3]}")
    # the client is one Python process: past about 70 % of its core its own queue shows up in every latency
    print(f"  client CPU: {client_cpu:.1f} s, {100 * client_cpu / wall:.0f}% of one core")
    print(f"  server peak RSS: {max(peak) / 1e9:.2f} GB")
    if own is not None:      # after the warm-up; the real-model runs included: the load the class put on it
        runs = len(out["load"]) + len(out["scrub"])
        print(f"  server process CPU: {own:.1f} s, {1000 * own / max(runs, 1):.1f} ms per page load or scrub answered")


if __name__ == "__main__":
    main()
