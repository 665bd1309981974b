"""Durable signals, parked continuations, timers and delivery, on every backend."""

from __future__ import annotations

import sqlite3
import threading
from datetime import UTC, datetime

import psycopg
import pytest

from pawflow import (
    Conflict,
    Continuation,
    Delivery,
    FakeClock,
    InvalidDuration,
    InvalidInput,
    PayloadTooLarge,
    Store,
    StoreError,
    StoreUnavailable,
    Undeliverable,
    open_store,
)
from pawflow.store.engine.database import sql
from pawflow.testing import eventually


class Recorder:
    """A delivery handler that keeps what it got, and can refuse while told to."""

    def __init__(self) -> None:
        self.got: list[Continuation] = []
        self.refuse = False

    def accepts(self, target: str) -> bool:
        return True

    def deliver(self, delivery: Delivery) -> None:
        if self.refuse:
            raise Undeliverable("not running")
        self.got.append(delivery.continuation)


@pytest.fixture
def recorder(store: Store) -> Recorder:
    handler = Recorder()
    store.register_handler("test", handler)
    return handler


def test_signal_resolves_what_is_parked_and_delivers_once(store: Store, recorder: Recorder) -> None:
    first = store.park("test:a", signal_id="approve-1", payload=b"one")
    second = store.park("test:b", signal_id="approve-1", payload=b"two")
    assert store.notify_signal("approve-1", {"ok": True}) == 2
    eventually(lambda: len(recorder.got) == 2)
    assert sorted(c.payload for c in recorder.got) == [b"one", b"two"]
    assert {c.id for c in recorder.got} == {first.id, second.id}
    assert all(c.outcome == "signaled" and c.value == {"ok": True} for c in recorder.got)
    store.sweep()
    assert len(recorder.got) == 2
    assert store.pending_continuations("test:a") == 0


def test_notify_before_wait_passes_through(store: Store, recorder: Recorder) -> None:
    store.notify_signal("early", 42)
    parked = store.park("test:x", signal_id="early")
    assert parked.status == "resolved"
    eventually(lambda: recorder.got)
    assert [c.value for c in recorder.got] == [42]


def test_latest_value_is_remembered(store: Store) -> None:
    store.notify_signal("s", 1)
    store.notify_signal("s", 2)
    fired = store.get_signal("s")
    assert fired is not None and fired.value == 2


def test_wait_times_out_and_timer_elapses(
    store: Store, recorder: Recorder, clock: FakeClock
) -> None:
    store.park("test:wait", signal_id="never", timeout="1h", payload=b"w")
    store.park("test:timer", until="2026-01-02T00:00:00+02:00", payload=b"t")
    store.park("test:forever", signal_id="never", timeout="0")
    clock.advance("59m")
    assert store.sweep()["released"] == 0
    clock.advance("2m")
    assert store.sweep()["released"] == 1
    eventually(lambda: recorder.got)
    assert [(c.target, c.outcome) for c in recorder.got] == [("test:wait", "timeout")]
    clock.set(datetime(2026, 1, 1, 22, 0, tzinfo=UTC))
    assert store.sweep()["released"] == 1
    eventually(lambda: len(recorder.got) == 2)  # a listener thread may be the one delivering
    assert recorder.got[-1].outcome == "elapsed" and recorder.got[-1].payload == b"t"
    assert store.pending_continuations("test:forever") == 1


def test_cancelled_continuation_leaves_cancelled(store: Store, recorder: Recorder) -> None:
    timer = store.park("test:t", timeout="1d")
    assert store.cancel_continuation(timer.id)
    assert not store.cancel_continuation(timer.id)
    eventually(lambda: recorder.got)
    assert [c.outcome for c in recorder.got] == ["cancelled"]


