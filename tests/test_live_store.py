"""The live class's store, on SQLite and on a real PostgreSQL server: rounds, votes counted once, the
teacher's secret, limits, expiry, restarts, and two "replicas" (two Store objects) writing at once."""
import secrets
import threading
import uuid

import pytest
import sqlalchemy as sa

from gdn.live import store as live
from gdn.live.store import (
    AddressFull,
    BadVote,
    Locked,
    NoRoom,
    NoSeat,
    NotOpen,
    NotTeacher,
    RoomFull,
    Store,
    TooFast,
    TooManySeats,
)
from gdn.live.tables import ADDED
from devtools.pg_server import postgres_server


class Clock:
    def __init__(self, now: float = 1_000_000.0):
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture(scope="module")
def pg():
    with postgres_server() as server:
        yield server


@pytest.fixture(params=["sqlite", "postgresql"])
def location(request, tmp_path):
    """A fresh, empty store location: a SQLite file, or a new database on the module's PostgreSQL."""
    if request.param == "sqlite":
        return str(tmp_path / "class.db")
    server = request.getfixturevalue("pg")
    name = f"t_{uuid.uuid4().hex[:12]}"
    engine = sa.create_engine(live.engine_url(server.url), isolation_level="AUTOCOMMIT")
    with engine.connect() as conn:
        conn.exec_driver_sql(f"CREATE DATABASE {name}")
    engine.dispose()
    return server.url.rsplit("/", 1)[0] + "/" + name


def voter() -> str:
    """An id the store never gave out (a client's own invention)."""
    return secrets.token_urlsafe(12)


def seat(store: Store, code: str) -> str:
    """A phone's seat, joined from an address of its own (the mint rate per address is tested below)."""
    return store.join(code, secrets.token_hex(4))


def test_a_round_counts_each_student_once_and_a_changed_answer_replaces_the_old(location):
    store = Store(location)
    code, secret = store.create_room()
    assert len(code) == 6 and set(code) <= set(live.CODE_ALPHABET)
    room = store.ask(code, secret, "alpha_zero", n_options=4)
    assert (room.question, room.round, room.revealed) == ("alpha_zero", 1, False)
    a, b, c = (seat(store, code) for _ in range(3))
    store.vote(code, a, 1, 2)
    store.vote(code, b, 1, 0)
    store.vote(code.lower(), c, 1, 2)                      # the code as a student types it
    store.vote(code, b, 1, 2)                              # b changes its mind
    assert store.snapshot(code)[1] == [0, 0, 3, 0]
    assert store.my_vote(code, b, 1) == 2 and store.my_vote(code, voter(), 1) is None
    store.reveal(code, secret)
    with pytest.raises(NotOpen):                           # after the reveal, answers are final
        store.vote(code, a, 1, 1)
    assert store.snapshot(code)[1] == [0, 0, 3, 0]
    room = store.reset(code, secret)
    assert (room.round, room.revealed) == (2, False) and store.snapshot(code)[1] == [0, 0, 0, 0]
    with pytest.raises(NotOpen):                           # a phone still showing round 1
        store.vote(code, a, 1, 1)
    store.vote(code, a, 2, 3)
    room = store.ask(code, secret, "beta_zero", n_options=3)
    assert room.round == 3 and store.snapshot(code)[1] == [0, 0, 0]
    store.close(code, secret)
    with pytest.raises(NoRoom):
        store.snapshot(code)
    with pytest.raises(NoRoom):
        store.vote(code, a, 3, 0)


def test_a_new_round_asked_twice_from_the_same_round_starts_one(location):
    """A repeated "next" (a double click, or a callback run again) names the round it followed: the
    second finds the room past it and changes nothing; a reset from a stale round does nothing either."""
    store = Store(location)
    code, secret = store.create_room()
    assert store.ask(code, secret, "alpha_zero", 4, after_round=0).round == 1
    store.vote(code, seat(store, code), 1, 2)
    again = store.ask(code, secret, "beta_zero", 3, after_round=0)          # the same click, a second time
    assert (again.round, again.question, again.n_options) == (1, "alpha_zero", 4)
    assert store.snapshot(code)[1] == [0, 0, 1, 0]                          # round 1's vote still counts
    assert store.reset(code, secret, after_round=0).round == 1
    assert store.ask(code, secret, "beta_zero", 3, after_round=1).round == 2
    assert store.reset(code, secret, after_round=2).round == 3
    assert store.ask(code, secret, "beta_zero", 3).round == 4                 # without after_round: always


