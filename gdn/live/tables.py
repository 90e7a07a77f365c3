"""The live class store's tables, and the steps that bring an older store up to this schema.

A room's row holds its live question and round; its seats taken are a row of their own (counting a new
student never write-locks the room row); members are the seats (hashed), each with the network address
that took it (hashed: the teacher's seats-by-network view and the per-address cap count it), mints the seat
mint's token bucket per address (hashed; `barred` once the teacher dropped that address's seats), clients
the rate of room creation and wrong room codes per client (hashed), keys the store's own hash key when the
operator set none (PostgreSQL; on SQLite it is a file beside the database), rounds every round a room asked
(question, revealed), votes one row per (room, round, seat).
"""
from __future__ import annotations

import sqlalchemy as sa

SCHEMA_VERSION = 4           # 2: rooms.locked, gdn_mints; 3: keyed hashes, seats per address, client limits;
                             # 4: gdn_rounds
CODE_LENGTH = 6
HASH_LENGTH = 32             # hex digits kept of a keyed hash (128 bits)
DEFAULT_ADDRESS_SEATS = 40   # a room's per-address seat cap before the teacher or the operator changes it

metadata = sa.MetaData()
schema_info = sa.Table("gdn_schema", metadata, sa.Column("version", sa.Integer, nullable=False))
rooms = sa.Table(
    "gdn_rooms", metadata,
    sa.Column("code", sa.String(CODE_LENGTH), primary_key=True),
    sa.Column("teacher_hash", sa.String(64), nullable=False),
    sa.Column("created_at", sa.Float, nullable=False),
    sa.Column("expires_at", sa.Float, nullable=False),
    sa.Column("question", sa.String(40)),                 # the live question's id (gdn.lessons.classroom), or none
    sa.Column("n_options", sa.Integer, nullable=False, default=0),
    sa.Column("round", sa.Integer, nullable=False, default=0),
    sa.Column("revealed", sa.Boolean, nullable=False, default=False),
    sa.Column("closed", sa.Boolean, nullable=False, default=False),
    sa.Column("view", sa.Text),                           # follow-me: the teacher's view as JSON, or none
    sa.Column("locked", sa.Boolean, nullable=False, default=False),   # no new seats
    sa.Column("address_seats", sa.Integer, nullable=False, default=DEFAULT_ADDRESS_SEATS),  # seats one address may hold
)
# Seats taken, its own row so that counting a new student never write-locks the room row.
seats = sa.Table(
    "gdn_seats", metadata,
    sa.Column("code", sa.String(CODE_LENGTH), primary_key=True),
    sa.Column("taken", sa.Integer, nullable=False, default=0),
    sa.Column("joined_at", sa.Float),                     # the last seat's time: the lock hint waits for a quiet minute
)
members = sa.Table(
    "gdn_members", metadata,
    sa.Column("code", sa.String(CODE_LENGTH), primary_key=True),
    sa.Column("voter", sa.String(HASH_LENGTH), primary_key=True),   # HMAC(key, code:seat), cut
    sa.Column("window_start", sa.Float, nullable=False),
    sa.Column("window_votes", sa.Integer, nullable=False),
    sa.Column("address", sa.String(HASH_LENGTH), nullable=False, default=""),  # HMAC(key, code:address), cut
)
# The per-address cap and the teacher's groups count a room's seats by address.
members_by_address = sa.Index("gdn_members_address", members.c.code, members.c.address)
# The seat mint's token bucket per (room, address): `tokens` seats left at time `at`.
mints = sa.Table(
    "gdn_mints", metadata,
    sa.Column("code", sa.String(CODE_LENGTH), primary_key=True),
    sa.Column("address", sa.String(HASH_LENGTH), primary_key=True),  # HMAC(key, code:address), cut
    sa.Column("tokens", sa.Float, nullable=False),
    sa.Column("at", sa.Float, nullable=False),
    sa.Column("barred", sa.Boolean, nullable=False, default=False),  # the teacher dropped its seats: no new ones
)
# What one client did in a window (rooms opened in the hour, wrong codes in the minute), per kind of act.
clients = sa.Table(
    "gdn_clients", metadata,
    sa.Column("kind", sa.String(8), primary_key=True),
    sa.Column("address", sa.String(HASH_LENGTH), primary_key=True),  # HMAC(key, kind:address), cut
    sa.Column("window_start", sa.Float, nullable=False),
    sa.Column("count", sa.Integer, nullable=False),
)
# The store's hash key on PostgreSQL when GDN_CLASS_KEY is not set: one row every replica reads.
keys = sa.Table(
    "gdn_keys", metadata,
    sa.Column("name", sa.String(16), primary_key=True),
    sa.Column("value", sa.String(128), nullable=False),
)
# Every round a room asked: its question and whether its answer was shown, so the teacher can go back to it
# as it was (its votes stay in gdn_votes under its number) and forward again.
rounds = sa.Table(
    "gdn_rounds", metadata,
    sa.Column("code", sa.String(CODE_LENGTH), primary_key=True),
    sa.Column("round", sa.Integer, primary_key=True),
    sa.Column("question", sa.String(40)),
    sa.Column("n_options", sa.Integer, nullable=False, default=0),
    sa.Column("revealed", sa.Boolean, nullable=False, default=False),
)
votes = sa.Table(
    "gdn_votes", metadata,
    sa.Column("code", sa.String(CODE_LENGTH), primary_key=True),
    sa.Column("round", sa.Integer, primary_key=True),
    sa.Column("voter", sa.String(HASH_LENGTH), primary_key=True),
    sa.Column("choice", sa.Integer, nullable=False),
    sa.Column("at", sa.Float, nullable=False),
)
# Columns each version added to a table that already existed, as ALTER TABLE writes them.
ADDED = {
    2: [("gdn_rooms", "locked", "BOOLEAN NOT NULL DEFAULT FALSE")],
    3: [("gdn_rooms", "address_seats", f"INTEGER NOT NULL DEFAULT {DEFAULT_ADDRESS_SEATS}"),
        ("gdn_seats", "joined_at", "FLOAT"),
        ("gdn_members", "address", f"VARCHAR({HASH_LENGTH}) NOT NULL DEFAULT ''"),
        ("gdn_mints", "barred", "BOOLEAN NOT NULL DEFAULT FALSE")],
    4: [],                   # a new table only (create_all makes it): a room's rounds before it are not kept
}


