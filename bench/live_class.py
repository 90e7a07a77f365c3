"""A live class under load, through the real app: N students vote through deploy/serve-class.sh --replicas R.

Every student is a websocket client speaking Streamlit's own protocol (as bench/load_ws.py): it opens
/classroom?join=CODE on nginx, reports its localStorage the way the page's component does (no seat yet:
the server mints one and sends it back, and the client keeps it for its reconnects, as the browser's
localStorage does), then does what a phone's frontend does: reruns the student fragment every 1 s
(run_every) until the lesson ends and, at a random moment, taps an option (a button trigger); a quarter
of the students change their answer once. Students join over the first half of the window, as a room
scans a QR code, all from one address (127.0.0.1 through nginx: a class behind one NAT), so the seat
mint's rate per address (gdn/live/store.py: MINT_BURST, MINT_PER_S) applies to the whole class.
A vote counts as acknowledged when the fragment run that handled the tap shows "Your answer is in"
(the app draws it only after the store committed the vote).

The teacher is one more websocket session, connected straight to replica 0 (so the killed replica is
never the teacher's): it presses "Start a live session" and "Next question" like the browser would,
then reruns the projector's bars fragment every 0.5 s and reads "<n> answers" from what the app draws.

    joining         a student's first page request -> its phone shows the question's buttons (it has a
                    seat); p50 / p95 / max, and the first request to the last student seated: the whole
                    class behind one address, within the mint's rate
    projector lag   a vote's acknowledgement -> the first projector frame whose count includes it
                    (counts only grow within a round: the k-th acknowledged first vote is in every frame
                    showing >= k answers); p50 / p95 over all first votes. Twice: the app's projector
                    (the teacher's fragment, drawn by replica 0: includes that replica's queue when the
                    machine is busy), and the store read directly every second by this process (how long
                    a committed vote takes to be visible to every replica)
    lost / doubled  the store's final counts against each student's last acknowledged answer
    kill            one replica (not the teacher's) is SIGKILLed while votes are in flight; its students
                    reconnect through nginx to another replica and tap again if their tap was not
                    acknowledged (a phone's frontend reconnects by itself; a student whose answer did
                    not show taps again)
    restart         after the run the whole server (and PostgreSQL) is stopped and started again; the
                    room and its counts are read back

    replica CPU     CPU seconds the replicas used per student fragment run (what one phone costs a
                    second), hence students per core at one poll a second
    store rate      --throughput: 4 processes (as 4 replicas) voting as fast as they can, and reading the
                    projector's snapshot as fast as they can: votes and snapshots per second per store

    python bench/live_class.py --students 200 --replicas 4 --store both     # sqlite, then postgresql
    python bench/live_class.py --throughput --store both

It prints the numbers per store; 127.0.0.1 only. Needs nginx, and for postgresql Debian's postgresql.
"""
from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import re
import secrets
import signal
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import websockets  # noqa: E402  (a dependency of the benches only)
from streamlit.proto.BackMsg_pb2 import BackMsg  # noqa: E402
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg  # noqa: E402
from streamlit.proto.WidgetStates_pb2 import WidgetState  # noqa: E402

from gdn.live.store import MINT_BURST, MINT_PER_S, Store  # noqa: E402
from bench.load_classroom import percentile  # noqa: E402
from devtools import class_server as class_server_process  # noqa: E402
from devtools.app_server import free_port  # noqa: E402
from devtools.pg_server import postgres_server  # noqa: E402

POLL_S = 0.5                # the projector's bars fragment's run_every (app_pages/_live.py: REFRESH_S)
FOLLOW_S = 1.0              # a phone's fragment's run_every (FOLLOW_S)