def test_going_back_shows_a_round_as_it_was_and_forward_returns(location):
    """Back from question 2 shows question 1's round again with its votes and its reveal (no new round, no
    votes lost); forward returns to question 2's round; a question asked after going back gets a round of its
    own past every earlier one; a stale press moves nothing."""
    store = Store(location)
    code, secret = store.create_room()
    assert store.revisit(code, secret, -1) is None                          # nothing asked yet
    store.ask(code, secret, "alpha_zero", 4)
    a, b = seat(store, code), seat(store, code)
    store.vote(code, a, 1, 2)
    store.vote(code, b, 1, 0)
    store.reveal(code, secret)
    store.ask(code, secret, "beta_zero", 3)
    store.vote(code, a, 2, 1)
    back = store.revisit(code, secret, -1, after_round=2)
    assert (back.round, back.question, back.n_options, back.revealed) == (1, "alpha_zero", 4, True)
    assert store.snapshot(code)[1] == [1, 0, 1, 0]                           # its answers as they were
    assert store.revisit(code, secret, -1, after_round=1) is None            # nothing before the first
    assert store.revisit(code, secret, -1, after_round=2).round == 1          # a stale press: still round 1
    ahead = store.revisit(code, secret, +1, after_round=1)
    assert (ahead.round, ahead.question, ahead.revealed) == (2, "beta_zero", False)
    assert store.snapshot(code)[1] == [0, 1, 0]
    assert store.revisit(code, secret, +1, after_round=2) is None            # the latest: the next is asked
    store.revisit(code, secret, -1)
    fresh = store.ask(code, secret, "gamma", 2, after_round=1)              # asked while round 1 is shown
    assert (fresh.round, fresh.question) == (3, "gamma") and store.snapshot(code)[1] == [0, 0]
    assert store.revisit(code, secret, -1).round == 2 and store.revisit(code, secret, -1).round == 1
    assert store.reset_seats(code, secret) == 2
    assert store.room(code).round == 4 and store.revisit(code, secret, -1).round == 3


def test_joins_at_once_from_one_address_stop_at_its_cap(location):
    """Phones of one address joining at the same moment, each on a connection of its own: the cap holds
    (on PostgreSQL the first joins of an address found no bucket row to lock and all got in)."""
    from concurrent.futures import ThreadPoolExecutor
    store = Store(location)
    for _ in range(4):                                     # a race shows only now and then: four rooms
        code, secret = store.create_room()
        store.set_address_seats(code, secret, 3)
        start = threading.Barrier(12)

        def one(_):
            start.wait()
            try:
                return store.join(code, "198.51.100.20")
            except (AddressFull, TooManySeats):
                return None

        with ThreadPoolExecutor(12) as pool:
            seated = [s for s in pool.map(one, range(12)) if s]
        assert len(seated) == 3 and store.room(code).seats == 3


def test_only_the_teachers_secret_controls_the_room(location):
    store = Store(location)
    code, secret = store.create_room()
    other_code, other_secret = store.create_room()
    store.ask(code, secret, "alpha_zero", n_options=4)
    for wrong in ("", None, code, other_secret, secret[:-1] + ("x" if secret[-1] != "x" else "y")):
        for action in (store.reveal, store.reset, store.close):
            with pytest.raises(NotTeacher):
                action(code, wrong)
        with pytest.raises(NotTeacher):
            store.ask(code, wrong, "beta_zero", 3)
        with pytest.raises(NotTeacher):
            store.follow(code, wrong, {"page": "memory"})
        assert not store.is_teacher(code, wrong)
    room = store.room(code)
    assert (room.question, room.round, room.revealed, room.closed) == ("alpha_zero", 1, False, False)
    assert store.is_teacher(code, secret)
    assert store.follow(code, secret, {"page": "memory", "params": {"memory_t": 3}}).view == \
        {"page": "memory", "params": {"memory_t": 3}}


