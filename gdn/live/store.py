"""One store for every replica: rooms, the live question and the students' votes, in SQLite or PostgreSQL.

    store = Store.from_env()                          # GDN_CLASS_DB: a file path (SQLite) or postgresql://...
    code, secret = store.create_room()                # the teacher keeps `secret`; students get `code`
    store.ask(code, secret, "alpha_zero", n_options=4)
    seat = store.join(code, address="203.0.113.7")   # a phone's seat, minted by the server (rate and cap per address)
    store.vote(code, seat, round_=1, choice=2)        # returns once the vote is committed
    room, counts = store.snapshot(code)               # counts[i]: votes for option i in this round

A room's question is asked in rounds: asking a question, the next one or a reset starts a new round, and
only the votes of the current round count. A student's vote is one row per (room, round, voter), so a
changed answer replaces the old one and is counted once.

A vote needs a seat, and only the server makes seats (join): a random token the phone keeps. Seats are
minted at a limited rate per network address (a token bucket of MINT_BURST, refilled MINT_PER_S a second)
and up to a cap per address in one room (ADDRESS_SEATS unless the teacher or GDN_CLASS_MINT says
otherwise), so one device, however many ids it invents, holds at most that many seats, and the class
behind another address still gets in. The teacher sees the seats grouped by address (counts only), drops
one group with its votes (and bars that address from the room) or all seats at once, locks the room and
frees the seats that never answered. A client opens at most ROOMS_PER_HOUR rooms an hour and tries at most
CODE_TRIES wrong codes a minute (the server's own machine is not limited: it is the operator's).

Nothing personal is kept: seats and addresses are stored only as HMAC-SHA256 under the store's key
(GDN_CLASS_KEY, else one made once and kept beside the SQLite file or in gdn_keys on PostgreSQL), so the
public room code is no help in reversing them; the teacher's secret, a random token, as its SHA-256.

SQLite (the default, one host): WAL so that readers never wait for the writer, every write transaction
takes the write lock up front (BEGIN IMMEDIATE: two replicas never deadlock upgrading a read lock), and
synchronous=FULL so a committed vote survives a crash of the machine, not only of the process.
PostgreSQL (several hosts): the room row is share-locked by votes and write-locked by the teacher's
actions, so a reveal waits for the votes in flight and no vote lands after it.
"""
from __future__ import annotations

import hashlib
import hmac
import ipaddress
import json
import logging
import math
import os
import re
import secrets
import time
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from functools import wraps
from pathlib import Path
from typing import NamedTuple

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite

from gdn.live.tables import (  # noqa: F401  (metadata, schema_info, SCHEMA_VERSION: read here by the tests too)
    CODE_LENGTH,
    DEFAULT_ADDRESS_SEATS,
    HASH_LENGTH,
    SCHEMA_VERSION,
    clients,
    keys,
    members,
    metadata,
    migrate,
    mints,
    rooms,
    rounds,
    schema_info,
    seats,
    votes,
)

ROOM_LIFETIME_S = 12 * 3600
MAX_STUDENTS = 500
VOTE_WINDOW_S = 10.0            # rate limit: at most VOTES_PER_WINDOW votes per browser per window
VOTES_PER_WINDOW = 10
MINT_BURST = 20                 # seats one address may take at once (a class arriving together) ...
MINT_PER_S = 4.0                # ... then this many a second: the default cap's 40 are seated within 5 s ...
ADDRESS_SEATS = DEFAULT_ADDRESS_SEATS   # ... and no more than 40 from one address (the teacher raises it)
ROOMS_PER_HOUR = 6              # rooms one client may open in an hour (a teacher reopening one opens none)
ROOMS_WINDOW_S = 3600.0
CODE_TRIES = 30                 # wrong room codes one client (one network: a class behind a NAT) may try in a
                                # minute, then it waits the minute out; 31^6 codes stay out of a guesser's reach