class Session:
    """One browser tab as the server sees it: sends reruns, reads what the script draws."""

    def __init__(self, ws, query: str):
        self.ws, self.query = ws, query
        self.widgets: dict[str, str] = {}         # widget id by its key
        self.fragment = ""                        # the fragment that drew the last element of a fragment run
        self.fragment_of: dict[str, str] = {}     # the fragment of each widget (by key) and of "bars"
        self.bodies: list[str] = []               # html / markdown / alert bodies of the last run
        self.seat: str | None = None              # the seat the server asked the browser to keep
        self.page_hash = ""                       # the page's script hash, as a browser sends it back

    async def run(self, widgets=(), fragment: bool | str = False, timeout: float = 120.0) -> list[str]:
        """fragment: False (a full run), True (the fragment seen last: a phone's one fragment) or a
        widget key / "bars" (the fragment that drew it)."""
        msg = BackMsg()
        state = msg.rerun_script
        state.query_string, state.page_name, state.page_script_hash = self.query, "classroom", self.page_hash
        state.fragment_id = (self.fragment_of[fragment] if isinstance(fragment, str) else
                             self.fragment if fragment else "")
        state.widget_states.widgets.extend(widgets)
        await self.ws.send(msg.SerializeToString())
        self.bodies = []
        while True:
            fwd = ForwardMsg()
            fwd.ParseFromString(await asyncio.wait_for(self.ws.recv(), timeout))
            kind = fwd.WhichOneof("type")
            if kind == "navigation" and fwd.navigation.page_script_hash:
                self.page_hash = fwd.navigation.page_script_hash    # a rerun the app asks for keeps the page
            if kind == "script_finished":
                if fwd.script_finished == ForwardMsg.FINISHED_EARLY_FOR_RERUN:
                    continue                      # the app asked for a rerun (st.rerun): its answer follows
                return self.bodies
            if kind == "delta" and fwd.delta.WhichOneof("type") == "new_element":
                element = fwd.delta.new_element
                inner = getattr(element, element.WhichOneof("type"))
                if fwd.delta.fragment_id:
                    self.fragment = fwd.delta.fragment_id
                if getattr(inner, "id", ""):
                    self.widgets[inner.id.rsplit("-", 1)[-1]] = inner.id
                    self.fragment_of[inner.id.rsplit("-", 1)[-1]] = fwd.delta.fragment_id
                if '"seat"' in getattr(inner, "json", "") and '"token"' in inner.json:
                    self.seat = json.loads(inner.json)["seat"]["token"] or self.seat   # localStorage keeps it
                if getattr(inner, "body", ""):
                    self.bodies.append(inner.body)
                    if "gdn-live-count" in inner.body:
                        self.fragment_of["bars"] = fwd.delta.fragment_id
                if getattr(inner, "label", ""):
                    self.bodies.append(inner.label)

    def trigger(self, key: str) -> WidgetState:
        return WidgetState(id=self.widgets[key], trigger_value=True)

    def identity(self, code: str, seat: str | None) -> WidgetState:
        """What the localStorage component reports: the seat this browser kept for the room, if any."""
        wid = next(w for k, w in self.widgets.items() if k.endswith("live_identity"))
        return WidgetState(id=wid, json_value=json.dumps({"seats": {code: seat} if seat else {}, "host": None}))


async def teacher(direct_url: str, out: dict, stop: asyncio.Event) -> None:
    async with websockets.connect(direct_url, subprotocols=["streamlit"], max_size=None) as ws:
        s = Session(ws, "lang=en")
        await s.run()
        await s.run([s.trigger("live_start")])
        out["code"] = re.search(r'data-code="(\w+)"', " ".join(s.bodies)).group(1)
        await s.run([s.trigger("live_next")], fragment="live_next")  # asks the first question (round 1)
        while "bars" not in s.fragment_of:                          # the bars fragment draws it
            await s.run()
        out["ready"].set()
        while not stop.is_set():
            t0 = time.monotonic()
            bodies = await s.run(fragment="bars")
            n = re.search(r'gdn-live-count" data-n="(\d+)"', " ".join(bodies))
            out["frames"].append((time.monotonic(), int(n.group(1)) if n else -1))
            await asyncio.sleep(max(0.0, POLL_S - (time.monotonic() - t0)))


async def store_projector(out: dict, stop: asyncio.Event) -> None:
    """The count read from the store itself every POLL_S, in a thread of this process."""
    store = Store(out["db"])
    while not stop.is_set():
        t0 = time.monotonic()
        n = sum((await asyncio.to_thread(store.snapshot, out["code"]))[1])
        out["store_frames"].append((time.monotonic(), n))
        await asyncio.sleep(max(0.0, POLL_S - (time.monotonic() - t0)))
    store.dispose()