def test_the_room_and_its_votes_survive_a_restart_and_nothing_personal_is_kept(location):
    store = Store(location)
    code, secret = store.create_room()
    store.ask(code, secret, "crossover", n_options=4)
    ids = [seat(store, code) for _ in range(5)]
    for i, v in enumerate(ids):
        store.vote(code, v, 1, i % 4)
    store.dispose()
    again = Store(location)                                # a replica started afterwards
    room, counts = again.snapshot(code)
    assert room.question == "crossover" and counts == [2, 1, 1, 1]
    with again.reader.begin() as conn:                     # neither the voters' ids nor the secret are stored
        dump = repr([list(conn.execute(sa.select(t))) for t in live.metadata.sorted_tables])
    assert not any(v in dump for v in ids) and secret not in dump
    with pytest.raises(NotTeacher):                        # the secret still works, as a hash
        again.reveal(code, "nope")
    assert again.reveal(code, secret).revealed


def test_rooms_expire_after_twelve_hours_and_are_purged(location):
    clock = Clock()
    store = Store(location, clock=clock)
    code, secret = store.create_room()
    store.ask(code, secret, "alpha_zero", 4)
    store.vote(code, seat(store, code), 1, 0)
    clock.now += live.ROOM_LIFETIME_S - 1
    assert store.snapshot(code)[1] == [1, 0, 0, 0]
    clock.now += 2
    with pytest.raises(NoRoom):
        store.snapshot(code)
    with pytest.raises(NoRoom):
        store.reveal(code, secret)
    store.create_room()                                    # a new room purges the old ones
    with store.reader.begin() as conn:
        assert conn.execute(sa.select(sa.func.count()).select_from(live.votes)
                            .where(live.votes.c.code == code)).scalar() == 0


def test_seats_rate_limit_and_bad_input(location, monkeypatch):
    clock = Clock()
    store = Store(location, clock=clock)
    code, secret = store.create_room()
    store.ask(code, secret, "alpha_zero", 4)
    monkeypatch.setattr(live, "MAX_STUDENTS", 3)
    students = [seat(store, code) for _ in range(3)]
    for s in students:
        store.vote(code, s, 1, 1)
    with pytest.raises(RoomFull):
        seat(store, code)
    with pytest.raises(NoSeat):                            # an id the server never gave out
        store.vote(code, voter(), 1, 1)
    assert store.room(code).seats == 3
    store.vote(code, students[0], 1, 2)                    # a student already seated keeps voting
    for _ in range(live.VOTES_PER_WINDOW - 2):
        store.vote(code, students[0], 1, 3)
    with pytest.raises(TooFast):
        store.vote(code, students[0], 1, 0)
    assert store.snapshot(code)[1] == [0, 2, 0, 1]         # the refused vote changed nothing
    clock.now += live.VOTE_WINDOW_S
    store.vote(code, students[0], 1, 0)
    assert store.snapshot(code)[1] == [1, 2, 0, 0]
    for bad_choice in (-1, 4, "1", None, 1.0):
        with pytest.raises(BadVote):
            store.vote(code, students[1], 1, bad_choice)
    for bad_voter in ("", "short", "x" * 65, "has space here", None):
        with pytest.raises(BadVote):
            store.vote(code, bad_voter, 1, 0)
    for bad_code in ("", "ABC", "ABCDE0", "ABCDEFG", None):
        with pytest.raises(NoRoom):
            store.vote(bad_code, students[1], 1, 0)
    with pytest.raises(NoRoom):
        store.snapshot("ZZZZZZ")
    with pytest.raises(ValueError):
        store.ask(code, secret, "alpha_zero", 1)


def test_every_replica_hashes_with_the_stores_one_key(location, monkeypatch):
    """No GDN_CLASS_KEY: the first replica makes the key and keeps it in the store's place (a file beside
    SQLite, tested in test_seats_privacy.py; a row of gdn_keys on PostgreSQL), the others read it."""
    monkeypatch.delenv("GDN_CLASS_KEY", raising=False)
    first = Store(location)
    code, _ = first.create_room()
    seat = first.join(code, "192.0.2.1")
    second = Store(location)
    assert len(first.key) == 64 and second.key == first.key and second.has_seat(code, seat)
    if not second.is_sqlite:
        with second.reader.begin() as conn:
            assert [r.value.encode() for r in conn.execute(sa.select(live.keys))] == [first.key]


