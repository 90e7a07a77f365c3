"""Streamlit glue for heavy work: the line of jobs run in worker processes (run_job), the bounded result
caches shared by every session, and what the server keeps of a checkpoint (its config and tokenizer).

run_job sends a job (a function of app_pages/_support/work.py and its plain arguments) to the worker
processes through the server's JobLine (app_pages/_support/jobs.py) and waits, saying the visitor's place
("2 ahead of you") and an estimate. GDN_WORKERS sets how many workers (default: the CPUs this process may
use), GDN_QUEUE_CAP how many jobs may wait, GDN_JOBS_PER_CLIENT how many one client (a network address:
client.client_address, however many tabs it opens) may hold waiting or running (default 2; a load test
whose sessions all come from 127.0.0.1 raises it). Everything that computes with a model or trains goes
through that line: the server process reads no weights.
"""
from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from gdn.lru import LRU
from gdn.qwen35 import load_model
from gdn.qwen35.analysis import describe
from gdn.qwen35.errors import KINDS, CheckpointError, error_kind
from gdn.qwen35.sources import Source, folder_stamp, listing_stamp, scan_sources
from app_pages._support import work
from app_pages._support.caches import BOUNDS, SHARED
from app_pages._support.chrome import tr
from app_pages._support.client import client_address
from app_pages._support.jobs import PER_CLIENT, ClientBusy, JobLine, QueueFull, WorkerLost
from app_pages._support.turn import given_up
from app_pages._support.workers import Slot, cores

QUEUE_CAP = 32                # jobs that may wait for a worker (GDN_QUEUE_CAP): a class of 30 pressing at once
LOCAL_CLIENT = "local"        # every session from loopback (this machine, or a proxy on it sending no header): one client
POLL_S = 0.25                 # how often a waiting page looks at its job (and tells the line it still waits)


@st.cache_resource(show_spinner=False)
def job_line() -> JobLine:
    """The server's worker processes (started now: a spawn and torch's import take seconds) and their line."""
    slots = [Slot(i) for i in range(cores())]
    for slot in slots:
        slot.warm(work.warm)
    return JobLine(slots, cap=int(os.environ.get("GDN_QUEUE_CAP", "") or QUEUE_CAP), results=shared_caches(),
                   per_client=int(os.environ.get("GDN_JOBS_PER_CLIENT", "") or PER_CLIENT))


def session_id() -> str:
    ctx = get_script_run_ctx()
    return ctx.session_id if ctx is not None else "no-session"


def client_id() -> str:
    """Who this session's jobs count against in the line: its network address (behind a trusted proxy, the
    one the proxy saw), or LOCAL_CLIENT on loopback."""
    return client_address() or LOCAL_CLIENT


def run_job(kind: str, key, fn: Callable, *args, on_progress: Callable[[list], None] | None = None,
            on_fail: Callable[[], None] | None = None, pin: bool = False):
    """fn(*args) in a worker process, its result kept in the shared cache `kind` by key (None: never kept)
    and shared with every session asking for the same meanwhile. While it waits or runs the page says the
    visitor's place and an estimate, and on_progress(new reports) gets what the worker reported. A full
    line or a lost worker is said on the page, which stops there (pressing the button again retries); the
    job's own error is raised here: a ValueError as itself (the pages say what is wrong in the input), any
    other as a RuntimeError naming it (workers._run: it may not pickle). on_fail() runs before the page
    stops (a page forgets its pending job there, so the next rerun does not start it again unasked).
    pin: keep the result pinned."""
    line, session = job_line(), session_id()
    try:
        job = line.submit(session, kind, key, fn, args, pin=pin, client=client_id())
    except ClientBusy:
        st.error(tr("jobs.yours", n=line.per_client), icon=":material/tab_close:")
        stop(on_fail)
    except QueueFull:
        st.error(tr("jobs.full", cap=line.cap), icon=":material/hourglass_disabled:")
        stop(on_fail)
    seen, box, said = 0, None, None
    with given_up():                                # the other runs go on while this one waits
        while True:
            finished = job.wait(POLL_S)
            line.touch(job, session)
            if on_progress is not None and len(job.progress) > seen:
                new = job.progress[seen:]
                seen += len(new)
                on_progress(new)
            if finished:
                break
            words = wait_words(line.ahead(job), job.state == "running", line.estimate(job))
            if words != said:
                box = box or st.empty()
                box.info(words, icon=":material/hourglass_top:")
                said = words
    if box is not None:
        box.empty()
    if job.state == "done":
        return job.result
    if isinstance(job.error, WorkerLost) or job.state == "cancelled":
        st.error(tr("jobs.lost"), icon=":material/restart_alt:")
        stop(on_fail)
    if on_fail is not None:
        on_fail()
    raise job.error


