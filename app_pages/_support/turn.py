"""One script run at a time runs Python on this server: the turn.

Streamlit runs every session's script in a thread of its own, and the interpreter lock lets only one of
them run Python at any moment anyway. Left to that lock, a class's concurrent runs trade it every 5 ms,
and the event loop (the one thread that reads every click and sends every element of every answer) has to
win it back after each message it sends: with 60 sessions on 2 cores an answer's last message waited
0.3-0.5 s after its script had ended, while the CPUs were three-quarters idle (bench/README.md, "Where a
class's answers wait"). app.py holds the turn for its whole run, so the loop shares the lock with one
script, not a dozen; the runs wait in line instead, each as short as it is alone.

Work that waits gives the turn up meanwhile (given_up): a job in a worker process or in line for one
(compute.run_job), a download, the practice judge's first sandbox start. A run
that has waited TURN_WAIT_S for its turn runs anyway, alongside the holder, as every run did before: a
very long or stuck run slows the class down, never stops it.
"""
from __future__ import annotations

import contextlib
import threading
from collections import deque

TURN_WAIT_S = 2.0


class _Line:
    """A lock handed to its waiters in arrival order (threading.Lock wakes any of them: under load some
    waited their whole TURN_WAIT_S while later runs went first). acquire(timeout) is False after timeout."""

    def __init__(self):
        self._guard, self._busy, self._waiting = threading.Lock(), False, deque()

    def locked(self) -> bool:
        return self._busy

    def acquire(self, timeout: float, first: bool = False) -> bool:
        """first: go to the head of the line (a run taking its turn back after a forward pass has waited
        once already; finishing it first frees its session soonest)."""
        with self._guard:
            if not self._busy:
                self._busy = True
                return True
            mine = threading.Lock()
            mine.acquire()
            if first:
                self._waiting.appendleft(mine)
            else:
                self._waiting.append(mine)
        if mine.acquire(timeout=timeout):            # released by release(): the turn is this thread's
            return True
        with self._guard:
            if mine in self._waiting:                # still in line: leave it and run without the turn
                self._waiting.remove(mine)
                return False
        return True                                  # handed over between the timeout and the guard

    def release(self) -> None:
        with self._guard:
            if self._waiting:
                self._waiting.popleft().release()    # the next in line holds it now: _busy stays True
            else:
                self._busy = False


_turn = _Line()
_mine = threading.local()          # .held: this thread holds the turn now


def _take(first: bool = False) -> None:
    _mine.held = _turn.acquire(timeout=TURN_WAIT_S, first=first)


def _give() -> None:
    if getattr(_mine, "held", False):
        _mine.held = False
        _turn.release()


@contextlib.contextmanager
def taken():
    """Hold the turn for the `with` body (app.py: the whole run), released however the run ends
    (a rerun, st.stop, a page switch or an error)."""
    _take()
    try:
        yield
    finally:
        _give()


@contextlib.contextmanager
def given_up():
    """Let the other runs go while the `with` body waits (a place in line, the network) or computes for long
    (a forward pass, a big figure); the turn is taken back afterwards, ahead of the runs that have not
    started. A no-op in a thread that does not hold the turn (a fragment's rerun)."""
    held = getattr(_mine, "held", False)
    _give()
    try:
        yield
    finally:
        if held:
            _take(first=True)