def test_a_burst_is_capped_dropped_and_reset_and_clients_are_limited(location):
    """Issue 49's store actions on both databases (the whole story on SQLite: test_seats_*.py): one
    address stops at the room's cap, the teacher drops its group (votes too, the address barred) and
    resets every seat; a client's rooms per hour and wrong codes per minute are counted."""
    clock = Clock()
    store = Store(location, clock=clock, mint=(500, 100, 5))
    code, secret = store.create_room("198.51.100.7")
    store.ask(code, secret, "alpha_zero", 4)
    for _ in range(5):
        store.vote(code, store.join(code, "203.0.113.66"), 1, 0)
    with pytest.raises(live.AddressFull):
        store.join(code, "203.0.113.66")
    store.vote(code, store.join(code, "192.0.2.1"), 1, 1)
    burst = store.seating(code, secret).groups[0]
    assert (burst.seats, burst.answered) == (5, 5) and store.drop_group(code, secret, burst.key) == 5
    assert store.snapshot(code)[1] == [0, 1, 0, 0] and store.seating(code, secret).barred == 1
    with pytest.raises(live.Barred):
        store.join(code, "203.0.113.66")
    assert store.reset_seats(code, secret) == 1 and store.join(code, "203.0.113.66")
    for _ in range(live.ROOMS_PER_HOUR - 1):
        store.create_room("198.51.100.7")
    with pytest.raises(live.TooManyRooms):
        store.create_room("198.51.100.7")
    for _ in range(live.CODE_TRIES):
        with pytest.raises(NoRoom):
            store.find_room("ZZZZZZ" if code != "ZZZZZZ" else "YYYYYY", "203.0.113.66")
    with pytest.raises(live.TooManyTries):
        store.find_room(code, "203.0.113.66")
    clock.now += live.CODE_TRIES_WINDOW_S
    assert store.find_room(code, "203.0.113.66").code == code


