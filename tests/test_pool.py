"""app_pages._support.pool (the slot pool that bounds heavy work) and gdn.lru (the one bounded LRU). No clock decides
anything here: threads are lined up by waiting on the pool's own counters, and released by events."""
import threading
import time

import pytest

from gdn.lru import LRU
from app_pages._support.pool import PoolTimeout, SlotPool


def wait_until(condition, timeout: float = 10.0) -> None:
    """Return once condition() holds (checked as the other threads move), or fail after timeout."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "the threads never reached the expected state"
        time.sleep(0.001)


def test_slot_pool_serves_in_arrival_order_one_at_a_time_and_tells_each_its_place():
    pool, release = SlotPool(1), threading.Event()
    told: dict[int, list[int]] = {}
    order, active, peak, lock = [], [0], [0], threading.Lock()

    def work(i, gate=None):
        with pool.slot(on_wait=lambda pos: told.setdefault(i, []).append(pos)):
            with lock:
                active[0] += 1
                peak[0] = max(peak[0], active[0])
                order.append(i)
            if gate is not None:
                gate.wait()
            with lock:
                active[0] -= 1

    holder = threading.Thread(target=work, args=(0, release))
    holder.start()
    wait_until(lambda: pool.busy == 1)
    waiters = []
    for i in (1, 2, 3):                                   # each joins the line only after the one before it
        waiters.append(threading.Thread(target=work, args=(i,)))
        waiters[-1].start()
        wait_until(lambda i=i: pool.waiting == i)
    release.set()
    for th in (holder, *waiters):
        th.join(10)
    assert order == [0, 1, 2, 3] and peak[0] == 1 and pool.busy == 0 and pool.waiting == 0
    assert [told[i][0] for i in (1, 2, 3)] == [1, 2, 3]   # first told place = place in line
    assert all(told[i] == sorted(set(told[i]), reverse=True) for i in told)   # then only moves forward


def test_slot_pool_times_out():
    pool = SlotPool(1)
    with pool.slot():
        with pytest.raises(PoolTimeout):
            with pool.slot(timeout=0.1):
                pass
    assert pool.waiting == 0


def test_lru_is_bounded_and_keeps_the_recently_used():
    lru = LRU(2)
    for i in range(3):
        lru.put(i, i)
    assert 0 not in lru and lru.get(2) == 2 and len(lru) == 2
    lru.get(1)                                       # 1 is now more recent than 2
    lru.put(3, 3)
    assert 2 not in lru and lru.get(1) == 1 and lru.get(3) == 3


def test_lru_pins_sit_beside_the_bound():
    lru = LRU(1, max_pinned=2)
    lru.put("example", 0, pin=True)
    for i in range(5):                               # a burst of one-off keys
        lru.put(i, i)
    assert lru.get("example") == 0 and len(lru) == 2
    lru.put("a", 1, pin=True)
    lru.put("b", 2, pin=True)                        # a third pin drops the oldest
    assert "example" not in lru and lru.get("b") == 2
    lru.clear()
    assert len(lru) == 0