def stop(on_fail: Callable[[], None] | None) -> None:
    if on_fail is not None:
        on_fail()
    st.stop()


def wait_words(ahead: int, running: bool, seconds: float) -> str:
    """"2 ahead of you, about 40 s" / "next, about 5 s" / "running, about 20 s left" (rounded up to 5 s); a
    running job past its expected time is "longer than expected", never "about 0 s left"."""
    about = 5 * int(-(-seconds // 5))
    if running:
        return tr("jobs.running", seconds=about) if about > 0 else tr("jobs.running_over")
    return tr("jobs.ahead", n=ahead, seconds=about) if ahead else tr("jobs.next", seconds=about)


@st.cache_resource
def shared_caches() -> dict[str, LRU]:
    """One LRU per namespace of caches.SHARED (what each holds, its bound and key are listed there)."""
    return {namespace: LRU(cache.bound) for namespace, cache in SHARED.items()}


@st.cache_resource
def download_lock() -> threading.Lock:
    """One hub download at a time per server (a second visitor asking for the same model waits for the
    first download instead of starting another)."""
    return threading.Lock()


def sources() -> list[tuple[str, str, str, bool]]:
    """(label, folder, kind, random_weights) of every checkpoint folder in the allowed roots, the unusable ones
    too (`inspect` gives their reason). Re-read when the disk changes (a folder or config.json added, removed
    or rewritten: a few stat calls a run), not on a timer: a scan reads every folder's config.json."""
    return [(s.label, str(s.path), s.kind, s.random_weights) for s in _scan(listing_stamp())]


@st.cache_resource(max_entries=BOUNDS["compute._scan"], show_spinner=False)
def _scan(stamp: tuple) -> tuple[Source, ...]:
    return tuple(scan_sources())


sources.clear = _scan.clear       # after a download (the stamp would notice too, on the next run)


def inspect(folder: str) -> tuple[object, str | None, str]:
    """(gdn.qwen35.analysis.describe(folder), None, ""), or (None, why it cannot be used, the error's kind:
    gdn.qwen35.errors): the listing's reason, else describe's. Both outcomes are cached until a file of the
    folder changes, so a broken checkpoint costs one look, not one per rerun of every visitor's page."""
    listed = next((s for s in _scan(listing_stamp()) if str(s.path) == folder), None)
    if listed is not None and listed.problem is not None:
        return None, listed.problem, listed.problem_kind
    return _describe(folder, folder_stamp(folder))


@st.cache_resource(max_entries=BOUNDS["compute._describe"], show_spinner=False)
def _describe(folder: str, stamp: tuple) -> tuple[object, str | None, str]:
    try:
        return describe(folder), None, ""
    except ValueError as e:
        return None, str(e), error_kind(e)
    except Exception as e:  # noqa: BLE001 -- a file we did not foresee (RecursionError, a symlink loop...) must
        # not break the page for everyone
        return None, f"{Path(folder).name}: could not be read ({type(e).__name__}); re-download the checkpoint", "other"


def info(folder: str):
    """describe(folder), or a ValueError (a CheckpointError with its kind) saying why it cannot be used."""
    found, problem, kind = inspect(folder)
    if problem is not None:
        raise CheckpointError(kind, problem) if kind in KINDS else ValueError(problem)
    return found


@st.cache_resource(max_entries=BOUNDS["compute.model"], show_spinner=False)
def _open(folder: str, stamp: tuple):
    """The model of `folder` opened (config, tokenizer, headers), no weight read yet; opened anew when a file
    of the folder changes (stamp), so a checkpoint copied over is not answered with "changed" forever."""
    return load_model(folder, lazy=True)


def tokenizer(folder: str):
    """The checkpoint's tokenizer (None without tokenizer.json): what the real-model page keeps of a
    checkpoint. Its weights are read in the worker processes that run it (work.model), never here."""
    return _open(folder, folder_stamp(folder)).tokenizer
