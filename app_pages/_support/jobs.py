"""The fair line of heavy jobs shared by every session of a server, run in the worker processes.

    line = JobLine(slots, cap=32, results={"recall.train": LRU(64)})
    job = line.submit("session-id", "recall.train", key, fn, args, client="192.168.1.23")
    # QueueFull when the line is full; ClientBusy (a QueueFull) when this client holds per_client jobs already
    while not job.wait(0.5):
        line.touch(job, "session-id")                   # still watching: the job is kept
        print(line.ahead(job), "ahead of you, about", line.estimate(job), "s")
    job.result                                          # or job.error: WorkerLost, or the job's own error

Rules, each tested in tests/test_jobs.py or tests/test_line_fair.py:
- first come, first served; at most `cap` jobs waiting (a full line says so at once: QueueFull);
- a client (one network address, however many tabs or sessions it opens) holds at most `per_client` jobs
  waiting or running (ClientBusy, said at once): 36 tabs pressing Train fill two places, not the line;
- two lanes: the long kinds (LONG_KINDS: the trainings, minutes each) run on at most all workers but
  SHORT_RESERVE, so a short job (a Run, a judge: seconds) always has a worker within a short job's time,
  however many trainings wait. In the line a long job that may not start yet lets the short ones behind it
  pass; otherwise the line is first come, first served, so the trainings are not starved either. ahead()
  and estimate() play this rule forward, so the place a visitor is shown is the place the line keeps;
- a session holds at most one job: submitting another drops it from its earlier one;
- the same kind and key is one job: a second session asking for it joins the one in the line, and a
  finished result is kept in `results[kind]` (an LRU; a kind without one keeps nothing) by its key, so
  thirty students pressing Run on one preset cost one pass;
- a job nobody watches any more (no touch for LEASE_S: the visitor left the page or closed the tab) leaves
  the line, or, running, is told to stop (workers.should_stop);
- a worker that dies fails its own job with WorkerLost (the visitor can try again) and is replaced; the
  other workers' jobs go on.
No streamlit: the page side is compute.run_job.
"""
from __future__ import annotations

import itertools
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field

from app_pages._support.workers import StoppedEarly

LEASE_S = 6.0                 # a job is kept this long after its last watcher's last touch
TICK_S = 0.5                  # how often the line looks for jobs nobody watches
# a kind's expected seconds before one was measured
FIRST_GUESS_S = {"default": 5.0, "recall.train": 60.0, "update.train": 60.0, "practice.judge": 2.0}
LATE_REPORTS = 64             # ended jobs whose late progress reports still land (bounded)
PER_CLIENT = 2                # jobs one client may hold, waiting or running: a visitor's Train and a Run on another page
# the long lane: trainings of a minute or more. Not measured times (they change with the load): a kind is
# long by what it is, so a lane never changes under a waiting visitor
LONG_KINDS = frozenset({"recall.train", "update.train"})
SHORT_RESERVE = 1             # workers the long lane leaves free for short jobs (none when there is one worker)


class QueueFull(RuntimeError):
    """The line holds `cap` jobs already: try again in a while."""


class ClientBusy(QueueFull):
    """This client (its other tabs or sessions) holds `per_client` jobs already: one must end first. A
    QueueFull, so a caller that only knows the full line still refuses it."""

    def __init__(self, held: int):
        super().__init__(f"this client holds {held} jobs already (waiting or running)")
        self.held = held


class WorkerLost(RuntimeError):
    """The worker running the job died (killed, out of memory): pressing the button again starts it anew."""


@dataclass(eq=False)
class Job:
    id: int
    kind: str                     # what it is: its results' namespace, its duration estimate ("recall.train")
    key: object                   # what the result depends on (None: never shared, never kept)
    fn: Callable
    args: tuple
    watchers: dict = field(default_factory=dict)      # session -> monotonic time of its last touch
    state: str = "queued"         # queued | running | done | failed | cancelled
    result: object = None
    error: BaseException | None = None
    progress: list = field(default_factory=list)      # what the worker reported, in order
    queued_at: float = field(default_factory=time.monotonic)
    started_at: float | None = None
    finished_at: float | None = None
    done: threading.Event = field(default_factory=threading.Event)
    stopping: bool = False        # told to stop early (nobody watches): a result it stopped for is not kept
    pin: bool = False             # its result is pinned in the kept results

    def wait(self, timeout: float | None = None) -> bool:
        return self.done.wait(timeout)


