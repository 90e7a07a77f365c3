"""A small first-come-first-served pool of slots for heavy work shared by all app sessions.

    pool = SlotPool(2)
    with pool.slot(on_wait=lambda position: print("waiting, number", position, "in line")):
        run_the_forward_pass()

At most `size` holders at once; the others wait in arrival order and are told their place in line
(1 = next) whenever it changes, so a class of students cannot exhaust the server's memory.
"""
from __future__ import annotations

import contextlib
import itertools
import threading
import time
from collections.abc import Callable


class PoolTimeout(RuntimeError):
    """Raised when no slot became free within the timeout."""


class SlotPool:
    def __init__(self, size: int):
        if size < 1:
            raise ValueError(f"a pool needs at least one slot, got {size}")
        self.size = size
        self._busy = 0
        self._line: list[int] = []              # waiting tickets, first in line first
        self._tickets = itertools.count()
        self._cond = threading.Condition()

    @property
    def busy(self) -> int:
        return self._busy

    @property
    def waiting(self) -> int:
        return len(self._line)

    @contextlib.contextmanager
    def slot(self, on_wait: Callable[[int], None] | None = None, timeout: float | None = None):
        """Hold one slot for the `with` body. on_wait(position) is called (from this thread) while
        waiting, each time the place in line changes. PoolTimeout after `timeout` seconds of waiting."""
        self._acquire(on_wait, timeout)
        try:
            yield
        finally:
            with self._cond:
                self._busy -= 1
                self._cond.notify_all()

    def _acquire(self, on_wait, timeout) -> None:
        with self._cond:
            ticket = next(self._tickets)
            self._line.append(ticket)
            told = None
            deadline = None if timeout is None else time.monotonic() + timeout
            try:
                while not (self._line[0] == ticket and self._busy < self.size):
                    position = self._line.index(ticket) + 1
                    if on_wait is not None and position != told:
                        told = position
                        self._cond.release()        # never call back while holding the lock
                        try:
                            on_wait(position)
                        finally:
                            self._cond.acquire()
                        continue
                    left = None if deadline is None else deadline - time.monotonic()
                    if left is not None and left <= 0:
                        raise PoolTimeout(f"no free slot within {timeout} s")
                    self._cond.wait(0.5 if left is None else min(0.5, left))
                self._busy += 1
            finally:
                self._line.remove(ticket)
                self._cond.notify_all()
