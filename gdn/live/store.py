"""One store for every replica: rooms, the live question and the students' votes, in SQLite or PostgreSQL.

    store = Store.from_env()                          # GDN_CLASS_DB: a file path (SQLite) or postgresql://...
    code, secret = store.create_room()                # the teacher keeps `secret`; students get `code`
    store.ask(code, secret, "alpha_zero", n_options=4)
    seat = store.join(code, address="203.0.113.7")   # a phone's seat, minted by the server (rate per address)
    store.vote(code, seat, round_=1, choice=2)        # returns once the vote is committed
    room, counts = store.snapshot(code)               # counts[i]: votes for option i in this round

A room's question is asked in rounds: asking a question, the next one or a reset starts a new round, and
only the votes of the current round count. A student's vote is one row per (room, round, voter), so a
changed answer replaces the old one and is counted once.

A vote needs a seat, and only the server makes seats (join): a random token the phone keeps, stored here
only as a hash salted with the room code. Seats are minted at a limited rate per network address (a
token bucket of MINT_BURST, refilled MINT_PER_S a second), so a client that sends a fresh id with every
tap casts at most as many votes as it is given seats, while a class of 200 behind one NAT address joins
within a minute. The teacher can lock the room (no new seats) and drop the seats that never answered.
Nothing personal is kept: seats, the teacher's secret and addresses are stored only as salted hashes.

SQLite (the default, one host): WAL so that readers never wait for the writer, every write transaction
takes the write lock up front (BEGIN IMMEDIATE: two replicas never deadlock upgrading a read lock), and
synchronous=FULL so a committed vote survives a crash of the machine, not only of the process.
PostgreSQL (several hosts): the room row is share-locked by votes and write-locked by the teacher's
actions, so a reveal waits for the votes in flight and no vote lands after it.
"""
from __future__ import annotations

import hashlib
import hmac
import json
import logging
import os
import re
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import wraps
from pathlib import Path

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite

from gdn.live.tables import (  # noqa: F401  (metadata, schema_info, SCHEMA_VERSION: read here by the tests too)
    CODE_LENGTH,
    SCHEMA_VERSION,
    members,
    metadata,
    migrate,
    mints,
    rooms,
    schema_info,
    seats,
    votes,
)

ROOM_LIFETIME_S = 12 * 3600
MAX_STUDENTS = 500
VOTE_WINDOW_S = 10.0            # rate limit: at most VOTES_PER_WINDOW votes per browser per window
VOTES_PER_WINDOW = 10
MINT_BURST = 60                 # seats one address may take at once (a class arriving together) ...
MINT_PER_S = 4.0                # ... then this many a second: 200 behind one NAT join within 35 s
CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"     # no 0/O, 1/I/L: read off a projector
VOTER_ID = re.compile(r"[A-Za-z0-9_-]{8,64}")


class LiveError(Exception):
    """A refused request; `reason` names its message (i18n key live.err_<reason>)."""
    reason = "unknown"


class NoRoom(LiveError):
    reason = "no_room"          # unknown code, expired or closed


class NotTeacher(LiveError):
    reason = "not_teacher"


class RoomFull(LiveError):
    reason = "full"


class TooFast(LiveError):
    reason = "too_fast"


class NotOpen(LiveError):
    reason = "not_open"         # the question moved on or was revealed


class BadVote(LiveError):
    reason = "bad_vote"         # no such option, or a malformed seat


class NoSeat(LiveError):
    reason = "no_seat"          # a seat this room never gave out, or one the teacher dropped: join again


class Locked(LiveError):
    reason = "locked"           # the teacher locked the room: no new seats


class TooManySeats(LiveError):
    reason = "mint"             # this address took seats faster than MINT_PER_S


def retried(method):
    """Run a write again when the database says "busy" (SQLite: another process held the lock past the
    busy timeout, or recovered the WAL after a replica was killed) or dropped the connection (PostgreSQL
    restarted). Safe: a failed transaction rolled back whole, and every write here can be repeated (a
    vote is an upsert, and the rate limit counts only committed votes)."""
    @wraps(method)
    def run(self, *args, **kwargs):
        for attempt in range(4):
            try:
                return method(self, *args, **kwargs)
            except sa.exc.OperationalError:
                if attempt == 3:
                    raise
                time.sleep(0.05 * 2 ** attempt)
    return run


