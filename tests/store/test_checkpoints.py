"""SQLite's WAL is checkpointed between bursts of commits, never inside one."""

from __future__ import annotations

from typing import Any

from pawflow import Store
from pawflow.store import Question
from pawflow.testing import eventually


def test_commits_leave_the_checkpoint_to_the_checkpointer(sqlite_store: Store) -> None:
    db: Any = sqlite_store.db
    with sqlite_store.transaction(write=False):
        conn = db._connection()
        assert conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 0  # not in COMMIT
    before = db.checkpointed
    conversation = sqlite_store.create_conversation("alice", "Burst").id
    for n in range(20):
        sqlite_store.ask(Question("alice", conversation, "confirm", f"#{n}"))
    eventually(lambda: db.checkpointed > before, timeout=10)  # once the burst ended
    # Everything the burst wrote is in the database file: the log is checkpointed to its end.
    busy, logged, moved = conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
    assert busy == 0 and logged == moved


def test_a_closed_store_stops_its_checkpointer(sqlite_store: Store) -> None:
    db: Any = sqlite_store.db
    sqlite_store.create_conversation("alice", "One")
    eventually(lambda: db._checkpointer is not None)
    checkpointer = db._checkpointer
    sqlite_store.close()
    assert not checkpointer.is_alive()
