"""One script run at a time runs Python on this server: the turn.

Streamlit runs every session's script in a thread of its own, and the interpreter lock lets only one of
them run Python at any moment anyway. Left to that lock, a class's concurrent runs trade it every 5 ms,
and the event loop (the one thread that reads every click and sends every element of every answer) has to
win it back after each message it sends: with 60 sessions on 2 cores an answer's last message waited
0.3-0.5 s after its script had ended, while the CPUs were three-quarters idle (bench/README.md, "Where a
class's answers wait"). app.py holds the turn for its whole run, so the loop shares the lock with one
script, not a dozen; the runs wait in line instead, each as short as it is alone.

Work that waits gives the turn up meanwhile (given_up): a forward pass in its slot or waiting for one
(compute.in_slot), a download. A run that has waited TURN_WAIT_S for its turn runs anyway, alongside the
holder, as every run did before: a very long or stuck run slows the class down, never stops it.
"""
from __future__ import annotations

import contextlib
import threading

TURN_WAIT_S = 2.0
_turn = threading.Lock()
_mine = threading.local()          # .held: this thread holds the turn now


def _take() -> None:
    _mine.held = _turn.acquire(timeout=TURN_WAIT_S)


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
    """Let the other runs go while the `with` body waits or computes outside Python's lock (torch);
    the turn is taken back afterwards. A no-op in a thread that does not hold the turn (a fragment)."""
    held = getattr(_mine, "held", False)
    _give()
    try:
        yield
    finally:
        if held:
            _take()
