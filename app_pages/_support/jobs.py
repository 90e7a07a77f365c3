"""The fair line of heavy jobs shared by every session of a server, run in the worker processes.

    line = JobLine(slots, cap=32, results={"recall.train": LRU(64)})
    job = line.submit("session-id", "recall.train", key, fn, args)   # QueueFull when the line is full
    while not job.wait(0.5):
        line.touch(job, "session-id")                   # still watching: the job is kept
        print(line.ahead(job), "ahead of you, about", line.estimate(job), "s")
    job.result                                          # or job.error: WorkerLost, or the job's own error

Rules, each tested in tests/test_jobs.py:
- first come, first served; at most `cap` jobs waiting (a full line says so at once: QueueFull);
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

LEASE_S = 6.0                 # a job is kept this long after its last watcher's last touch
TICK_S = 0.5                  # how often the line looks for jobs nobody watches
# a kind's expected seconds before one was measured
FIRST_GUESS_S = {"default": 5.0, "recall.train": 60.0, "update.train": 60.0, "practice.judge": 2.0}
LATE_REPORTS = 64             # ended jobs whose late progress reports still land (bounded)


class QueueFull(RuntimeError):
    """The line holds `cap` jobs already: try again in a while."""


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
    stopping: bool = False        # told to stop early (nobody watches): its result is not kept
    pin: bool = False             # its result is pinned in the kept results

    def wait(self, timeout: float | None = None) -> bool:
        return self.done.wait(timeout)


class JobLine:
    def __init__(self, slots: list, cap: int, results, lease_s: float = LEASE_S):
        if cap < 1:
            raise ValueError(f"the line needs room for at least one job, got cap={cap}")
        self.slots, self.cap, self.results, self.lease_s = slots, cap, results, lease_s
        self._line: deque[Job] = deque()             # waiting, first in line first
        self._running: dict[int, Job] = {}           # slot index -> its job
        self._by_key: dict = {}                      # key -> its queued or running job
        self._by_session: dict[str, Job] = {}
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
    def submit(self, session: str, kind: str, key, fn: Callable, args: tuple = (), pin: bool = False) -> Job:
        """The job of (kind, key) for this session: a kept result (a finished job), the one already in
        the line, or a new one at its end. key None: a job of its own, never shared nor kept. pin: keep
        the result out of the LRU's reach (gdn/lru.py: the example prompts everyone opens first)."""
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
                job = Job(next(self._ids), kind, key, fn, args, pin=pin)
                self._line.append(job)
                self._jobs[job.id] = job
                if key is not None:
                    self._by_key[(kind, key)] = job
            job.watchers[session] = time.monotonic()
            self._by_session[session] = job
            self._dispatch()
            return job

    def touch(self, job: Job, session: str) -> None:
        with self._lock:
            if session in job.watchers:
                job.watchers[session] = time.monotonic()

    def ahead(self, job: Job) -> int:
        """Jobs that start before this one (0 when it runs or is next)."""
        with self._lock:
            return self._line.index(job) if job in self._line else 0

    def estimate(self, job: Job) -> float:
        """Seconds until this job is likely done: the work ahead of it spread over the workers, then its own."""
        with self._lock:
            now = time.monotonic()
            if job.state == "running":
                return max(0.0, self.expected(job.kind) - (now - job.started_at))
            left = sorted(max(0.0, self.expected(j.kind) - (now - j.started_at)) for j in self._running.values())
            free = [0.0] * (len(self.slots) - len(left)) + left        # when each worker is free again
            for j in list(self._line)[:self.ahead(job)]:
                free.sort()
                free[0] += self.expected(j.kind)
            return min(free) + self.expected(job.kind)

    def expected(self, kind: str) -> float:
        return self._took.get(kind, FIRST_GUESS_S.get(kind, FIRST_GUESS_S["default"]))

    @property
    def waiting(self) -> int:
        return len(self._line)

    def close(self) -> None:
        self._stop.set()
        for slot in self.slots:
            slot.shutdown()

    # -- inside ----------------------------------------------------------------------------------
    def _leave(self, session: str) -> None:
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

    def _dispatch(self) -> None:
        for i, slot in enumerate(self.slots):
            if not self._line:
                return
            if i in self._running:
                continue
            job = self._line.popleft()
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
                if job.stopping:
                    self._finish(job, "cancelled")       # perhaps stopped early, for nobody: not a result to keep
                else:
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

