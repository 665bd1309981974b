"""The store through outages: a listener whose work fails, a PostgreSQL cluster of the test's
own restarted or stopped under an idle process, and a full disk under SQLite. Wake-ups from
other processes keep arriving through LISTEN/NOTIFY (PostgreSQL) or the ``data_version``
watcher (SQLite) with no sweeper to fall back on; calls fail at once with
``StoreUnavailable`` while the database is away, and work again once it is back."""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from pawflow import Delivery, FakeClock, Store, StoreUnavailable, open_store
from pawflow.store import Question
from pawflow.testing import eventually
from tests.disks import SmallDisk
from tests.pgcluster import PrivateCluster
from tests.store.test_concurrency import store_url

SIGNALLER = Path(__file__).with_name("signaller.py")


def fire(url: str, signal_id: str) -> None:
    """Fire ``signal_id`` from another process."""
    done = subprocess.run(
        [sys.executable, str(SIGNALLER), url, signal_id],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "1"


@pytest.fixture
def second(store: Store, tmp_path: Path, clock: FakeClock) -> Iterator[Store]:
    """Another store instance on the same database, as another process would have."""
    other = open_store(store_url(store, tmp_path), clock=clock, migrate=False)
    yield other
    other.close()


def test_a_listener_whose_work_fails_goes_on_and_looks_again(store: Store, second: Store) -> None:
    heard: list[str] = []
    failed = threading.Event()

    def listener(notice: str) -> None:
        if not failed.is_set():
            failed.set()
            raise StoreUnavailable("the database went away")  # as a read through the pool
        heard.append(notice)

    stop = store.db.listen(listener)
    try:
        eventually(failed.is_set)
        # Back after a pause, it looks for what it may have missed meanwhile...
        eventually(lambda: "changed" in heard)
        heard.clear()
        # ...and goes on hearing of other processes' commits.
        conversation = second.create_conversation("bob")
        second.ask(Question("bob", conversation.id, "confirm", "Heard?"))
        eventually(lambda: heard)
    finally:
        stop()


@pytest.mark.postgres
@pytest.mark.parametrize("mode", ["fast", "immediate"])
def test_a_wakeup_from_another_process_arrives_after_a_restart(
    private_postgres: PrivateCluster, mode: str
) -> None:
    url = private_postgres.create_database()
    with open_store(url) as store:
        got: list[str] = []

        def handle(delivery: Delivery) -> None:
            got.append(delivery.continuation.id)

        store.register_handler("here", handle)
        before = store.park("here:before", signal_id="before")
        after = store.park("here:after", signal_id="after")
        fire(url, "before")
        eventually(lambda: got == [before.id], timeout=30)

        private_postgres.restart(mode)  # while this process is idle
        fire(url, "after")
        # No sweeper runs in this process: only the listener can bring it.
        eventually(lambda: got == [before.id, after.id], timeout=30)


@pytest.mark.postgres
def test_a_stopped_database_fails_calls_at_once_until_it_is_back(
    private_postgres: PrivateCluster,
) -> None:
    url = private_postgres.create_database()
    # A call waits at most a second for a connection.
    with open_store(url, timeout=1) as store:
        store.ensure_user("alice")
        private_postgres.stop()
        with pytest.raises(StoreUnavailable):
            store.create_conversation("alice")
        # The store learns the server is away: what it knows is said without asking it,
        # and calls fail at once meanwhile.
        problem = eventually(store.problem, timeout=30)
        assert problem.startswith("cannot reach PostgreSQL")
        with pytest.raises(StoreUnavailable, match="the database is unreachable"):
            store.create_conversation("alice")

        private_postgres.start()
        eventually(lambda: store.problem() is None, timeout=30)
        assert store.create_conversation("alice", "after").title == "after"


def test_a_full_disk_makes_the_store_unavailable_until_there_is_room(
    small_disk_mounted: SmallDisk,
) -> None:
    disk = small_disk_mounted
    path = disk.path / "pawflow.db"
    with open_store(f"sqlite:///{path}") as store:
        store.ensure_user("alice")
        disk.fill()
        with pytest.raises(StoreUnavailable, match=f"disk full: {path}"):
            store.create_conversation("alice", "during")
        assert (store.problem() or "").startswith(f"disk full: {path}")
        assert store.list_conversations(user="alice") == []  # reads go on

        disk.make_room()
        assert store.create_conversation("alice", "after").title == "after"
        assert store.problem() is None
    # Opened on a full disk: the same words, not SQLite's "disk I/O error".
    disk.fill()
    with pytest.raises(StoreUnavailable, match=f"disk full: {path}"):
        open_store(f"sqlite:///{path}")
