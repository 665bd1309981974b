"""SQLite: writers of different processes take turns at the store's lock file.

Two stores opened on one file stand for two processes (a lock of ``flock`` belongs to its
open file, so two in one process exclude each other as two processes do). The second
writer waits at the lock file while the first holds its transaction open — not in SQLite's
busy handler, which sleeps in steps of up to 100 ms — and goes on once the first commits.
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from pawflow import open_store
from pawflow.errors import StoreError
from pawflow.store import Store
from pawflow.store.engine.database import sql
from pawflow.testing import eventually


def _waits(store: Store) -> int:
    return int(store.db._writers.waits)  # type: ignore[attr-defined]


def test_a_writer_of_another_process_waits_its_turn_at_the_lock_file(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'shared.db'}"
    first, second = open_store(url), open_store(url)
    try:
        holding, go = threading.Event(), threading.Event()
        order: list[str] = []

        def hold_open() -> None:
            with first.unit() as u:
                u.messages.notify_user("ann", "first")
                holding.set()
                go.wait(30)
                order.append("first")

        def write_after() -> None:
            with second.unit() as u:
                u.messages.notify_user("bob", "second")
                order.append("second")

        holder = threading.Thread(target=hold_open)
        holder.start()
        assert holding.wait(30)
        writer = threading.Thread(target=write_after)
        writer.start()
        eventually(lambda: _waits(second) == 1)  # at the lock file, before BEGIN
        assert order == []
        go.set()
        holder.join(30)
        writer.join(30)
        assert order == ["first", "second"]
        assert (tmp_path / "shared.db-writer").stat().st_mode & 0o777 == 0o600
        with second.unit() as u:  # its lock is free again: no wait the next time
            u.messages.notify_user("bob", "third")
        assert _waits(second) == 1
        assert _waits(first) == 0
    finally:
        first.close()
        second.close()


def test_a_writer_that_gave_up_waiting_leaves_the_lock_to_whoever_comes_next(
    tmp_path: Path,
) -> None:
    """A writer waits for the lock at most the busy timeout; the lock, freed later, is not
    kept by the waiting it left behind: the next writer of either process has it."""
    url = f"sqlite:///{tmp_path / 'shared.db'}"
    first, second = open_store(url), open_store(url)
    second.db.busy_timeout = 0.3  # type: ignore[attr-defined]
    try:
        holding, go, done = threading.Event(), threading.Event(), threading.Event()

        def hold_open() -> None:
            with first.unit() as u:
                u.messages.notify_user("ann", "first")
                holding.set()
                go.wait(30)
            done.set()

        holder = threading.Thread(target=hold_open)
        holder.start()
        assert holding.wait(30)
        with (
            pytest.raises(StoreError, match="another process's writer held it"),
            second.unit() as u,
        ):
            u.messages.notify_user("bob", "gave up")
        go.set()
        holder.join(30)
        assert done.is_set()
        with first.unit() as u:  # not kept by the second's wait
            u.messages.notify_user("ann", "again")
        with second.unit() as u:
            u.messages.notify_user("bob", "its turn")
        with first.unit() as u:
            u.messages.notify_user("ann", "and again")
    finally:
        first.close()
        second.close()


def test_a_store_in_memory_has_no_lock_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # where a lock file named after ":memory:" would go
    with open_store("sqlite:///:memory:") as store, store.unit() as u:
        u.messages.notify_user("ann", "kept in memory")
    assert list(tmp_path.iterdir()) == []


def test_without_a_lock_file_the_writers_still_write(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Where the lock file cannot be made (here a folder holds its name), SQLite's own lock
    alone keeps the writers apart, as before, and the store says so once."""
    (tmp_path / "shared.db-writer").mkdir()
    url = f"sqlite:///{tmp_path / 'shared.db'}"
    with open_store(url) as store:
        for n in range(3):
            with store.unit() as u:
                u.messages.notify_user("ann", f"note {n}")
        assert len(store.events_after("ann", 0, limit=10)) == 3
    warned = [r for r in caplog.records if "writers of other processes" in r.getMessage()]
    assert len(warned) == 1


def test_the_writers_of_one_process_take_turns_at_one_connection(tmp_path: Path) -> None:
    """Every write transaction of a process runs on one connection, whichever thread asks:
    its page cache stays warm from one write to the next (a connection per thread finds its
    cache stale after any other thread's commit). Reads keep a connection per thread."""
    with open_store(f"sqlite:///{tmp_path / 'one.db'}") as store:
        used: list[object] = []
        lock = threading.Lock()

        def write(n: int) -> None:
            with store.unit() as u:
                u.messages.notify_user("ann", f"note {n}")
                with lock:
                    used.append(store.db._writing())  # type: ignore[attr-defined]
            store.events_after("ann", 0, limit=1)  # a read, on this thread's own

        threads = [threading.Thread(target=write, args=(n,)) for n in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
        assert len(used) == 4
        assert len({id(conn) for conn in used}) == 1
        assert len(store.events_after("ann", 0, limit=10)) == 4
        # The writers' connection, and one per thread that read.
        assert len(store.db._connections) == 1 + 5  # type: ignore[attr-defined]


def test_a_transaction_used_after_its_commit_fails_rather_than_run_elsewhere(
    tmp_path: Path,
) -> None:
    """After COMMIT the writers' connection is the next writer's: a statement sent through
    a transaction that has ended must not run there (it would join that writer's
    transaction), so it fails."""
    with open_store(f"sqlite:///{tmp_path / 'ended.db'}") as store:
        with store.unit() as u:
            u.messages.notify_user("ann", "inside")
            ended = u.tx
        with pytest.raises(StoreError):
            sql(ended).execute("DELETE FROM events")
        assert len(store.events_after("ann", 0, limit=10)) == 1


def test_a_store_in_memory_reads_what_it_wrote(tmp_path: Path) -> None:
    """In memory every connection is a database of its own: writes and reads of a thread
    stay on one."""
    with open_store("sqlite:///:memory:") as store:
        with store.unit() as u:
            u.messages.notify_user("ann", "kept in memory")
        assert len(store.events_after("ann", 0, limit=10)) == 1
