"""Jobs for tests/test_jobs.py, importable by a worker process (a test module's own functions are not)."""
import os
import sys
import time
from pathlib import Path

from app_pages._support.workers import report, should_stop


def made_once(x: int) -> tuple[int, int, bytes]:
    """x squared, with the worker's pid and a fresh random tag: two equal answers came from one call."""
    return x * x, os.getpid(), os.urandom(8)


def hold(release: str) -> str:
    """Report this worker's pid, then wait until the file `release` exists ("released") or the job is
    cancelled ("stopped")."""
    report(os.getpid())
    while not Path(release).exists():
        if should_stop():
            return "stopped"
        time.sleep(0.01)
    return "released"


def fail(message: str) -> None:
    raise ValueError(message)


def told_to_stop() -> bool:
    """What should_stop() says to a job nobody cancelled (a warm-up among them)."""
    return should_stop()


def finish_after(release: str, value: int) -> int:
    """Wait for the file `release`, never looking at should_stop() (a job busy finishing), then answer."""
    report(os.getpid())
    while not Path(release).exists():
        time.sleep(0.01)
    return value



def timing_where_the_loop_wins_below_2(lengths: tuple) -> dict:
    """What the chunking page's live timing returns, made up (the real run takes seconds): each length
    reported, the token loop faster only below T = 2."""
    import numpy as np
    for i in range(1, len(lengths) + 1):
        report((i, len(lengths)))
    return {"T": np.array(lengths), "recurrent": np.array(lengths, float), "chunk": np.full(len(lengths), 1.5)}


def timing_that_fails(lengths: tuple) -> dict:
    raise RuntimeError("the timing run failed")


def imported(name: str) -> bool:
    """Whether module `name` is loaded in this worker."""
    return name in sys.modules