@dataclass(frozen=True)
class Room:
    code: str
    question: str | None
    n_options: int
    round: int
    revealed: bool
    closed: bool
    expires_at: float
    view: dict | None
    locked: bool = False
    seats: int = 0              # seats taken (room() and snapshot() read it; a teacher's update does not)


def default_location() -> str:
    """GDN_CLASS_DB, else class.db in the user's data folder (XDG_DATA_HOME or ~/.local/share)."""
    configured = os.environ.get("GDN_CLASS_DB", "").strip()
    if configured:
        return configured
    data = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return str(data / "gdn-explorer" / "class.db")


def engine_url(location: str) -> str:
    """postgresql://... -> SQLAlchemy's psycopg (3) URL; anything else is a SQLite file path."""
    if location.startswith(("postgresql://", "postgres://")):
        return "postgresql+psycopg://" + location.split("://", 1)[1]
    if location.startswith("postgresql+psycopg://"):
        return location
    path = Path(location).expanduser().resolve()
    path.parent.mkdir(parents=True, exist_ok=True)
    return f"sqlite:///{path}"


def mint_rate(text: str) -> tuple[float, float] | None:
    """GDN_CLASS_MINT: "" (the defaults) or "BURST,PER_S", e.g. "120,6"; anything else is a ValueError
    that says what to write."""
    if not text.strip():
        return None
    try:
        burst, per_s = (float(x) for x in text.split(","))
    except ValueError:
        burst = per_s = -1.0
    if not (burst >= 1 and per_s > 0):
        raise ValueError(f"GDN_CLASS_MINT={text!r}: write BURST,PER_S, e.g. 60,4 (seats one address takes at "
                         f"once, then per second)")
    return burst, per_s


def _hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def normalize_code(code: str) -> str:
    """What a student typed ("abc 234") -> the stored form ("ABC234"); NoRoom when it cannot be one."""
    code = re.sub(r"[\s-]", "", str(code or "")).upper()
    if len(code) != CODE_LENGTH or any(c not in CODE_ALPHABET for c in code):
        raise NoRoom(code)
    return code