async def student(i: int, nginx_url: str, out: dict, rng: random.Random) -> None:
    seat, n_options = None, out["n_options"]
    plan = [rng.randrange(n_options)] + ([rng.randrange(n_options)] if i % 4 == 0 else [])   # a quarter change
    joins = time.monotonic() + rng.uniform(0, out["window"] / 2)
    start = joins + rng.uniform(3, out["window"] / 2)
    taps = [start + k * rng.uniform(2, 6) for k in range(len(plan))]
    end = time.monotonic() + out["window"] + 8          # the phone stays open after its last tap
    give_up = end + 120                                 # a phone never seated, or its taps never in: reported
    done = 0
    await asyncio.sleep(joins - time.monotonic())
    joined_at = time.monotonic()
    out["join_start"].append(joined_at)
    while (done < len(plan) or time.monotonic() < end) and time.monotonic() < give_up:
        try:
            async with websockets.connect(nginx_url, subprotocols=["streamlit"], max_size=None,
                                          open_timeout=60) as ws:
                s = Session(ws, f"lang=en&join={out['code']}")
                await s.run()
                await s.run([s.identity(out["code"], seat)])     # the component's report: a full rerun
                while (done < len(plan) or time.monotonic() < end) and time.monotonic() < give_up:
                    t0 = time.monotonic()
                    seat = s.seat or seat
                    seated = "live_opt_1_0" in s.widgets
                    if seated and i not in out["seated"]:
                        out["seated"][i] = t0
                        out["waited"].append(t0 - joined_at)
                    if seated and done < len(plan) and t0 >= taps[done]:
                        bodies = await s.run([s.trigger(f"live_opt_1_{plan[done]}")], fragment=True)
                        mark = f"Your answer is in: {'ABCDEFGH'[plan[done]]}."     # this tap's answer, not the last one's
                        if any(mark in b for b in bodies):
                            out["acks"].append((time.monotonic(), i, plan[done], done))
                            done += 1
                            continue
                        out["refused"].append(next((b for b in bodies if "answer" in b.lower() or "session" in b.lower()
                                                    or "store" in b.lower()), " ".join(bodies)[-160:])[:160])
                    await s.run(fragment=True)             # run_every: the phone follows the teacher
                    out["polls"] += 1
                    await asyncio.sleep(max(0.0, FOLLOW_S - (time.monotonic() - t0)))
        except (TimeoutError, OSError, websockets.ConnectionClosed, KeyError, StopIteration) as e:
            seat = seat or (s.seat if "s" in locals() else None)
            out["reconnects"].append(f"{type(e).__name__}")      # the replica died: reconnect, tap again
            await asyncio.sleep(rng.uniform(0.2, 1.0))


@contextlib.contextmanager
def class_server(replicas: int, db: str):
    port = free_port()
    # the whole class joins from 127.0.0.1, one address: its per-address seat cap raised to the class
    proc, lines = class_server_process.serving(replicas, port, env={"GDN_CLASS_DB": db, "GDN_CLASS_MINT": "20,4,200"})
    replicas_at = [(int(m.group(1)), m.group(2)) for m in (re.search(r"pid (\d+) on (\S+)", x) for x in lines) if m]
    try:
        time.sleep(1.0)                                    # nginx's listen socket
        yield f"ws://127.0.0.1:{port}/_stcore/stream", replicas_at
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=60)


async def report_progress(out: dict, students: int, stop: asyncio.Event) -> None:
    """Every 10 s on stderr: how many came, are seated and were acknowledged (a long run shows it lives)."""
    t0 = time.monotonic()
    while not stop.is_set():
        await asyncio.sleep(10)
        print(f"  [{time.monotonic() - t0:.0f} s] {len(out['join_start'])} of {students} came, {len(out['seated'])} "
              f"seated, {len(out['acks'])} votes acknowledged, {len(out['reconnects'])} reconnects",
              file=sys.stderr, flush=True)