CODE_TRIES_WINDOW_S = 60.0
MIN_KEY_LENGTH = 16             # a shorter GDN_CLASS_KEY is used, with a warning: it may be guessed
CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"     # no 0/O, 1/I/L: read off a projector
VOTER_ID = re.compile(r"[A-Za-z0-9_-]{8,64}")


class LiveError(Exception):
    """A refused request; `reason` names its message (i18n key live.err_<reason>), `details` the numbers
    the message states (a limit, seconds to wait)."""
    reason = "unknown"

    def __init__(self, code: str = "", **details):
        super().__init__(code)
        self.details = details


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


class AddressFull(LiveError):
    reason = "address_full"     # this address holds the room's cap of seats (details: limit)


class Barred(LiveError):
    reason = "barred"           # the teacher dropped this address's seats: it takes no new ones


class TooManyRooms(LiveError):
    reason = "rooms"            # this client opened ROOMS_PER_HOUR rooms in the last hour (details: limit)


class TooManyTries(LiveError):
    reason = "tries"            # this client tried CODE_TRIES wrong codes in a minute (details: wait, seconds)


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
    address_seats: int = DEFAULT_ADDRESS_SEATS   # seats one address may hold here
    last_join: float | None = None               # when the last seat was taken (room() and snapshot())


@dataclass(frozen=True)
class SeatGroup:
    """The seats one network address holds in a room: `key` names the group (the address's keyed hash,
    which reveals no address), `answered` how many of them voted in this room."""
    key: str
    seats: int
    answered: int


@dataclass(frozen=True)
class Seating:
    """A room's seats by address, the largest group first, and how many addresses the teacher barred."""
    groups: tuple[SeatGroup, ...]
    barred: int


class Mint(NamedTuple):
    burst: float                # seats one address takes at once
    per_s: float                # then per second
    per_address: int            # at most this many in one room (a new room's default; the teacher changes it)


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


def mint_rate(text: str) -> Mint | None:
    """GDN_CLASS_MINT: "" (the defaults) or "BURST,PER_S[,PER_ADDRESS]", e.g. "120,6" or "40,4,200";
    anything else is a ValueError that says what to write. Without PER_ADDRESS a room lets one address
    hold the larger of ADDRESS_SEATS and BURST (an operator who raised the burst meant that many)."""
    if not text.strip():
        return None
    try:
        numbers = [float(x) for x in text.split(",")]
    except ValueError:
        numbers = []
    if len(numbers) == 2:                 # an older two-number setting ("600,10"): a room holds MAX_STUDENTS
        numbers.append(min(max(ADDRESS_SEATS, numbers[0]), MAX_STUDENTS))
    if not (len(numbers) == 3 and numbers[0] >= 1 and numbers[1] > 0 and 1 <= numbers[2] <= MAX_STUDENTS):
        raise ValueError(f"GDN_CLASS_MINT={text!r}: write BURST,PER_S[,PER_ADDRESS], e.g. 20,4,40 (seats one "
                         f"address takes at once, then per second, and at most in one room: 1 to {MAX_STUDENTS})")
    return as_mint(tuple(numbers))


def as_mint(mint: tuple | None) -> Mint:
    """(burst, per_s[, per_address]) or None (the defaults) -> Mint, per_address as in mint_rate."""
    if mint is None:
        return Mint(MINT_BURST, MINT_PER_S, ADDRESS_SEATS)
    burst, per_s, *rest = mint
    per_address = int(rest[0]) if rest else max(ADDRESS_SEATS, int(burst))
    return Mint(float(burst), float(per_s), min(per_address, MAX_STUDENTS))


def _hash(text: str) -> str:
    """The teacher's secret as stored: a random 144-bit token cannot be found from its SHA-256, so no key
    is needed (and the rooms of an older store keep their teacher)."""
    return hashlib.sha256(text.encode()).hexdigest()


