"""SQLite's change watcher: only another process's commits wake its listeners.

The watcher reads the WAL index's change counter; this process's own commits, noted as
they commit, reach listeners directly and never a second time through the watcher.
"""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

from pawflow import open_store
from pawflow.store.engine.database import TOUCHED
from pawflow.testing import eventually, temporary_store


def test_own_commits_do_not_wake_the_watcher_and_others_do(tmp_path: Path) -> None:
    path = tmp_path / "watched.db"
    store = open_store(f"sqlite:///{path}")
    heard: list[str] = []
    watching = threading.get_ident()

    def on_notice(notice: str) -> None:
        if threading.get_ident() != watching:  # the watcher's thread, not a local commit
            heard.append(notice)

    stop = store.db.listen(on_notice)
    try:
        eventually(lambda: heard == ["changed"])  # its first look, at the baseline
        heard.clear()
        conversation = store.create_conversation("alice", "Watched").id
        for n in range(20):
            store.post_message(conversation, f"note {n}", user="alice")
        # Another process's commit, on a connection of its own: the watcher hears it, and
        # nothing of this process's 21 commits before it.
        other = sqlite3.connect(path, isolation_level=None)
        try:
            other.execute("CREATE TABLE elsewhere (x)")
            other.execute("INSERT INTO elsewhere VALUES (1)")
        finally:
            other.close()
        eventually(lambda: "changed" in heard)
        assert set(heard) == {"changed"} and TOUCHED not in heard
        assert len(heard) <= 2  # one per commit of the other's, at most
    finally:
        stop()
        store.close()


def test_closing_the_store_stops_the_listeners_left_running(backend: str, tmp_path: Path) -> None:
    """A listener whose caller never stopped it ends with its store: it would otherwise try
    to reach a database that is gone for as long as the process lives."""
    names = {"pawflow-sqlite-watch", "pawflow-pg-listen"}
    before = {t for t in threading.enumerate() if t.name in names}
    with temporary_store(backend, tmp_path) as store:
        store.db.listen(lambda notice: None)
        started = {t for t in threading.enumerate() if t.name in names} - before
        assert len(started) == 1
    (listener,) = started
    assert not listener.is_alive()