def migrate(conn) -> None:
    """Create the tables on first use and record the schema version; bring an older schema up one version
    at a time; refuse a newer one (an older app on a store a newer one wrote).

    3: seats and addresses are hashed with the store's key from now on. Seats hashed the old way can no
    longer be found, so they are let go (and the mint buckets with them): every phone takes a new seat at
    its next tap. Each room keeps its question and its votes, and starts a new round of that question, so
    a phone answering again with its new seat is not counted twice beside its old vote."""
    metadata.create_all(conn)
    found = conn.execute(sa.select(schema_info.c.version)).scalar()
    if found is None:
        conn.execute(schema_info.insert().values(version=SCHEMA_VERSION))
        return
    if found > SCHEMA_VERSION:
        raise RuntimeError(f"the class store has schema version {found}; this app knows up to "
                           f"{SCHEMA_VERSION}: update the app")
    for version in range(found + 1, SCHEMA_VERSION + 1):
        for table, column, kind in ADDED.get(version, []):
            _add_column(conn, table, column, kind)
        if version == 3:
            _let_unkeyed_seats_go(conn)
        conn.execute(schema_info.update().values(version=version))
    members_by_address.create(conn, checkfirst=True)       # create_all makes no index on a table it found


def _let_unkeyed_seats_go(conn) -> None:
    """Schema 3's step (see migrate): the seats and buckets of the old hashes go, every room a new round."""
    for table in (members, mints):
        conn.execute(table.delete())
    conn.execute(seats.update().values(taken=0, joined_at=None))
    conn.execute(rooms.update().values(round=rooms.c.round + 1, revealed=False))


def _add_column(conn, table: str, column: str, kind: str) -> None:
    """ALTER TABLE ... ADD COLUMN, unless the column is there (a store half-migrated by a replica that died)."""
    if column not in {c["name"] for c in sa.inspect(conn).get_columns(table)}:
        conn.execute(sa.text(f"ALTER TABLE {table} ADD COLUMN {column} {kind}"))