async def calibrate(direct_url: str, db: str, pid: int, runs: int = 20) -> tuple[float, float]:
    """Replica CPU seconds of one phone's full page run (a join) and of one fragment run (a poll), one
    client alone on an otherwise idle replica: the unit costs of the capacity model."""
    store = Store(db)
    code, secret = store.create_room()
    store.ask(code, secret, "alpha_zero", 4)
    store.dispose()
    costs = []
    async with websockets.connect(direct_url, subprotocols=["streamlit"], max_size=None) as ws:
        s = Session(ws, f"lang=en&join={code}")
        await s.run()
        await s.run([s.identity(code, None)])
        for fragment in (False, True):
            c0 = cpu_seconds(pid)
            for _ in range(runs):
                await s.run(fragment=fragment)
            costs.append((cpu_seconds(pid) - c0) / runs)
    return costs[0], costs[1]


async def class_run(nginx: str, replicas_at, students: int, window: float, kill: bool, db: str = "") -> dict:
    out = {"frames": [], "acks": [], "refused": [], "reconnects": [], "ready": asyncio.Event(), "window": window,
           "n_options": 4, "polls": 0, "store_frames": [], "db": db, "join_start": [], "seated": {}, "waited": []}
    out["join_cpu"], out["poll_cpu"] = await calibrate(f"ws://{replicas_at[1][1]}/_stcore/stream", db, replicas_at[1][0])
    cpu0 = {pid: cpu_seconds(pid) for pid, _ in replicas_at}
    stop = asyncio.Event()
    teacher_task = asyncio.create_task(teacher(f"ws://{replicas_at[0][1]}/_stcore/stream", out, stop))
    await asyncio.wait_for(out["ready"].wait(), 120)
    store_task = asyncio.create_task(store_projector(out, stop))
    rng = random.Random(0)
    tasks = [asyncio.create_task(student(i, nginx, out, rng)) for i in range(students)]
    progress = asyncio.create_task(report_progress(out, students, stop))
    if kill:
        await asyncio.sleep(window / 2)                    # mid-vote
        out["killed_cpu"] = cpu_seconds(replicas_at[-1][0]) - cpu0[replicas_at[-1][0]]
        os.kill(replicas_at[-1][0], signal.SIGKILL)
        out["killed_at"] = time.monotonic()
    await asyncio.gather(*tasks)
    await asyncio.sleep(2 * POLL_S + 1)                    # the projector's last frames
    stop.set()
    await teacher_task
    await store_task
    progress.cancel()
    out["cpu"] = out.get("killed_cpu", 0.0) + sum(cpu_seconds(pid) - cpu0[pid] for pid, _ in replicas_at[:-1 if kill else None])
    return out


