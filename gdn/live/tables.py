"""The live class store's tables, and the steps that bring an older store up to this schema.

A room's row holds its live question and round; its seats taken are a row of their own (counting a new
student never write-locks the room row); members are the seats (hashed), mints the seat mint's token
bucket per address (hashed), votes one row per (room, round, seat).
"""
from __future__ import annotations

import sqlalchemy as sa

SCHEMA_VERSION = 2           # 2: rooms.locked, gdn_mints (seats minted by the server)
CODE_LENGTH = 6

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
)
# Seats taken, its own row so that counting a new student never write-locks the room row.
seats = sa.Table(
    "gdn_seats", metadata,
    sa.Column("code", sa.String(CODE_LENGTH), primary_key=True),
    sa.Column("taken", sa.Integer, nullable=False, default=0),
)
members = sa.Table(
    "gdn_members", metadata,
    sa.Column("code", sa.String(CODE_LENGTH), primary_key=True),
    sa.Column("voter", sa.String(32), primary_key=True),   # sha256(code:voter id), cut
    sa.Column("window_start", sa.Float, nullable=False),
    sa.Column("window_votes", sa.Integer, nullable=False),
)
# The seat mint's token bucket per (room, address): `tokens` seats left at time `at`.
mints = sa.Table(
    "gdn_mints", metadata,
    sa.Column("code", sa.String(CODE_LENGTH), primary_key=True),
    sa.Column("address", sa.String(32), primary_key=True),  # sha256(code:address), cut
    sa.Column("tokens", sa.Float, nullable=False),
    sa.Column("at", sa.Float, nullable=False),
)
votes = sa.Table(
    "gdn_votes", metadata,
    sa.Column("code", sa.String(CODE_LENGTH), primary_key=True),
    sa.Column("round", sa.Integer, primary_key=True),
    sa.Column("voter", sa.String(32), primary_key=True),
    sa.Column("choice", sa.Integer, nullable=False),
    sa.Column("at", sa.Float, nullable=False),
)


def migrate(conn) -> None:
    """Create the tables on first use and record the schema version; bring an older schema up one version
    at a time; refuse a newer one (an older app on a store a newer one wrote)."""
    metadata.create_all(conn)
    found = conn.execute(sa.select(schema_info.c.version)).scalar()
    if found is None:
        conn.execute(schema_info.insert().values(version=SCHEMA_VERSION))
    elif found > SCHEMA_VERSION:
        raise RuntimeError(f"the class store has schema version {found}; this app knows up to "
                           f"{SCHEMA_VERSION}: update the app")
    elif found < 2:                  # 1 -> 2: the lock (gdn_mints is new: create_all made it)
        conn.execute(sa.text("ALTER TABLE gdn_rooms ADD COLUMN locked BOOLEAN NOT NULL DEFAULT FALSE"))
        conn.execute(schema_info.update().values(version=2))