def key_file(database: Path) -> bytes:
    """The hash key kept beside a SQLite store (class.db.key, mode 0600), made by the first replica that
    needs it: written whole to a file of its own, then linked into place, so a replica never reads half a
    key and never replaces one another replica made first."""
    path = database.with_name(database.name + ".key")
    if not path.exists():
        draft = path.with_name(f"{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
        with os.fdopen(os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w") as out:
            out.write(secrets.token_hex(32))
            out.flush()
            os.fsync(out.fileno())
        try:
            os.link(draft, path)
        except FileExistsError:
            pass
        except OSError:                       # a file system without hard links: the draft renamed, unless one is there
            if not path.exists():
                os.replace(draft, path)
        finally:
            draft.unlink(missing_ok=True)
    if path.stat().st_mode & 0o077:
        logging.getLogger(__name__).warning("%s can be read by other users: chmod 600 it", path)
    key = path.read_text(encoding="utf-8").strip()
    if not key:
        # an OSError: the pages say a store's file problem in words, never as a traceback
        raise OSError(f"{path} is empty: delete it (a new key is made; seats then join again) or set GDN_CLASS_KEY")
    return key.encode()


def is_local(address: str | None) -> bool:
    """This machine itself (None: a loopback peer no proxy forwarded): the operator, never rate-limited
    for rooms or codes."""
    if address is None:
        return True
    try:
        return ipaddress.ip_address(str(address)).is_loopback
    except ValueError:
        return False


def normalize_code(code: str) -> str:
    """What a student typed ("abc 234", or full-width "ＡＢＣ２３４" from a Chinese keyboard) -> the stored
    form ("ABC234"); NoRoom when it cannot be one."""
    code = unicodedata.normalize("NFKC", str(code or ""))
    code = re.sub(r"[\s-]", "", code).upper()
    if len(code) != CODE_LENGTH or any(c not in CODE_ALPHABET for c in code):
        raise NoRoom(code)
    return code


class Store:
    def __init__(self, location: str, clock: Callable[[], float] = time.time, mint: tuple | None = None,
                 key: str | None = None):
        """mint: (burst, seats per second[, seats per address]) (as_mint); default (MINT_BURST, MINT_PER_S,
        ADDRESS_SEATS). key: the hash key of seats and addresses; default GDN_CLASS_KEY, else the store's
        own (made once, shared by every replica of this store: the file beside SQLite, gdn_keys on PostgreSQL)."""
        self.mint = mint
        self.rate = as_mint(mint)
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
        self.key = self._load_key(os.environ.get("GDN_CLASS_KEY", "") if key is None else key)

    @classmethod
    def from_env(cls) -> Store:
        """The store at GDN_CLASS_DB; GDN_CLASS_MINT="BURST,PER_S[,PER_ADDRESS]" sets the seat mint (a
        larger class behind one address, or a test); GDN_CLASS_KEY the hash key. A malformed rate is logged
        with what to write and the defaults hold: the class goes on (a ValueError here reached every phone
        as a traceback)."""
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

    def _load_key(self, given: str) -> bytes:
        """The hash key: `given` (GDN_CLASS_KEY) when set, else the store's own (key_file beside SQLite, a
        row of gdn_keys on PostgreSQL, made by the first replica under the migration's lock)."""
        if given.strip():
            if len(given.strip()) < MIN_KEY_LENGTH:
                logging.getLogger(__name__).warning("GDN_CLASS_KEY is shorter than %d characters: it may be "
                                                    "guessed, and the addresses' hashes with it", MIN_KEY_LENGTH)
            return given.strip().encode()
        if self.is_sqlite:
            return key_file(Path(self.url.removeprefix("sqlite:///")))
        with self.writer.begin() as conn:
            conn.execute(sa.text("SELECT pg_advisory_xact_lock(72817)"))
            value = conn.execute(sa.select(keys.c.value).where(keys.c.name == "hash")).scalar()
            if value is None:
                value = secrets.token_hex(32)
                conn.execute(keys.insert().values(name="hash", value=value))
        return value.encode()

    def _keyed(self, *parts) -> str:
        """HMAC-SHA256 of the parts under the store's key, cut: what is stored of a seat or an address."""
        return hmac.new(self.key, ":".join(map(str, parts)).encode(), hashlib.sha256).hexdigest()[:HASH_LENGTH]

    def seat_hash(self, code: str, seat: str) -> str:
        return self._keyed("seat", code, seat)

    def address_hash(self, code: str, address: str | None) -> str:
        """An address's name in one room (per room: its groups in two rooms cannot be matched up)."""
        return self._keyed("address", code, address or "?")

    # --- the teacher ------------------------------------------------------------------------------
    def create_room(self, address: str | None = None) -> tuple[str, str]:
        """A new room: (code, teacher secret), for the client at `address` (client_address()); TooManyRooms
        once it opened ROOMS_PER_HOUR in the last hour. Expired rooms are purged first."""
        self.purge()
        secret = secrets.token_urlsafe(24)
        now = self.clock()
        for _ in range(20):
            code = "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))
            with self.writer.begin() as conn:
                taken = conn.execute(sa.select(rooms.c.code).where(rooms.c.code == code)).first()
                if taken:
                    continue
                self._count_client(conn, "room", address, ROOMS_WINDOW_S, ROOMS_PER_HOUR, TooManyRooms)
                conn.execute(rooms.insert().values(code=code, teacher_hash=_hash(secret), created_at=now,
                                                   expires_at=now + ROOM_LIFETIME_S, n_options=0, round=0,
                                                   revealed=False, closed=False, locked=False,
                                                   address_seats=self.rate.per_address))
                conn.execute(seats.insert().values(code=code, taken=0))
            return code, secret
        raise RuntimeError("no free room code after 20 tries")

    # --- the limits per client (rooms opened, wrong codes) -------------------------------------------
    def _client_used(self, conn, kind: str, who: str, window: float, lock: bool = False) -> tuple[int, float]:
        """(acts of `kind` by client `who` in its current window, seconds left of that window); lock: the
        row write-locked, for a caller that counts one more."""
        query = sa.select(clients).where(clients.c.kind == kind, clients.c.address == who)
        row = conn.execute(query.with_for_update() if lock else query).first()
        left = 0.0 if row is None else row.window_start + window - self.clock()
        return (row.count if left > 0 else 0), max(left, 0.0)

    def _count_client(self, conn, kind: str, address: str | None, window: float, limit: int,
                      refusal: type[LiveError]) -> None:
        """One more act of `kind` by the client at `address`, in the caller's transaction; `refusal` (with
        the limit and the seconds to wait) when it already did `limit` in the window. This machine itself
        is not counted (is_local)."""
        if is_local(address):
            return
        who, now = self._keyed("client", kind, address), self.clock()
        used, left = self._client_used(conn, kind, who, window, lock=True)
        if used >= limit:
            raise refusal(limit=limit, **_waiting(left))
        values = {"window_start": now, "count": 1} if used == 0 else {"count": used + 1}
        upsert = self._insert(clients).values(kind=kind, address=who, window_start=now, count=1)
        conn.execute(upsert.on_conflict_do_update(index_elements=["kind", "address"], set_=values))

    @retried
    def find_room(self, code: str, address: str | None) -> Room:
        """The room a phone at `address` asks for by its code (the join link's, or typed). A well-formed
        code of no open room counts as a wrong try; after CODE_TRIES in a minute the client waits the minute
        out (TooManyTries), right code or not: guessing codes is too slow to find a class. A malformed code
        is NoRoom, uncounted (it names no room and costs the store nothing)."""
        code = normalize_code(code)
        if not is_local(address):
            with self.reader.begin() as conn:
                used, left = self._client_used(conn, "code", self._keyed("client", "code", address),
                                               CODE_TRIES_WINDOW_S)
            if used >= CODE_TRIES:
                raise TooManyTries(code, limit=CODE_TRIES, **_waiting(left))
        try:
            return self.room(code)
        except NoRoom:
            with self.writer.begin() as conn:
                # a room that was (closed, or past its lifetime and not yet purged) is no guess: a class's
                # phones reloading the last lesson's link must not lock their network out of the next
                was = conn.execute(sa.select(rooms.c.code).where(rooms.c.code == code)).first()
                if was is None:
                    self._count_client(conn, "code", address, CODE_TRIES_WINDOW_S, CODE_TRIES, TooManyTries)
            raise NoRoom(code) from None                  # the code the phone asked for, said back

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
                values["round"] = self._next_round(conn, code, row)
                conn.execute(rounds.insert().values(code=code, round=values["round"], revealed=False,
                                                    question=values.get("question", row.question),
                                                    n_options=values.get("n_options", row.n_options)))
            elif "revealed" in values:                     # the round's history says so too (going back shows it)
                conn.execute(rounds.update().where(rounds.c.code == code, rounds.c.round == row.round)
                             .values(revealed=values["revealed"]))
            conn.execute(rooms.update().where(rooms.c.code == code).values(**values))
            row = conn.execute(sa.select(rooms).where(rooms.c.code == code)).first()
        return _room(row)

    @staticmethod
    def _next_round(conn, code: str, row) -> int:
        """A new round's number: past every round the room asked, also when the teacher went back to an older
        one (its votes keep their round's number)."""
        asked = conn.execute(sa.select(sa.func.max(rounds.c.round)).where(rounds.c.code == code)).scalar()
        return max(row.round, asked or 0) + 1

    @retried
    def revisit(self, code: str, secret: str, direction: int, *, after_round: int | None = None) -> Room | None:
        """Go back (direction -1) to the round asked before the one shown, or forward (+1) to the one asked
        after it, as it was: its question, its votes (still stored under its number) and whether its answer
        was shown; no new round. None when there is none that way (forward from the latest: ask the next
        question instead). after_round: as in ask, a stale press moves nothing."""
        code = normalize_code(code)
        with self.writer.begin() as conn:
            row = self._teacher_row(conn, code, secret)
            if after_round is not None and row.round != after_round:
                return _room(row)
            there = rounds.c.round < row.round if direction < 0 else rounds.c.round > row.round
            order = rounds.c.round.desc() if direction < 0 else rounds.c.round.asc()
            past = conn.execute(sa.select(rounds).where(rounds.c.code == code, there).order_by(order).limit(1)).first()
            if past is None:
                return None
            conn.execute(rooms.update().where(rooms.c.code == code).values(
                round=past.round, question=past.question, n_options=past.n_options, revealed=past.revealed))
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

    def set_address_seats(self, code: str, secret: str, limit: int) -> Room:
        """The most seats one address may hold in this room, 1 to MAX_STUDENTS (a class behind one school
        NAT needs its size here). Seats already taken past a lowered limit stay."""
        if not (isinstance(limit, int) and 1 <= limit <= MAX_STUDENTS):
            raise ValueError(f"seats per address: 1 to {MAX_STUDENTS}, got {limit!r}")
        return self._teacher_update(code, secret, address_seats=limit)

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

    @retried
    def drop_group(self, code: str, secret: str, group: str) -> int:
        """Drop every seat of one address group (SeatGroup.key) and their votes in every round, and bar
        that address from new seats here (a script that keeps joining gets nothing back); returns how many
        seats. reset_seats lifts the bar."""
        code = normalize_code(code)
        theirs = members.c.code == code, members.c.address == group
        with self.writer.begin() as conn:
            self._teacher_row(conn, code, secret)
            conn.execute(votes.delete().where(votes.c.code == code,
                                              votes.c.voter.in_(sa.select(members.c.voter).where(*theirs))))
            dropped = conn.execute(members.delete().where(*theirs)).rowcount
            if not dropped:                               # a stale group (dropped already, reset since): no bar
                return 0
            conn.execute(seats.update().where(seats.c.code == code).values(taken=seats.c.taken - dropped))
            bar = self._insert(mints).values(code=code, address=group, tokens=0.0, at=self.clock(), barred=True)
            conn.execute(bar.on_conflict_do_update(index_elements=["code", "address"], set_={"barred": True}))
        return dropped

    @retried
    def reset_seats(self, code: str, secret: str) -> int:
        """Free every seat of the room with all its votes, lift every bar, and start the round again (the
        phones redraw the question; a tap takes a new seat); returns how many seats were freed."""
        code = normalize_code(code)
        with self.writer.begin() as conn:
            row = self._teacher_row(conn, code, secret)
            freed = conn.execute(members.delete().where(members.c.code == code)).rowcount
            for table in (votes, mints):
                conn.execute(table.delete().where(table.c.code == code))
            conn.execute(seats.update().where(seats.c.code == code).values(taken=0, joined_at=None))
            fresh = self._next_round(conn, code, row)
            conn.execute(rounds.insert().values(code=code, round=fresh, question=row.question, n_options=row.n_options,
                                                revealed=False))
            conn.execute(rooms.update().where(rooms.c.code == code).values(round=fresh, revealed=False))
        return freed

    def seating(self, code: str, secret: str) -> Seating:
        """The room's seats grouped by the address that took them, for its teacher: counts and keyed
        hashes, never an address."""
        code = normalize_code(code)
        with self.reader.begin() as conn:
            row = conn.execute(sa.select(rooms).where(rooms.c.code == code)).first()
            self._check_open(row)
            if not hmac.compare_digest(row.teacher_hash, _hash(secret or "")):
                raise NotTeacher(code)
            seated = dict(conn.execute(sa.select(members.c.address, sa.func.count()).where(members.c.code == code)
                                       .group_by(members.c.address)).all())
            voted = members.join(votes, sa.and_(votes.c.code == members.c.code, votes.c.voter == members.c.voter))
            answered = dict(conn.execute(
                sa.select(members.c.address, sa.func.count(sa.distinct(members.c.voter))).select_from(voted)
                .where(members.c.code == code).group_by(members.c.address)).all())
            barred = conn.execute(sa.select(sa.func.count()).select_from(mints)
                                  .where(mints.c.code == code, mints.c.barred.is_(True))).scalar()
        groups = sorted((SeatGroup(key, n, answered.get(key, 0)) for key, n in seated.items()),
                        key=lambda g: (-g.seats, g.key))
        return Seating(tuple(groups), int(barred or 0))

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
        (MAX_STUDENTS seats taken), Barred (the teacher dropped this address's seats), AddressFull (this
        address holds the room's address_seats) or TooManySeats (this address past its mint rate)."""
        code = normalize_code(code)
        where = self.address_hash(code, address)
        seat = secrets.token_urlsafe(18)
        now = self.clock()
        with self.writer.begin() as conn:
            row = conn.execute(sa.select(rooms).where(rooms.c.code == code).with_for_update(read=True)).first()
            self._check_open(row)
            if row.locked:
                raise Locked(code)
            # The bucket's row lock queues this address's joins, so two never both take the last seat under
            # its cap or the last token of its burst. A first join makes the (full) bucket before locking it:
            # on PostgreSQL concurrent first joins found no row to lock and all got in, past any cap.
            fresh = self._insert(mints).values(code=code, address=where, tokens=float(self.rate.burst), at=now,
                                               barred=False)
            conn.execute(fresh.on_conflict_do_nothing(index_elements=["code", "address"]))
            bucket = conn.execute(sa.select(mints).where(mints.c.code == code, mints.c.address == where)
                                  .with_for_update()).first()
            if bucket.barred:
                raise Barred(code)
            held = conn.execute(sa.select(sa.func.count()).select_from(members)
                                .where(members.c.code == code, members.c.address == where)).scalar()
            if held >= row.address_seats:
                raise AddressFull(code, limit=row.address_seats)
            burst, per_s = self.rate.burst, self.rate.per_s
            tokens = min(burst, bucket.tokens + (now - bucket.at) * per_s)
            if tokens < 1:
                raise TooManySeats(code)
            took = conn.execute(seats.update().where(seats.c.code == code, seats.c.taken < MAX_STUDENTS)
                                .values(taken=seats.c.taken + 1, joined_at=now))
            if took.rowcount != 1:
                raise RoomFull(code)
            conn.execute(mints.update().where(mints.c.code == code, mints.c.address == where)
                         .values(tokens=tokens - 1, at=now))
            conn.execute(members.insert().values(code=code, voter=self.seat_hash(code, seat), window_start=now,
                                                 window_votes=0, address=where))
        return seat

    def has_seat(self, code: str, seat: str) -> bool:
        """Whether `seat` is a seat of this room (a phone's kept token, checked before it is used)."""
        if not isinstance(seat, str) or not VOTER_ID.fullmatch(seat):
            return False
        code = normalize_code(code)
        with self.reader.begin() as conn:
            return conn.execute(sa.select(members.c.voter).where(
                members.c.code == code, members.c.voter == self.seat_hash(code, seat))).first() is not None

    @retried
    def vote(self, code: str, seat: str, round_: int, choice: int) -> None:
        """Store the answer of `seat` (from join) to round `round_`; returns only after the commit. A
        second vote in the same round replaces the first. Raises NoRoom, NotOpen (the round is over or
        revealed), BadVote, NoSeat (not a seat of this room) or TooFast (past the seat's vote rate)."""
        code = normalize_code(code)
        if not isinstance(seat, str) or not VOTER_ID.fullmatch(seat):
            raise BadVote("seat")
        key = self.seat_hash(code, seat)
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
        code = normalize_code(code)
        key = self.seat_hash(code, seat) if isinstance(seat, str) else ""
        with self.reader.begin() as conn:
            return conn.execute(sa.select(votes.c.choice).where(votes.c.code == code,
                                                                votes.c.round == round_, votes.c.voter == key)).scalar()

    def purge(self) -> int:
        """Delete rooms past their lifetime with everything they hold, and the clients' counts past their
        longest window; returns how many rooms."""
        now = self.clock()
        with self.writer.begin() as conn:
            old = [r.code for r in conn.execute(sa.select(rooms.c.code).where(rooms.c.expires_at <= now))]
            for table in (votes, rounds, members, mints, seats, rooms):
                if old:
                    conn.execute(table.delete().where(table.c.code.in_(old)))
            conn.execute(clients.delete().where(clients.c.window_start <= now - ROOMS_WINDOW_S))
        return len(old)


def _waiting(seconds: float) -> dict:
    """A refusal's wait as its message states it: whole seconds, and whole minutes (rounded up)."""
    return {"wait": max(1, math.ceil(seconds)), "minutes": max(1, math.ceil(seconds / 60))}


def _with_seats():
    """SELECT the room's columns and its seats taken (an outer join: a room is never hidden by its seats)."""
    return sa.select(rooms, seats.c.taken, seats.c.joined_at).select_from(rooms.outerjoin(seats, seats.c.code == rooms.c.code))


def _room(row) -> Room:
    return Room(code=row.code, question=row.question, n_options=row.n_options, round=row.round,
                revealed=bool(row.revealed), closed=bool(row.closed), expires_at=row.expires_at,
                view=json.loads(row.view) if row.view else None, locked=bool(row.locked),
                seats=int(getattr(row, "taken", 0) or 0), address_seats=row.address_seats,
                last_join=getattr(row, "joined_at", None))


def _sqlite_connect(dbapi_conn, _record) -> None:
    dbapi_conn.isolation_level = None            # the driver's own BEGINs off: the "begin" event issues ours
    for pragma in ("journal_mode=WAL", "synchronous=FULL", "busy_timeout=10000", "foreign_keys=ON"):
        dbapi_conn.execute(f"PRAGMA {pragma}")