def test_two_replicas_voting_at_once_lose_and_double_nothing(location):
    """Two Store objects (as two app replicas) and 8 threads: 80 students, each votes then half change."""
    first, second = Store(location), Store(location)
    code, secret = first.create_room()
    first.ask(code, secret, "alpha_zero", 4)
    students = [(seat(first, code), i % 4) for i in range(80)]
    errors = []

    def work(part):
        try:
            for j, (v, choice) in enumerate(part):
                replica = (first, second)[j % 2]
                replica.vote(code, v, 1, choice)
                if j % 2:
                    (second, first)[j % 2].vote(code, v, 1, (choice + 1) % 4)
        except Exception as e:             # noqa: BLE001  (reported below, with the thread's failure)
            errors.append(e)

    threads = [threading.Thread(target=work, args=(students[i::8],)) for i in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors
    expected = [0, 0, 0, 0]
    for rank in range(8):
        for j, (_, choice) in enumerate(students[rank::8]):
            expected[(choice + 1) % 4 if j % 2 else choice] += 1
    assert second.snapshot(code)[1] == expected and sum(expected) == 80


def test_one_client_minting_seats_casts_no_more_than_the_mint_rate(location):
    """The vote stuffer of issue 40: a fresh id with every tap (refused: no seat), then a join before every
    tap from one address. Its votes stay within MINT_BURST + MINT_PER_S x the time (the teacher let a whole
    room in from one address: the cap is tested in test_seats_burst.py); a real student behind the same
    address joins a moment after it stops."""
    clock = Clock()
    store = Store(location, clock=clock)
    code, secret = store.create_room()
    store.ask(code, secret, "alpha_zero", 4)
    store.set_address_seats(code, secret, live.MAX_STUDENTS)
    for _ in range(20):                                    # fresh ids: not one vote
        with pytest.raises(NoSeat):
            store.vote(code, voter(), 1, 0)
    cast, seconds = 0, 30.0
    for _ in range(int(seconds / 0.01)):                   # a join and a tap every 10 ms for 30 s
        clock.now += 0.01
        try:
            store.vote(code, store.join(code, "203.0.113.7"), 1, 0)
            cast += 1
        except TooManySeats:
            pass
    allowed = live.MINT_BURST + live.MINT_PER_S * seconds
    assert allowed - 2 <= cast <= allowed                  # the rate, and no more
    assert store.snapshot(code)[1][0] == cast == store.room(code).seats
    clock.now += 1 / live.MINT_PER_S
    store.vote(code, store.join(code, "203.0.113.7"), 1, 2)    # a real student, same NAT
    store.vote(code, store.join(code, "198.51.100.1"), 1, 2)   # and one elsewhere, at once
    assert store.snapshot(code)[1][2] == 2


def test_the_mint_rate_is_the_operators_to_set(location, monkeypatch, caplog):
    assert live.mint_rate("") is None and live.mint_rate(" 120, 6 ") == (120.0, 6.0, 120)
    assert live.mint_rate("10,4") == (10.0, 4.0, live.ADDRESS_SEATS) and live.mint_rate("20,4,200").per_address == 200
    assert live.mint_rate("600,10") == (600.0, 10.0, live.MAX_STUDENTS)    # an older setting past a room's size
    for bad in ("60", "a,b", "0,4", "60,0", "60,-1", "1,2,0", "1,2,501", "1,2,3,4"):
        with pytest.raises(ValueError, match="GDN_CLASS_MINT"):
            live.mint_rate(bad)
    monkeypatch.setenv("GDN_CLASS_DB", location)
    monkeypatch.setenv("GDN_CLASS_MINT", "sixty")               # a typo: logged, the defaults hold, no error
    with caplog.at_level("WARNING", logger="gdn.live.store"):
        assert Store.from_env().mint == Store(location).mint
    assert "GDN_CLASS_MINT='sixty': write BURST,PER_S[,PER_ADDRESS]" in caplog.text
    clock = Clock()
    monkeypatch.setenv("GDN_CLASS_MINT", "2,0.5")
    store = Store.from_env()
    store.clock = clock
    code, _ = store.create_room()
    assert store.room(code).address_seats == live.ADDRESS_SEATS     # the default cap: above this burst
    store.join(code, "192.0.2.9")
    store.join(code, "192.0.2.9")
    with pytest.raises(TooManySeats):
        store.join(code, "192.0.2.9")
    clock.now += 2.0                                       # one seat back at 0.5 a second
    store.join(code, "192.0.2.9")
    with pytest.raises(TooManySeats):
        store.join(code, "192.0.2.9")


def test_two_hundred_students_behind_one_address_join_within_a_minute(location):
    """A class of 200 behind one school NAT, once the teacher set 200 phones per network."""
    clock = Clock()
    store = Store(location, clock=clock)
    code, secret = store.create_room()
    store.ask(code, secret, "alpha_zero", 4)
    assert store.set_address_seats(code, secret, 200).address_seats == 200
    for i in range(200):                                   # evenly over 59.7 s
        clock.now += 0.3 * (i > 0)
        store.vote(code, store.join(code, "192.0.2.1"), 1, i % 4)
    assert store.snapshot(code)[1] == [50, 50, 50, 50] and store.room(code).seats == 200


def test_the_teacher_locks_the_room_and_drops_empty_seats(location):
    store = Store(location)
    code, secret = store.create_room()
    store.ask(code, secret, "alpha_zero", 4)
    answered, empty = seat(store, code), [seat(store, code) for _ in range(3)]
    store.vote(code, answered, 1, 1)
    with pytest.raises(NotTeacher):
        store.lock(code, "nope")
    with pytest.raises(NotTeacher):
        store.drop_empty(code, "nope")
    assert store.lock(code, secret).locked and store.room(code).locked
    with pytest.raises(Locked):
        seat(store, code)
    store.vote(code, empty[0], 1, 3)                       # a seated student still answers
    assert store.drop_empty(code, secret) == 2
    room, counts = store.snapshot(code)
    assert room.seats == 2 and counts == [0, 1, 0, 1]
    with pytest.raises(NoSeat):
        store.vote(code, empty[1], 1, 0)
    assert not store.lock(code, secret, False).locked
    assert store.has_seat(code, seat(store, code)) and not store.has_seat(code, empty[2])
    assert not store.has_seat(code, 7) and not store.has_seat(code, "no")


def downgrade(store: Store, version: int) -> None:
    """Make a store look as `version` wrote it: the columns later versions added dropped, its number set."""
    with store.writer.begin() as conn:
        conn.exec_driver_sql("DROP INDEX IF EXISTS gdn_members_address")     # SQLite drops no indexed column
        for later in range(version + 1, live.SCHEMA_VERSION + 1):
            for table, column, _ in ADDED[later]:
                conn.exec_driver_sql(f"ALTER TABLE {table} DROP COLUMN {column}")
        conn.execute(live.schema_info.update().values(version=version))
    store.dispose()


def test_a_version_1_store_is_migrated(location):
    """A store written by the first schema (no lock) is brought to this one, its rooms kept."""
    store = Store(location)
    code, secret = store.create_room()
    downgrade(store, 1)
    again = Store(location)
    assert not again.room(code).locked and again.lock(code, secret).locked
    with again.reader.begin() as conn:
        assert conn.execute(sa.select(live.schema_info.c.version)).scalar() == live.SCHEMA_VERSION


def test_a_version_2_store_with_a_live_class_is_migrated(location):
    """Seats hashed the old way (sha256 of code:seat): the room, its teacher, its question and its votes go
    on; an old seat is no seat any more (its phone takes a new one at its next tap), and the room asks its
    question in a new round, so that phone's answer with its new seat is not counted beside its old one."""
    store = Store(location)
    code, secret = store.create_room()
    store.ask(code, secret, "alpha_zero", 4)
    downgrade(store, 2)
    old_seat = secrets.token_urlsafe(18)
    old_hash = live._hash(f"{code}:{old_seat}")[:32]
    engine = sa.create_engine(live.engine_url(location))
    with engine.begin() as conn:                           # what version 2's join and vote wrote
        conn.exec_driver_sql("UPDATE gdn_seats SET taken = 1")
        conn.execute(sa.text("INSERT INTO gdn_members (code, voter, window_start, window_votes) "
                             "VALUES (:c, :v, 0, 0)"), {"c": code, "v": old_hash})
        conn.execute(sa.text("INSERT INTO gdn_votes (code, round, voter, choice, at) VALUES (:c, 1, :v, 3, 0)"),
                     {"c": code, "v": old_hash})
    engine.dispose()
    again = Store(location)
    room, counts = again.snapshot(code)
    assert (room.question, room.round, counts, room.seats) == ("alpha_zero", 2, [0, 0, 0, 0], 0)
    assert room.address_seats == live.ADDRESS_SEATS
    assert not again.has_seat(code, old_seat)
    with again.reader.begin() as conn:                     # the old round's vote is kept, under its number
        assert conn.execute(sa.select(live.votes.c.choice).where(live.votes.c.round == 1)).scalars().all() == [3]
    again.vote(code, again.join(code, "192.0.2.1"), 2, 3)  # the same phone, its new seat, the new round
    assert again.snapshot(code)[1] == [0, 0, 0, 1]         # counted once
    assert [g.seats for g in again.seating(code, secret).groups] == [1]
    assert again.reset_seats(code, secret) == 1 and again.snapshot(code)[0].seats == 0


def test_a_newer_schema_is_refused(tmp_path):
    location = str(tmp_path / "class.db")
    store = Store(location)
    with store.writer.begin() as conn:
        conn.execute(live.schema_info.update().values(version=live.SCHEMA_VERSION + 1))
    store.dispose()
    with pytest.raises(RuntimeError, match="schema version"):
        Store(location)


def test_the_default_location_and_urls(monkeypatch, tmp_path):
    monkeypatch.delenv("GDN_CLASS_DB", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert live.default_location() == str(tmp_path / "gdn-explorer" / "class.db")
    monkeypatch.setenv("GDN_CLASS_DB", "postgresql://u:p@db.example:5432/class")
    assert live.engine_url(live.default_location()) == "postgresql+psycopg://u:p@db.example:5432/class"
    assert live.engine_url(str(tmp_path / "a" / "b.db")) == f"sqlite:///{tmp_path}/a/b.db"
    assert (tmp_path / "a").is_dir()