def test_undeliverable_stays_resolved_and_is_retried_with_backoff(
    store: Store, recorder: Recorder, clock: FakeClock
) -> None:
    recorder.refuse = True
    parked = store.park("test:later", signal_id="go")
    store.notify_signal("go", "now")
    assert recorder.got == []

    def retried() -> Continuation | None:
        found = store.get_continuation(parked.id)
        return found if found is not None and found.attempts else None

    kept = eventually(retried)
    assert kept.status == "resolved" and kept.attempts == 1
    recorder.refuse = False
    store.sweep()
    assert recorder.got == []  # backing off
    clock.advance("5s")
    store.sweep()
    eventually(lambda: recorder.got)
    assert [c.id for c in recorder.got] == [parked.id]


def test_continuation_without_a_handler_waits_for_one(store: Store, clock: FakeClock) -> None:
    parked = store.park("later:x", signal_id="sig")
    store.notify_signal("sig", None)
    assert store.sweep()["delivered"] == 0
    got: list[str] = []
    store.register_handler("later", lambda delivery: got.append(delivery.continuation.id))
    eventually(lambda: got)
    assert got == [parked.id]


def test_durable_effects_commit_with_the_delivery(store: Store) -> None:
    with store.transaction() as tx:
        sql(tx).execute("CREATE TABLE handled (continuation_id TEXT PRIMARY KEY)")

    def record(delivery: Delivery) -> None:
        sql(delivery.tx).execute(
            "INSERT INTO handled (continuation_id) VALUES (?)", (delivery.continuation.id,)
        )
        if delivery.continuation.payload == b"boom":
            raise RuntimeError("handler failed after writing")

    store.register_handler("fx", record)
    good = store.park("fx:1", signal_id="s", payload=b"ok")
    bad = store.park("fx:2", signal_id="s", payload=b"boom")
    store.notify_signal("s", 1)
    eventually(lambda: store.get_continuation(bad.id).attempts == 1)
    with store.transaction(write=False) as tx:
        rows = sql(tx).all("SELECT continuation_id FROM handled")
    assert [row["continuation_id"] for row in rows] == [good.id]


def test_park_rejects_bad_input(store: Store) -> None:
    store.payload_cap = 1024
    with pytest.raises(PayloadTooLarge):
        store.park("test:x", signal_id="s", payload=b"x" * 1025)
    with pytest.raises(InvalidInput):
        store.park("no-kind", signal_id="s")
    with pytest.raises(InvalidInput):
        store.park("test:x")
    with pytest.raises(InvalidDuration):
        store.park("test:x", until="2026-01-01T00:00:00")  # no timezone
    with pytest.raises(InvalidDuration):
        store.park("test:x", signal_id="s", timeout="3 fortnights")


def test_wait_signal_wakes_when_another_thread_fires(store: Store) -> None:
    fired: list[object] = []
    waiter = threading.Thread(
        target=lambda: fired.append(store.wait_signal("ping", timeout=30)), daemon=True
    )
    waiter.start()
    eventually(lambda: store._dispatch.listening)
    store.notify_signal("ping", "pong")
    waiter.join(timeout=30)
    assert len(fired) == 1 and fired[0] is not None
    assert fired[0].value == "pong"  # type: ignore[attr-defined]
    assert store.wait_signal("silent", timeout=0.01) is None


def test_backend_errors_are_translated(store: Store) -> None:
    with pytest.raises(StoreError) as caught, store.transaction() as tx:
        sql(tx).execute("SELECT * FROM no_such_table")
    assert not isinstance(caught.value, (sqlite3.Error, psycopg.Error))
    with pytest.raises(Conflict), store.transaction() as tx:
        sql(tx).execute("INSERT INTO users (id, created_at) VALUES ('dup', 0)")
        sql(tx).execute("INSERT INTO users (id, created_at) VALUES ('dup', 0)")


def test_unreachable_or_unknown_stores_are_clear_errors() -> None:
    with pytest.raises(InvalidInput, match="sqlite:///"):
        open_store("mysql://nowhere")
    with pytest.raises(StoreUnavailable):
        open_store("postgresql://nobody@127.0.0.1:1/none?connect_timeout=1")
