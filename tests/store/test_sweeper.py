"""The sweeper thread, leases between several sweepers, and waking across store instances."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from pawflow import Delivery, FakeClock, Store, Sweeper, open_store
from pawflow.store import Question
from pawflow.store.engine.database import sql
from pawflow.testing import eventually
from tests.store.test_concurrency import store_url


@pytest.fixture
def second(store: Store, tmp_path: Path, clock: FakeClock) -> Iterator[Store]:
    """Another store instance on the same database, as another process would have."""
    other = open_store(store_url(store, tmp_path), clock=clock, migrate=False)
    yield other
    other.close()


def test_sweeper_thread_expires_and_stops(store: Store, clock: FakeClock) -> None:
    conversation = store.create_conversation("alice")
    asked = store.ask(
        Question("alice", conversation.id, "confirm", "?", expires_in="5m")
    ).interaction
    with Sweeper(store, interval=0.01) as sweeper:
        clock.advance("6m")
        eventually(lambda: store.get_interaction(asked.id, user="alice").status == "expired")
    passes = sweeper.passes
    clock.advance("1h")
    assert sweeper.passes == passes  # stopped means stopped


def test_two_sweepers_never_deliver_twice(store: Store, second: Store, clock: FakeClock) -> None:
    with store.transaction() as tx:
        sql(tx).execute("CREATE TABLE swept (continuation_id TEXT NOT NULL)")

    def record(delivery: Delivery) -> None:
        sql(delivery.tx).execute(
            "INSERT INTO swept (continuation_id) VALUES (?)", (delivery.continuation.id,)
        )

    timers = {store.park("swept:t", timeout=f"{n + 1}s").id for n in range(200)}
    clock.advance("1h")
    store.register_handler("swept", record)
    second.register_handler("swept", record)
    threads = [threading.Thread(target=s.sweep) for s in (store, second, store, second)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)

    def delivered() -> list[str]:
        with store.transaction(write=False) as tx:
            return [
                row["continuation_id"] for row in sql(tx).all("SELECT continuation_id FROM swept")
            ]

    # A listener thread may still be finishing a batch it leased.
    eventually(lambda: len(delivered()) >= len(timers), timeout=60)
    assert sorted(delivered()) == sorted(timers)


def test_a_waiter_wakes_when_another_instance_fires(store: Store, second: Store) -> None:
    woke: list[object] = []
    waiter = threading.Thread(target=lambda: woke.append(store.wait_signal("cross", 60)))
    waiter.start()
    eventually(lambda: store._dispatch.listening)
    second.notify_signal("cross", {"from": "elsewhere"})
    waiter.join(timeout=60)
    assert [getattr(w, "value", None) for w in woke] == [{"from": "elsewhere"}]


def test_a_resolution_elsewhere_is_delivered_here(store: Store, second: Store) -> None:
    got: list[str] = []
    store.register_handler("here", lambda delivery: got.append(delivery.continuation.id))
    parked = store.park("here:x", signal_id="remote")
    second.notify_signal("remote", 1)  # second has no handler for "here"
    eventually(lambda: got)
    assert got == [parked.id]
