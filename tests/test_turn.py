"""app_pages._support.turn: one script run at a time holds the turn; waiting work gives it up; a run that waited
too long runs anyway. Threads are lined up by events and by the lock's own state, not by sleeps."""
import contextlib
import threading
import time

import pytest

from app_pages._support import turn


def wait_until(condition, timeout: float = 10.0) -> None:
    """Return once condition() holds (checked as the other threads move), or fail after timeout."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "the threads never reached the expected state"
        time.sleep(0.001)


def in_thread(target) -> threading.Thread:
    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    return thread


def second_run_waits(taken) -> None:
    """The check of the test below, on a `taken` context manager: a second run started while the first holds
    the turn is seen waiting in the turn's line (not merely started: a started thread may simply not have
    run yet), has not entered, and enters only after the first leaves."""
    leave, order = threading.Event(), []

    def first():
        with taken():
            order.append("first in")
            leave.wait(10)
            order.append("first out")

    def second():
        with taken():
            order.append("second in")

    a = in_thread(first)
    wait_until(lambda: order == ["first in"])
    b = in_thread(second)
    wait_until(lambda: len(turn._turn._waiting) == 1 or not b.is_alive())   # in line, or through already
    try:
        assert order == ["first in"] and b.is_alive()      # the turn is held: the second run is waiting
        assert len(turn._turn._waiting) == 1               # in the turn's line
    finally:
        leave.set()
        a.join(10), b.join(10)
    assert order == ["first in", "first out", "second in"]
    assert not turn._turn.locked()


def test_a_second_run_waits_for_the_turn_and_gets_it_when_the_first_ends():
    second_run_waits(turn.taken)


def test_the_waiting_check_fails_without_a_lock():
    """Planted bug: `taken` holding nothing. The second run goes straight in; the check above says so
    (before, it waited only for the second thread to be alive, which it is at once, lock or not)."""
    @contextlib.contextmanager
    def unlocked():
        yield

    with pytest.raises(AssertionError):
        second_run_waits(unlocked)


def test_given_up_lets_another_run_go_and_takes_the_turn_back_afterwards():
    computing, done, order = threading.Event(), threading.Event(), []

    def holder():
        with turn.taken():
            with turn.given_up():
                computing.set()
                done.wait(10)                         # the forward pass, outside the turn
            order.append(("holder back", turn._turn.locked()))

    def other():
        with turn.taken():
            order.append("other ran")
        done.set()

    a = in_thread(holder)
    computing.wait(10)
    b = in_thread(other)
    a.join(10), b.join(10)
    assert order == ["other ran", ("holder back", True)]
    assert not turn._turn.locked()


def test_the_turn_is_released_when_the_run_raises():
    with pytest.raises(RuntimeError):
        with turn.taken():
            assert turn._turn.locked()
            raise RuntimeError("st.stop, a rerun, a page switch or a bug")
    assert not turn._turn.locked()


def test_given_up_without_the_turn_leaves_the_holders_turn_alone():
    held, leave = threading.Event(), threading.Event()

    def holder():
        with turn.taken():
            held.set()
            leave.wait(10)

    a = in_thread(holder)
    held.wait(10)
    with turn.given_up():                              # a fragment's rerun: it never took the turn
        assert turn._turn.locked()
    assert turn._turn.locked()                         # still the holder's
    leave.set()
    a.join(10)
    assert not turn._turn.locked()


def test_a_run_that_waited_too_long_runs_alongside_and_does_not_release_the_holders_turn(monkeypatch):
    monkeypatch.setattr(turn, "TURN_WAIT_S", 0.05)
    held, leave, ran = threading.Event(), threading.Event(), []

    def stuck():
        with turn.taken():
            held.set()
            leave.wait(10)

    a = in_thread(stuck)
    held.wait(10)
    with turn.taken():                                 # gives up waiting after TURN_WAIT_S
        ran.append(turn._turn.locked())
    assert ran == [True]                               # it ran while the stuck run held the turn
    assert turn._turn.locked()                         # and leaving did not free the stuck run's turn
    leave.set()
    a.join(10)
    assert not turn._turn.locked()


def test_the_turn_goes_to_the_waiting_runs_in_arrival_order():
    held, leave, order = threading.Event(), threading.Event(), []

    def holder():
        with turn.taken():
            held.set()
            leave.wait(10)

    def run(i):
        with turn.taken():
            order.append(i)

    a = in_thread(holder)
    held.wait(10)
    waiters = []
    for i in (1, 2, 3, 4):                            # each joins the line only after the one before it
        waiters.append(in_thread(lambda i=i: run(i)))
        wait_until(lambda: len(turn._turn._waiting) == i)
    leave.set()
    for t in (a, *waiters):
        t.join(10)
    assert order == [1, 2, 3, 4]
    assert not turn._turn.locked() and not turn._turn._waiting


def test_a_run_taking_its_turn_back_goes_ahead_of_the_runs_that_have_not_started():
    computing, finish, held, order = threading.Event(), threading.Event(), threading.Event(), []
    leave = threading.Event()

    def forward_pass():
        with turn.taken():
            with turn.given_up():
                computing.set()
                finish.wait(10)
            order.append("back")

    def holder():
        with turn.taken():
            held.set()
            leave.wait(10)
            order.append("holder")

    def fresh():
        with turn.taken():
            order.append("fresh")

    a = in_thread(forward_pass)
    computing.wait(10)
    b = in_thread(holder)
    held.wait(10)
    c = in_thread(fresh)
    wait_until(lambda: len(turn._turn._waiting) == 1)   # a fresh run waits
    finish.set()
    wait_until(lambda: len(turn._turn._waiting) == 2)   # the forward pass wants its turn back
    leave.set()
    for t in (a, b, c):
        t.join(10)
    assert order == ["holder", "back", "fresh"]