def cpu_seconds(pid: int) -> float:
    """user + system CPU time of a process so far (/proc/PID/stat fields 14 and 15)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def lags(out: dict, frames: list) -> list[float]:
    firsts = sorted(t for t, _, _, k in out["acks"] if k == 0)
    result = []
    for k, acked in enumerate(firsts, start=1):
        seen = next((t for t, n in frames if t >= acked and n >= k), None)
        result.append(seen - acked if seen is not None else float("inf"))
    return result


def one_store(label: str, db: str, students: int, replicas: int, window: float, restart) -> None:
    with class_server(replicas, db) as (nginx, replicas_at):
        t0 = time.monotonic()
        out = asyncio.run(class_run(nginx, replicas_at, students, window, kill=True, db=db))
        wall = time.monotonic() - t0
    final = {}
    for _, i, choice, _ in sorted(out["acks"]):            # each student's last acknowledged answer
        final[i] = choice
    expected = [sum(1 for c in final.values() if c == o) for o in range(out["n_options"])]
    restart()
    room, counts = Store(db).snapshot(out["code"])         # after the restart: a fresh process, a fresh pool
    lag, store_lag = lags(out, out["frames"]), lags(out, out["store_frames"])
    lost = sum(max(0, e - c) for e, c in zip(expected, counts))
    doubled = sum(max(0, c - e) for e, c in zip(expected, counts))
    print(f"{label}: {students} students through {replicas} replicas, one replica killed mid-vote, wall {wall:.0f} s")
    print(f"  votes acknowledged: {len(out['acks'])} ({len(final)} students, {len(out['acks']) - len(final)} changes); "
          f"reconnects {len(out['reconnects'])}; taps not acknowledged (tapped again) {len(out['refused'])} "
          f"{sorted(set(out['refused']))[:3]}")
    waited = out["waited"]
    print(f"  joining (all from one address, the mint's burst {MINT_BURST} then {MINT_PER_S:g}/s): "
          f"{len(out['seated'])} of {students} seated; first request -> seated p50 {percentile(waited, 50):.1f} s, "
          f"p95 {percentile(waited, 95):.1f} s, max {max(waited, default=float('nan')):.1f} s; the whole class "
          f"seated {max(out['seated'].values(), default=float('nan')) - min(out['join_start']):.1f} s after the "
          f"first phone came")
    print(f"  projector lag: p50 {percentile(lag, 50):.2f} s, p95 {percentile(lag, 95):.2f} s, max {max(lag):.2f} s "
          f"(n={len(lag)}, {len(out['frames'])} projector frames); the store read directly: p50 "
          f"{percentile(store_lag, 50):.2f} s, p95 {percentile(store_lag, 95):.2f} s")
    print(f"  after a restart: room {room.code} question {room.question}, counts {counts}, expected {expected}: "
          f"lost {lost}, doubled {doubled}")
    print(f"  replica CPU: {out['cpu']:.1f} s in the run ({out['polls']} phone polls, {students} joins, the taps, the "
          f"projector); one client alone: a join {1000 * out['join_cpu']:.0f} ms, a poll {1000 * out['poll_cpu']:.0f} ms "
          f"-> a core keeps about {FOLLOW_S / out['poll_cpu']:.0f} phones polling every {FOLLOW_S:g} s")


def _hammer(db: str, seconds: float, seed: int) -> tuple[int, int]:
    """One "replica": votes from fresh students (a new room every 500) for `seconds`, then reads snapshots."""
    store, rng = Store(db), random.Random(seed)
    code, secret = store.create_room()
    store.ask(code, secret, "alpha_zero", 4)
    votes, seated, end = 0, 0, time.monotonic() + seconds
    while time.monotonic() < end:
        if seated == 500:
            code, secret = store.create_room()
            store.ask(code, secret, "alpha_zero", 4)
            seated = 0
        store.vote(code, store.join(code, secrets.token_hex(6)), 1, rng.randrange(4))   # a seat each (own address)
        votes, seated = votes + 1, seated + 1
    reads, end = 0, time.monotonic() + seconds
    while time.monotonic() < end:
        store.snapshot(code)
        reads += 1
    store.dispose()
    return votes, reads


def throughput(label: str, db: str, seconds: float = 5.0, writers: int = 4) -> None:
    Store(db).dispose()                                    # the schema, once
    with ProcessPoolExecutor(writers) as pool:
        results = list(pool.map(_hammer, [db] * writers, [seconds] * writers, range(writers)))
    votes, reads = sum(r[0] for r in results), sum(r[1] for r in results)
    print(f"{label}: {writers} processes, {seconds:g} s each phase: {votes / seconds:.0f} new students/s (a seat "
          f"and a vote each) committed, "
          f"{reads / seconds:.0f} projector snapshots/s")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--students", type=int, default=200)
    ap.add_argument("--replicas", type=int, default=4)
    ap.add_argument("--window", type=float, default=30.0, help="seconds over which the students' first taps spread")
    ap.add_argument("--store", choices=["sqlite", "postgresql", "both"], default="both")
    ap.add_argument("--throughput", action="store_true", help="only the store's own rates, no app")
    a = ap.parse_args()
    if not 1 <= a.students <= 500 or not 2 <= a.replicas <= 8:
        ap.error("1 <= students <= 500 and 2 <= replicas <= 8 (one is killed)")
    if a.store in ("sqlite", "both"):
        with tempfile.TemporaryDirectory() as tmp:
            db = str(Path(tmp) / "class.db")
            throughput("SQLite", db) if a.throughput else one_store("SQLite", db, a.students, a.replicas, a.window,
                                                                    lambda: None)
    if a.store in ("postgresql", "both"):
        with postgres_server() as pg:
            throughput("PostgreSQL", pg.url) if a.throughput else one_store("PostgreSQL", pg.url, a.students,
                                                                            a.replicas, a.window, pg.restart)


if __name__ == "__main__":
    main()
