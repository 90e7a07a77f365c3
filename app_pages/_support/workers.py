"""Worker processes for heavy work: one single-process executor per core the server may use.

    slots = [Slot(i) for i in range(cores())]
    future = slots[0].submit(job_id, fn, args)     # fn: a module-level function, run in the worker
    slots[0].cancel(job_id)                        # fn's should_stop() is True from now on

Each slot is a concurrent.futures.ProcessPoolExecutor of one process (forked from a fork server, see
_ctx), not one executor of N: a worker killed mid-job breaks only its own executor (ProcessPoolExecutor
fails every pending future of a broken pool), so only its own visitor notices, and `replace()` starts a
fresh one. Everything crosses the process boundary as pickled plain data and numpy arrays; a worker keeps
what it loads (models, a layer's inputs) in its own bounded caches (app_pages/_support/work.py) for as
long as it lives.

Workers run at a lower priority (WORKER_NICE, GDN_WORKER_NICE): on a box as small as the class's replica
(2 cores) a page load of the server process then goes first, and a training waits only while a page is
being built. Not lower than that: on a machine shared with other busy processes, a worker at nice 10 got
a tenth of their share and a training took minutes.
No streamlit here: the worker processes import this module.
"""
from __future__ import annotations

import gc
import math
import multiprocessing
import multiprocessing.spawn
import os
import queue
import select
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

WORKER_NICE = int(os.environ.get("GDN_WORKER_NICE", "") or 5)     # above the server's 0: its pages go first
PARENT_CHECK_S = 1.0                             # how often a worker looks whether its server still runs
CPU_MAX = Path("/sys/fs/cgroup/cpu.max")         # cgroup v2: "<quota> <period>" or "max <period>"

# Workers are forked from a fork server: a fresh process (no threads, no sessions) that imports torch and
# what the jobs need once; a worker forked from it shares those pages with its siblings until one writes
# them. torch's import alone is ~145 MB of private memory per spawned process; forked, four workers of the
# demo model summed 358 MB of PSS against 752 spawned, and started in 1.2 s against 4.2 (bench_memory.py
# measures replicas). The server itself is never forked: it has threads, and torch in it.
_ctx = multiprocessing.get_context("forkserver")
# as work.warm, then preloaded.py: what the fork server imported, frozen out of the collector's reach
PRELOAD = ["app_pages._support.work", "gdn.qwen35", "gdn.recall.quick", "gdn.practice.judge",
           "app_pages._support.preloaded"]
_ctx.set_forkserver_preload(PRELOAD)


def _without_the_page(get_preparation_data):
    """multiprocessing's preparation data, less the main script when that is a Streamlit page. Inside a
    Streamlit server __main__ is the page script (its script runner installs app.py as __main__), and a new
    process told to initialise main from it runs the whole app again as __mp_main__: Streamlit, Plotly and
    every page imported into each worker, the sidebar drawn with no session. A job is a module-level
    function of an importable module: a worker needs no main script."""
    def prepared(name):
        data = get_preparation_data(name)
        main = sys.modules.get("__main__")
        if "streamlit.runtime.scriptrunner" in sys.modules and getattr(main, "__spec__", None) is None:
            data.pop("init_main_from_path", None)
        return data
    prepared.leaves_out_the_page = True
    return prepared


if not getattr(multiprocessing.spawn.get_preparation_data, "leaves_out_the_page", False):
    multiprocessing.spawn.get_preparation_data = _without_the_page(multiprocessing.spawn.get_preparation_data)
# The cancel flag names the job to stop. Job ids start at 1, so NO_JOB (nothing cancelled) never names one,
# nor the id a warm-up runs as (once both were -1, and a warm-up's should_stop() said True all along).
NO_JOB, WARM_UP = 0, -1


@dataclass(frozen=True)
class StoppedEarly:
    """What a job returned after its should_stop() said True: whatever it had then, for nobody to keep.
    A job asked to stop that never looked (it was finishing) returns its whole result, kept as any other."""
    result: object
_mine = threading.local()                        # in a worker: .cancel (shared Value), .progress (Queue), .job


def cores(environ=os.environ, cpu_max: Path = CPU_MAX) -> int:
    """How many workers: GDN_WORKERS if set, else the CPUs this process may run on (its affinity, as
    taskset or a replica's --cpus-per-replica pins it), fewer if the cgroup's quota allows fewer."""
    if environ.get("GDN_WORKERS", "").strip():
        n = int(environ["GDN_WORKERS"])
        if n < 1:
            raise ValueError(f"GDN_WORKERS must be at least 1, got {n}")
        return n
    n = len(os.sched_getaffinity(0))
    try:
        quota, period = cpu_max.read_text().split()[:2]
        if quota != "max":
            n = min(n, max(1, math.floor(int(quota) / int(period))))
    except (OSError, ValueError):
        pass                                      # no cgroup v2 file: the affinity alone
    return n