class Store:
    def __init__(self, location: str, clock: Callable[[], float] = time.time, mint: tuple[float, float] | None = None):
        """mint: (burst, seats per second) per address; default (MINT_BURST, MINT_PER_S)."""
        self.mint = mint
        self.url = engine_url(location)
        self.clock = clock
        self.is_sqlite = self.url.startswith("sqlite")
        if self.is_sqlite:
            # Two pools on one file: readers begin deferred (they never block a writer, WAL), writers
            # begin immediate. check_same_thread off: Streamlit runs sessions on many threads; the pool
            # lends a connection to one thread at a time.
            args = {"connect_args": {"check_same_thread": False, "timeout": 10}}
            self.reader = sa.create_engine(self.url, **args)
            self.writer = sa.create_engine(self.url, **args)
            for engine, begin in ((self.reader, "BEGIN"), (self.writer, "BEGIN IMMEDIATE")):
                sa.event.listen(engine, "connect", _sqlite_connect)
                sa.event.listen(engine, "begin", lambda conn, sql=begin: conn.exec_driver_sql(sql))
            self._insert = sqlite.insert
        else:
            # pre_ping: a connection the database dropped (a restart) is replaced, not handed out.
            self.reader = self.writer = sa.create_engine(self.url, pool_pre_ping=True, pool_size=5, max_overflow=10)
            self._insert = postgresql.insert
        self._migrate()

    @classmethod
    def from_env(cls) -> Store:
        """The store at GDN_CLASS_DB; GDN_CLASS_MINT="BURST,PER_S" sets the seat mint's rate (a larger
        class behind one address, or a test). A malformed rate is logged with what to write and the
        defaults hold: the class goes on (a ValueError here reached every phone as a traceback)."""
        try:
            mint = mint_rate(os.environ.get("GDN_CLASS_MINT", ""))
        except ValueError as e:
            logging.getLogger(__name__).warning("%s; using the default rate", e)
            mint = None
        return cls(default_location(), mint=mint)

    def dispose(self) -> None:
        self.reader.dispose()
        self.writer.dispose()

    # --- schema -----------------------------------------------------------------------------------
    def _migrate(self) -> None:
        """Create the tables on first use, or bring an older schema up to this one (tables.migrate).
        Every replica runs this at start; the lock makes the first one create and the others wait."""
        with self.writer.begin() as conn:
            if not self.is_sqlite:
                conn.execute(sa.text("SELECT pg_advisory_xact_lock(72817)"))   # any fixed number
            migrate(conn)

    # --- the teacher ------------------------------------------------------------------------------
    def create_room(self) -> tuple[str, str]:
        """A new room: (code, teacher secret). Expired rooms are purged first."""
        self.purge()
        secret = secrets.token_urlsafe(24)
        now = self.clock()
        for _ in range(20):
            code = "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))
            with self.writer.begin() as conn:
                taken = conn.execute(sa.select(rooms.c.code).where(rooms.c.code == code)).first()
                if taken:
                    continue
                conn.execute(rooms.insert().values(code=code, teacher_hash=_hash(secret), created_at=now,
                                                   expires_at=now + ROOM_LIFETIME_S, n_options=0, round=0,
                                                   revealed=False, closed=False))
                conn.execute(seats.insert().values(code=code, taken=0))
            return code, secret
        raise RuntimeError("no free room code after 20 tries")

    def _teacher_row(self, conn, code: str, secret: str):
        """The room's row, write-locked, once the room is open and `secret` is its teacher's."""
        row = conn.execute(sa.select(rooms).where(rooms.c.code == code).with_for_update()).first()
        self._check_open(row)
        if not hmac.compare_digest(row.teacher_hash, _hash(secret or "")):
            raise NotTeacher(code)
        return row

    @retried
    def _teacher_update(self, code: str, secret: str, after_round: int | None = None, **values) -> Room:
        """after_round (a new round only): the round the teacher's screen showed when the action was
        asked for. If the room has moved past it since, the action was already done (the same click run
        twice, or a second teacher's screen was faster): nothing changes, and the room comes back as is."""
        code = normalize_code(code)
        with self.writer.begin() as conn:
            row = self._teacher_row(conn, code, secret)
            if values.pop("new_round", False):
                if after_round is not None and row.round != after_round:
                    return _room(row)
                values["round"] = row.round + 1
            conn.execute(rooms.update().where(rooms.c.code == code).values(**values))
            row = conn.execute(sa.select(rooms).where(rooms.c.code == code)).first()
        return _room(row)

    def ask(self, code: str, secret: str, question: str, n_options: int, *, after_round: int | None = None) -> Room:
        """Make `question` live (a new round: its votes start from zero). after_round: the round this asks
        to follow; a stale one changes nothing (see _teacher_update), so a repeated click starts one round."""
        if not 2 <= n_options <= 8:
            raise ValueError(f"a question has 2 to 8 options, got {n_options}")
        return self._teacher_update(code, secret, after_round, question=question, n_options=n_options,
                                    revealed=False, new_round=True)

    def reveal(self, code: str, secret: str) -> Room:
        return self._teacher_update(code, secret, revealed=True)

    def reset(self, code: str, secret: str, *, after_round: int | None = None) -> Room:
        """The same question again, votes from zero (after_round as in ask)."""
        return self._teacher_update(code, secret, after_round, revealed=False, new_round=True)

    def lock(self, code: str, secret: str, locked: bool = True) -> Room:
        """Locked: no new seats (the seated students still vote); unlocked: phones may join again."""
        return self._teacher_update(code, secret, locked=bool(locked))

    @retried
    def drop_empty(self, code: str, secret: str) -> int:
        """Free the seats that never answered in this room (minted and left empty); returns how many.
        A phone whose seat was dropped joins again at its next tap, if the room is not locked."""
        code = normalize_code(code)
        answered = sa.select(votes.c.voter).where(votes.c.code == code)
        with self.writer.begin() as conn:
            self._teacher_row(conn, code, secret)
            empty = members.c.code == code, members.c.voter.not_in(answered)
            dropped = conn.execute(members.delete().where(*empty)).rowcount
            conn.execute(seats.update().where(seats.c.code == code).values(taken=seats.c.taken - dropped))
        return dropped

    def close(self, code: str, secret: str) -> Room:
        return self._teacher_update(code, secret, closed=True)

    def follow(self, code: str, secret: str, view: dict | None) -> Room:
        """Follow-me: the view students should open ({"page": ..., "params": {...}}), or None to stop."""
        return self._teacher_update(code, secret, view=None if view is None else json.dumps(view, sort_keys=True))

    def is_teacher(self, code: str, secret: str) -> bool:
        try:
            row = self._row(normalize_code(code))
        except NoRoom:
            return False
        return row is not None and hmac.compare_digest(row.teacher_hash, _hash(secret or ""))

    # --- the students -----------------------------------------------------------------------------
    @retried
    def join(self, code: str, address: str | None) -> str:
        """A new seat in the room for a phone at `address` (its network address as the server sees it);
        returns the seat's token, which the phone keeps and votes with. Raises NoRoom, Locked, RoomFull
        (MAX_STUDENTS seats taken) or TooManySeats (this address past its mint rate)."""
        code = normalize_code(code)
        where = _hash(f"{code}:{address or '?'}")[:32]
        seat = secrets.token_urlsafe(18)
        now = self.clock()
        with self.writer.begin() as conn:
            row = conn.execute(sa.select(rooms).where(rooms.c.code == code).with_for_update(read=True)).first()
            self._check_open(row)
            if row.locked:
                raise Locked(code)
            bucket = conn.execute(sa.select(mints).where(mints.c.code == code, mints.c.address == where)
                                  .with_for_update()).first()
            burst, per_s = self.mint or (MINT_BURST, MINT_PER_S)
            tokens = burst if bucket is None else min(burst, bucket.tokens + (now - bucket.at) * per_s)
            if tokens < 1:
                raise TooManySeats(code)
            took = conn.execute(seats.update().where(seats.c.code == code, seats.c.taken < MAX_STUDENTS)
                                .values(taken=seats.c.taken + 1))
            if took.rowcount != 1:
                raise RoomFull(code)
            upsert = self._insert(mints).values(code=code, address=where, tokens=tokens - 1, at=now)
            conn.execute(upsert.on_conflict_do_update(index_elements=["code", "address"],
                                                      set_={"tokens": tokens - 1, "at": now}))
            conn.execute(members.insert().values(code=code, voter=_hash(f"{code}:{seat}")[:32], window_start=now,
                                                 window_votes=0))
        return seat

    def has_seat(self, code: str, seat: str) -> bool:
        """Whether `seat` is a seat of this room (a phone's kept token, checked before it is used)."""
        if not isinstance(seat, str) or not VOTER_ID.fullmatch(seat):
            return False
        code = normalize_code(code)
        with self.reader.begin() as conn:
            return conn.execute(sa.select(members.c.voter).where(
                members.c.code == code, members.c.voter == _hash(f"{code}:{seat}")[:32])).first() is not None

    @retried
    def vote(self, code: str, seat: str, round_: int, choice: int) -> None:
        """Store the answer of `seat` (from join) to round `round_`; returns only after the commit. A
        second vote in the same round replaces the first. Raises NoRoom, NotOpen (the round is over or
        revealed), BadVote, NoSeat (not a seat of this room) or TooFast (past the seat's vote rate)."""
        code = normalize_code(code)
        if not isinstance(seat, str) or not VOTER_ID.fullmatch(seat):
            raise BadVote("seat")
        key = _hash(f"{code}:{seat}")[:32]
        now = self.clock()
        with self.writer.begin() as conn:
            row = conn.execute(sa.select(rooms).where(rooms.c.code == code).with_for_update(read=True)).first()
            self._check_open(row)
            if row.question is None or row.revealed or row.round != round_:
                raise NotOpen(code)
            if not (isinstance(choice, int) and not isinstance(choice, bool) and 0 <= choice < row.n_options):
                raise BadVote("choice")
            member = conn.execute(sa.select(members).where(members.c.code == code, members.c.voter == key)
                                  .with_for_update()).first()
            if member is None:
                raise NoSeat(code)
            if now - member.window_start >= VOTE_WINDOW_S:
                conn.execute(members.update().where(members.c.code == code, members.c.voter == key)
                             .values(window_start=now, window_votes=1))
            elif member.window_votes >= VOTES_PER_WINDOW:
                raise TooFast(code)
            else:
                conn.execute(members.update().where(members.c.code == code, members.c.voter == key)
                             .values(window_votes=members.c.window_votes + 1))
            upsert = self._insert(votes).values(code=code, round=round_, voter=key, choice=choice, at=now)
            conn.execute(upsert.on_conflict_do_update(index_elements=["code", "round", "voter"],
                                                      set_={"choice": choice, "at": now}))

    # --- reading ----------------------------------------------------------------------------------
    def _row(self, code: str):
        """The room's row with its seats taken (`taken`)."""
        with self.reader.begin() as conn:
            return conn.execute(_with_seats().where(rooms.c.code == code)).first()

    def _check_open(self, row) -> None:
        if row is None or row.closed or row.expires_at <= self.clock():
            raise NoRoom(row.code if row is not None else "")

    def room(self, code: str) -> Room:
        """The room as it is now; NoRoom when unknown, closed or expired."""
        row = self._row(normalize_code(code))
        self._check_open(row)
        return _room(row)

    def snapshot(self, code: str) -> tuple[Room, list[int]]:
        """The room and its current round's counts per option, read in one transaction."""
        code = normalize_code(code)
        with self.reader.begin() as conn:
            row = conn.execute(_with_seats().where(rooms.c.code == code)).first()
            self._check_open(row)
            counts = [0] * row.n_options
            query = (sa.select(votes.c.choice, sa.func.count()).where(votes.c.code == code, votes.c.round == row.round)
                     .group_by(votes.c.choice))
            for choice, n in conn.execute(query):
                counts[choice] = n
        return _room(row), counts

    def my_vote(self, code: str, seat: str, round_: int) -> int | None:
        """The choice `seat` made in round `round_`, if any (a reloaded phone shows its answer)."""
        key = _hash(f"{normalize_code(code)}:{seat}")[:32]
        with self.reader.begin() as conn:
            return conn.execute(sa.select(votes.c.choice).where(votes.c.code == normalize_code(code),
                                                                votes.c.round == round_, votes.c.voter == key)).scalar()

    def purge(self) -> int:
        """Delete rooms past their lifetime with everything they hold; returns how many."""
        now = self.clock()
        with self.writer.begin() as conn:
            old = [r.code for r in conn.execute(sa.select(rooms.c.code).where(rooms.c.expires_at <= now))]
            for table in (votes, members, mints, seats, rooms):
                if old:
                    conn.execute(table.delete().where(table.c.code.in_(old)))
        return len(old)


def _with_seats():
    """SELECT the room's columns and its seats taken (an outer join: a room is never hidden by its seats)."""
    return sa.select(rooms, seats.c.taken).select_from(rooms.outerjoin(seats, seats.c.code == rooms.c.code))


def _room(row) -> Room:
    return Room(code=row.code, question=row.question, n_options=row.n_options, round=row.round,
                revealed=bool(row.revealed), closed=bool(row.closed), expires_at=row.expires_at,
                view=json.loads(row.view) if row.view else None, locked=bool(row.locked),
                seats=int(getattr(row, "taken", 0) or 0))


def _sqlite_connect(dbapi_conn, _record) -> None:
    dbapi_conn.isolation_level = None            # the driver's own BEGINs off: the "begin" event issues ours
    for pragma in ("journal_mode=WAL", "synchronous=FULL", "busy_timeout=10000", "foreign_keys=ON"):
        dbapi_conn.execute(f"PRAGMA {pragma}")