class JobLine:
    def __init__(self, slots: list, cap: int, results, lease_s: float = LEASE_S, per_client: int = PER_CLIENT,
                 long_kinds: frozenset = LONG_KINDS):
        if cap < 1:
            raise ValueError(f"the line needs room for at least one job, got cap={cap}")
        if per_client < 1:
            raise ValueError(f"a client needs room for at least one job, got per_client={per_client}")
        self.slots, self.cap, self.results, self.lease_s = slots, cap, results, lease_s
        self.per_client, self.long_kinds = per_client, long_kinds
        # with one worker nothing can be kept back: a training would never start
        self.long_slots = max(1, len(slots) - SHORT_RESERVE)
        self._line: deque[Job] = deque()             # waiting, first in line first
        self._running: dict[int, Job] = {}           # slot index -> its job
        self._by_key: dict = {}                      # key -> its queued or running job
        self._by_session: dict[str, Job] = {}
        self._client_of: dict[str, str] = {}         # session -> its client, while the session holds a job
        self._plan: tuple | None = None              # (the line's shape, when, plan): see _planned
        self._jobs: dict[int, Job] = {}              # id -> job, while queued or running (progress lands here)
        self._ended_jobs: dict[int, Job] = {}        # the last LATE_REPORTS ended: reports still in the pipe land
        self._ids = itertools.count(1)
        self._lock = threading.RLock()
        self._took: dict[str, float] = {}            # kind -> measured seconds (smoothed)
        for slot in slots:
            slot.on_progress = self._on_progress
        self._stop = threading.Event()
        threading.Thread(target=self._watch, daemon=True, name="gdn-job-line").start()

    # -- what the pages call -----------------------------------------------------------------------
    def submit(self, session: str, kind: str, key, fn: Callable, args: tuple = (), pin: bool = False,
               client: str | None = None) -> Job:
        """The job of (kind, key) for this session: a kept result (a finished job), the one already in
        the line, or a new one at its end. key None: a job of its own, never shared nor kept. pin: keep
        the result out of the LRU's reach (gdn/lru.py: the example prompts everyone opens first).
        client: who the session belongs to (client.client_address); None: the session is a client of its
        own. Only a new job counts against the line's cap and the client's per_client: a kept result or a
        job already in the line costs no worker more, so joining one is never refused."""
        client = session if client is None else client
        with self._lock:
            kept = self.results[kind].get(key) if key is not None and kind in self.results else None
            if kept is not None:
                self._leave(session)
                job = Job(0, kind, key, fn, args, state="done", result=kept)
                job.done.set()
                return job
            job = self._by_key.get((kind, key)) if key is not None else None
            if job is None or job.stopping:
                job = None
            if self._by_session.get(session) is not job:
                self._leave(session)                     # its earlier job: out of the line before counting
            if job is None:
                if len(self._line) >= self.cap:
                    raise QueueFull(f"{len(self._line)} jobs are waiting already (the line holds {self.cap})")
                if self.held(client) >= self.per_client:
                    raise ClientBusy(self.held(client))
                job = Job(next(self._ids), kind, key, fn, args, pin=pin)
                self._line.append(job)
                self._jobs[job.id] = job
                if key is not None:
                    self._by_key[(kind, key)] = job
            job.watchers[session] = time.monotonic()
            self._by_session[session] = job
            self._client_of[session] = client
            self._dispatch()
            return job

    def held(self, client: str) -> int:
        """The jobs, waiting or running, that a session of this client watches."""
        with self._lock:
            return len({id(job) for session, job in self._by_session.items() if self._client_of.get(session) == client})

    def touch(self, job: Job, session: str) -> None:
        with self._lock:
            if session in job.watchers:
                job.watchers[session] = time.monotonic()

    def ahead(self, job: Job) -> int:
        """Jobs that start before this one (0 when it runs or is next): its place in the line's plan, in
        which a training that must wait for the long lane lets the short jobs behind it pass."""
        with self._lock:
            planned = self._planned().get(job.id) if job.state == "queued" else None
            return planned[0] if planned is not None else 0

    def estimate(self, job: Job) -> float:
        """Seconds until this job is likely done: when the plan starts it, then its own expected time."""
        with self._lock:
            now = time.monotonic()
            if job.state == "running":
                return max(0.0, self.expected(job.kind) - (now - job.started_at))
            planned = self._planned().get(job.id) if job.state == "queued" else None
            if planned is None:
                return 0.0
            return max(0.0, planned[1] - now) + self.expected(job.kind)

    def expected(self, kind: str) -> float:
        return self._took.get(kind, FIRST_GUESS_S.get(kind, FIRST_GUESS_S["default"]))

    def is_long(self, job: Job) -> bool:
        return job.kind in self.long_kinds

    @property
    def waiting(self) -> int:
        return len(self._line)

    def close(self) -> None:
        self._stop.set()
        for slot in self.slots:
            slot.shutdown()

    # -- inside ----------------------------------------------------------------------------------
    def _leave(self, session: str) -> None:
        self._client_of.pop(session, None)
        job = self._by_session.pop(session, None)
        if job is not None:
            job.watchers.pop(session, None)
            if not job.watchers:
                self._cancel(job)

    def _cancel(self, job: Job) -> None:
        if job.state == "queued":
            self._line.remove(job)
            self._finish(job, "cancelled")
        elif job.state == "running":
            job.stopping = True
            next(s for i, s in enumerate(self.slots) if self._running.get(i) is job).cancel(job.id)

    def _startable(self) -> Job | None:
        """The first job in line that may start now: a short one always, a long one while the long lane
        has a worker left (stopping trainings count: they hold theirs until they notice)."""
        long_room = sum(self.is_long(j) for j in self._running.values()) < self.long_slots
        return next((j for j in self._line if long_room or not self.is_long(j)), None)

    def _planned(self) -> dict[int, tuple[int, float]]:
        """job id -> (how many start before it, monotonic time it likely starts), for every waiting job:
        _dispatch's rule played forward, each job taking its kind's expected time. Kept while the line and
        the workers hold the same jobs, for TICK_S at most: every waiting page asks four times a second."""
        now = time.monotonic()
        shape = (tuple(j.id for j in self._line), tuple((i, j.id) for i, j in sorted(self._running.items())))
        if self._plan is not None and self._plan[0] == shape and now - self._plan[1] < TICK_S:
            return self._plan[2]
        # (when each worker is free again, whether it then still runs a long job)
        workers = [(max(now, j.started_at + self.expected(j.kind)), self.is_long(j)) for j in self._running.values()]
        workers += [(now, False)] * (len(self.slots) - len(workers))
        waiting, plan = list(self._line), {}
        while waiting:
            workers.sort(key=lambda w: w[0])
            free_at = workers[0][0]
            longs_then = sum(1 for end, long in workers[1:] if long and end > free_at)
            job = next((j for j in waiting if longs_then < self.long_slots or not self.is_long(j)), None)
            if job is None:            # only trainings wait and the long lane is full: idle until a training ends
                workers[0] = (min(end for end, long in workers[1:] if long and end > free_at), False)
                continue
            waiting.remove(job)
            plan[job.id] = (len(plan), free_at)
            workers[0] = (free_at + self.expected(job.kind), self.is_long(job))
        self._plan = (shape, now, plan)
        return plan

    def _dispatch(self) -> None:
        for i, slot in enumerate(self.slots):
            if i in self._running:
                continue
            job = self._startable()
            if job is None:
                return
            self._line.remove(job)
            job.state, job.started_at = "running", time.monotonic()
            self._running[i] = job
            try:
                try:
                    future = slot.submit(job.id, job.fn, job.args)
                except BrokenProcessPool:              # its worker died while idle
                    slot.replace()
                    future = slot.submit(job.id, job.fn, job.args)
            except Exception:  # noqa: BLE001 -- no worker could start (out of memory, of processes): say so
                del self._running[i]
                self._finish(job, "failed", WorkerLost("no worker could be started for this job"))
                continue
            future.add_done_callback(lambda f, i=i, job=job: self._ended(i, job, f))

    def _ended(self, i: int, job: Job, future: Future) -> None:
        with self._lock:
            self._running.pop(i, None)
            try:
                job.result = future.result()
            except BrokenProcessPool:
                self._finish(job, "failed", WorkerLost("the worker running this job stopped"))
                try:
                    self.slots[i].replace()
                except Exception:  # noqa: BLE001 -- the next job on this slot tries again, and says so if it fails
                    pass
            except Exception as e:  # noqa: BLE001 -- the job's own error, handed to its visitor
                self._finish(job, "failed", e)
            else:
                if isinstance(job.result, StoppedEarly):  # it stopped when told: what it had is no result to keep
                    job.result = None
                    self._finish(job, "cancelled")
                else:                                     # whole, also when its stop came too late: kept
                    took = time.monotonic() - job.started_at
                    self._took[job.kind] = took if job.kind not in self._took else 0.7 * self._took[job.kind] + 0.3 * took
                    if job.key is not None and job.kind in self.results:
                        self.results[job.kind].put(job.key, job.result, pin=job.pin)
                    self._finish(job, "done")
            self._dispatch()

    def _finish(self, job: Job, state: str, error: BaseException | None = None) -> None:
        job.state, job.error, job.finished_at = state, error, time.monotonic()
        self._jobs.pop(job.id, None)
        # a worker's last reports travel apart from its result (a queue with a writer thread) and may come
        # after it: they still land on the job, for a page that draws from job.progress
        self._ended_jobs[job.id] = job
        while len(self._ended_jobs) > LATE_REPORTS:
            self._ended_jobs.pop(next(iter(self._ended_jobs)))
        if self._by_key.get((job.kind, job.key)) is job:
            del self._by_key[(job.kind, job.key)]
        for session in list(job.watchers):
            if self._by_session.get(session) is job:
                del self._by_session[session]
                self._client_of.pop(session, None)
        job.done.set()

    def _on_progress(self, job_id: int, data) -> None:
        job = self._jobs.get(job_id) or self._ended_jobs.get(job_id)
        if job is not None:
            job.progress.append(data)

    def _watch(self) -> None:
        while not self._stop.wait(TICK_S):
            with self._lock:
                now = time.monotonic()
                for job in [*self._line, *self._running.values()]:
                    for session, seen in list(job.watchers.items()):
                        if now - seen > self.lease_s:
                            self._leave(session)

