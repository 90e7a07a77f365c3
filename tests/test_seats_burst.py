"""Issue 49's burst: one device joins 500 "phones" from one address. Its seats stop at the room's
per-address cap, the next student from elsewhere still gets in, and the teacher sees the seats grouped by
network (counts, never an address), drops the burst with its votes in one action, or resets every seat.
Against the real Store on a temporary SQLite file, its clock stepped by the test."""
import time

import pytest
import sqlalchemy as sa

from gdn.live import store as live
from gdn.live.store import AddressFull, Barred, NoSeat, NotTeacher, Store, TooManySeats

SCRIPT = "203.0.113.66"          # the one device (a laptop on the school's guest Wi-Fi)
STUDENT = "198.51.100.7"         # a real student, on another network


class Clock:
    def __init__(self, now: float = 1_000_000.0):
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def room(tmp_path):
    """(store, clock, code, secret): a room with its first question live."""
    clock = Clock()
    store = Store(str(tmp_path / "class.db"), clock=clock)
    code, secret = store.create_room()
    store.ask(code, secret, "alpha_zero", 4)
    yield store, clock, code, secret
    store.dispose()


def burst(store: Store, clock: Clock, code: str, phones: int = 500, every_s: float = 0.04) -> dict:
    """One address joins and votes `phones` times, a try every `every_s` (500 in 20 s: the probe took 111 s
    for as many): how each try ended."""
    ended = {"seated": 0, "rate": 0, "cap": 0, "barred": 0}
    for i in range(phones):
        clock.now += every_s
        try:
            store.vote(code, store.join(code, SCRIPT), 1, i % 4)
            ended["seated"] += 1
        except TooManySeats:
            ended["rate"] += 1
        except AddressFull:
            ended["cap"] += 1
        except Barred:
            ended["barred"] += 1
    return ended


def test_one_address_stops_at_its_cap_and_the_teacher_drops_it_in_one_action(room):
    store, clock, code, secret = room
    ended = burst(store, clock, code)
    assert ended["seated"] == live.ADDRESS_SEATS                                 # 40 of 500 ...
    assert ended["rate"] + ended["cap"] == 500 - live.ADDRESS_SEATS and ended["cap"] > 300   # ... then the cap
    assert store.room(code).seats == live.ADDRESS_SEATS and sum(store.snapshot(code)[1]) == live.ADDRESS_SEATS
    store.vote(code, store.join(code, STUDENT), 1, 2)                            # the room is not full for others
    seating = store.seating(code, secret)
    assert [(g.seats, g.answered) for g in seating.groups] == [(live.ADDRESS_SEATS, live.ADDRESS_SEATS), (1, 1)]
    assert SCRIPT not in repr(seating) and STUDENT not in repr(seating)         # counts, never an address
    with pytest.raises(NotTeacher):
        store.drop_group(code, "nope", seating.groups[0].key)
    started = time.monotonic()
    assert store.drop_group(code, secret, seating.groups[0].key) == live.ADDRESS_SEATS
    assert time.monotonic() - started < 5                                        # one action, one transaction
    room_now, counts = store.snapshot(code)
    assert room_now.seats == 1 and counts == [0, 0, 1, 0]                         # its votes went with it
    assert burst(store, clock, code, phones=50) == {"seated": 0, "rate": 0, "cap": 0, "barred": 50}
    late = store.join(code, "192.0.2.44")                                        # a late student joins and votes
    store.vote(code, late, 1, 0)
    assert store.snapshot(code)[1] == [1, 0, 1, 0] and store.seating(code, secret).barred == 1


def test_the_teacher_resets_every_seat_and_the_class_joins_again(room):
    store, clock, code, secret = room
    burst(store, clock, code, phones=60)
    student = store.join(code, STUDENT)
    store.vote(code, student, 1, 1)
    store.drop_group(code, secret, store.seating(code, secret).groups[0].key)
    with pytest.raises(NotTeacher):
        store.reset_seats(code, "nope")
    assert store.reset_seats(code, secret) == 1
    room_now, counts = store.snapshot(code)
    assert (room_now.seats, room_now.round, counts) == (0, 2, [0, 0, 0, 0])      # the question again, from zero
    with pytest.raises(NoSeat):
        store.vote(code, student, 2, 1)                                          # a phone's old seat: join again
    store.vote(code, store.join(code, STUDENT), 2, 1)
    store.vote(code, store.join(code, SCRIPT), 2, 3)                             # the bar is lifted too
    seating = store.seating(code, secret)
    assert store.snapshot(code)[1] == [0, 1, 0, 1] and seating.barred == 0 and len(seating.groups) == 2


def test_the_teacher_sets_how_many_phones_one_network_may_hold(room):
    store, clock, code, secret = room
    with pytest.raises(ValueError):
        store.set_address_seats(code, secret, 0)
    with pytest.raises(NotTeacher):
        store.set_address_seats(code, "nope", 5)
    assert store.set_address_seats(code, secret, 3).address_seats == 3
    assert burst(store, clock, code, phones=10)["seated"] == 3
    store.set_address_seats(code, secret, 5)                                     # a class of five behind one NAT
    assert burst(store, clock, code, phones=10)["seated"] == 2
    assert store.room(code).seats == 5 == store.seating(code, secret).groups[0].seats


def test_an_empty_seat_freed_is_counted_again_under_the_cap(room):
    """drop_empty frees a group's empty seats: the address may fill them again, up to its cap."""
    store, clock, code, secret = room
    store.set_address_seats(code, secret, 4)
    seats = [store.join(code, SCRIPT) for _ in range(4)]
    store.vote(code, seats[0], 1, 0)
    with pytest.raises(AddressFull):
        store.join(code, SCRIPT)
    assert store.drop_empty(code, secret) == 3
    assert [store.join(code, SCRIPT) for _ in range(3)] and store.room(code).seats == 4


def test_the_join_time_is_kept_for_the_lock_hint(room):
    store, clock, code, secret = room
    assert store.room(code).last_join is None
    store.join(code, STUDENT)
    joined = clock.now
    clock.now += 90
    assert store.room(code).last_join == joined and store.snapshot(code)[0].last_join == joined
    with store.reader.begin() as conn:                                            # and nothing else of the phone
        dump = repr([list(conn.execute(sa.select(t))) for t in live.metadata.sorted_tables])
    assert STUDENT not in dump
