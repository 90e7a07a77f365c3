"""A live class's shared state: rooms, the live question, the students' votes (store.py). No UI here:
the classroom page draws it, every replica of the app reads and writes the same store."""