# -- inside a worker ---------------------------------------------------------------------------------

def _start(cancel, progress, server: int) -> None:
    """The worker's initializer: lower priority, one torch thread, the slot's channels kept, and an end
    of its own once the server (process id `server`) is gone."""
    gc.freeze()           # and what unpickling this worker's start made: old objects no collection here walks
    os.nice(WORKER_NICE)
    _mine.cancel, _mine.progress, _mine.job, _mine.told = cancel, progress, WARM_UP, False
    threading.Thread(target=_exit_with, args=(server,), daemon=True, name="gdn-worker-server").start()
    import torch
    torch.set_num_threads(1)


def _exit_with(server: int) -> None:
    """A server stopped or killed without shutting its executors down left its idle workers waiting on their
    queues for good (seen: two of 400 MB each, an hour later); a worker now ends as soon as its server has.
    The worker's parent is the fork server, which lives as long as any worker does (each holds its "alive"
    pipe): so the worker watches the server's process itself, through a pidfd (readable once it has exited,
    reaped or not), else by polling its state every PARENT_CHECK_S."""
    try:
        watch = os.pidfd_open(server)
    except (AttributeError, OSError):             # gone already, or no pidfd here (Linux < 5.3, other systems)
        while _running(server):
            time.sleep(PARENT_CHECK_S)
    else:
        select.select([watch], [], [])
    os._exit(0)


def _running(pid: int) -> bool:
    """Whether process `pid` exists and has not exited (a zombie waiting to be reaped has)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] != "Z"
    except OSError:
        return False


def _run(job_id: int, fn: Callable, args: tuple):
    _mine.job, _mine.told = job_id, False
    try:
        result = fn(*args)
        return StoppedEarly(result) if _mine.told else result
    except ValueError as e:
        # sent back as itself when it can be rebuilt from its message (ValueError) or says how (CheckpointError's
        # __reduce__); another subclass would fail to unpickle and break the executor: a plain copy goes instead
        if type(e) is ValueError or "__reduce__" in type(e).__dict__:
            raise
        raise ValueError(str(e)) from None
    except Exception as e:
        raise RuntimeError(f"{type(e).__name__}: {e}") from None


def should_stop() -> bool:
    """True once the server has cancelled the job this worker runs (its visitor left); False outside a worker."""
    cancel = getattr(_mine, "cancel", None)
    stop = cancel is not None and cancel.value == _mine.job
    _mine.told = _mine.told or stop                  # what it returns now is a stopped job's (see _run)
    return stop


def report(data) -> None:
    """Send progress of the running job (plain data) to the server; a no-op outside a worker."""
    progress = getattr(_mine, "progress", None)
    if progress is not None:
        progress.put((_mine.job, data))


def pid() -> int:
    """Which process runs the job (tests kill it)."""
    return os.getpid()


# -- in the server -----------------------------------------------------------------------------------

class Slot:
    """One worker process and its two channels: a cancel flag it polls and a progress queue it writes.
    on_progress(job_id, data) is called from this slot's reader thread."""

    def __init__(self, index: int, on_progress: Callable[[int, object], None] | None = None):
        self.index, self.on_progress = index, on_progress
        self._start()

    def _start(self) -> None:
        self.cancel_flag = _ctx.Value("q", NO_JOB, lock=False)
        self.progress = _ctx.Queue()
        self.executor = ProcessPoolExecutor(1, mp_context=_ctx, initializer=_start,
                                            initargs=(self.cancel_flag, self.progress, os.getpid()))
        self._reading = threading.Event()
        threading.Thread(target=self._read, args=(self.progress, self._reading), daemon=True,
                         name=f"gdn-worker-{self.index}-progress").start()

    def _read(self, progress, stopped: threading.Event) -> None:
        while not stopped.is_set():
            try:
                job_id, data = progress.get(timeout=0.5)
            except queue.Empty:
                continue
            except (EOFError, OSError, ValueError):
                return                            # the queue of a replaced worker, closed
            if self.on_progress is not None:
                self.on_progress(job_id, data)

    def submit(self, job_id: int, fn: Callable, args: tuple) -> Future:
        self.cancel_flag.value = NO_JOB
        return self.executor.submit(_run, job_id, fn, args)

    def cancel(self, job_id: int) -> None:
        self.cancel_flag.value = job_id

    def warm(self, fn: Callable, args: tuple = ()) -> Future:
        """Start the process now (the fork server's first start imports torch: seconds) and run fn in it."""
        return self.executor.submit(_run, WARM_UP, fn, args)

    def pids(self) -> list[int]:
        """The worker's process id, once started (tests kill it)."""
        return list(self.executor._processes or ())      # concurrent.futures' own record of its processes

    def replace(self) -> None:
        """A fresh worker after this one died (its executor is broken for good)."""
        self.shutdown()
        self._start()

    def shutdown(self) -> None:
        self._reading.set()
        self.executor.shutdown(wait=False, cancel_futures=True)
