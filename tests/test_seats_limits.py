"""What one client may do to the rooms of a store: open at most ROOMS_PER_HOUR rooms an hour (the probe
opened 40 in 4.3 s, each kept 12 h), and try at most CODE_TRIES wrong codes a minute (it guessed 21 codes
a second). Other clients are never slowed by it, and the server's own machine is not limited. Real Store,
temporary SQLite file, the clock stepped by the test."""
import pytest

from gdn.live import store as live
from gdn.live.store import NoRoom, Store, TooManyRooms, TooManyTries

PROBE, TEACHER = "203.0.113.66", "198.51.100.7"


class Clock:
    def __init__(self, now: float = 1_000_000.0):
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def store(tmp_path):
    clock = Clock()
    store = Store(str(tmp_path / "class.db"), clock=clock)
    yield store, clock
    store.dispose()


def test_one_client_opens_a_few_rooms_an_hour_and_other_clients_are_not_slowed(store):
    store, clock = store
    for _ in range(live.ROOMS_PER_HOUR):
        store.create_room(PROBE)
        clock.now += 1
    with pytest.raises(TooManyRooms) as refused:
        store.create_room(PROBE)
    assert refused.value.details["limit"] == live.ROOMS_PER_HOUR
    assert 0 < refused.value.details["minutes"] <= 60
    code, secret = store.create_room(TEACHER)                             # another client: at once
    assert store.is_teacher(code, secret)
    for local in (None, "127.0.0.1", "::1"):                              # the server's own machine
        for _ in range(live.ROOMS_PER_HOUR + 1):
            store.create_room(local)
    clock.now += live.ROOMS_WINDOW_S
    store.create_room(PROBE)                                              # an hour later: again
    with store.reader.begin() as conn:                                    # no address kept, only its hash
        assert PROBE not in repr(list(conn.execute(live.clients.select())))


def test_wrong_codes_are_throttled_per_client_and_a_right_one_waits_too(store):
    store, clock = store
    code, _ = store.create_room(TEACHER)
    wrong = next(c * 6 for c in live.CODE_ALPHABET if c * 6 != code)
    assert store.find_room(code, PROBE).code == code                      # a right code costs no try
    for _ in range(live.CODE_TRIES):
        with pytest.raises(NoRoom):
            store.find_room(wrong, PROBE)
        clock.now += 0.05
    for _ in range(3):                                                    # malformed: no room, no try counted
        with pytest.raises(NoRoom):
            store.find_room("0O1I", TEACHER)
    with pytest.raises(TooManyTries) as refused:
        store.find_room(code, PROBE)                                      # the right one waits as well
    assert 0 < refused.value.details["wait"] <= live.CODE_TRIES_WINDOW_S
    assert store.find_room(code, TEACHER).code == code                    # another client: at once
    assert store.find_room(code, None).code == code
    clock.now += live.CODE_TRIES_WINDOW_S
    assert store.find_room(code, PROBE).code == code                      # a minute later: again


def test_a_closed_rooms_code_is_no_guess(store):
    """A class's phones reloading the link of a room their teacher closed: NoRoom each time, but no wrong
    try counted, so the network can join the teacher's next room at once."""
    store, clock = store
    old, secret = store.create_room(TEACHER)
    store.close(old, secret)
    for _ in range(2 * live.CODE_TRIES):
        with pytest.raises(NoRoom):
            store.find_room(old, PROBE)
    new, _ = store.create_room(TEACHER)
    assert store.find_room(new, PROBE).code == new


def test_guessing_codes_finds_no_class_in_an_hour(store):
    """At CODE_TRIES a minute, an hour of guessing tries 60 x CODE_TRIES codes of 31^6 (about 887 million)."""
    store, clock = store
    store.create_room(TEACHER)
    tried = 0
    for minute in range(60):
        clock.now += live.CODE_TRIES_WINDOW_S
        for guess in range(50):                                           # 50 a minute asked, CODE_TRIES tried
            code = "".join(live.CODE_ALPHABET[(minute * 50 + guess) // 31 ** i % 31] for i in range(6))
            try:
                store.find_room(code, PROBE)
            except TooManyTries:
                continue
            except NoRoom:
                pass
            tried += 1
    assert tried <= 60 * live.CODE_TRIES
