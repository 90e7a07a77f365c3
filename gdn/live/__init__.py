"""A live class's shared state: rooms, the live question, the students' seats and votes (store.py; its
tables and schema migrations: tables.py). No UI here: the classroom page draws it, every replica of the
app reads and writes the same store."""
