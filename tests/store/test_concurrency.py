"""Races: of every concurrent answer, cancel and expiry exactly one wins, and the signal fires
once. Threads and processes share one store; no caller sees a raw backend error."""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import pytest

from pawflow import FakeClock, NotPending, Store, SystemClock, open_store
from pawflow.store import Question
from pawflow.store.engine.database import sql

RACER = Path(__file__).with_name("racer.py")
ROLES = ("answer", "cancel", "expire")


def store_url(store: Store, tmp_path: Path) -> str:
    if store.dialect == "sqlite":
        return f"sqlite:///{tmp_path / 'pawflow.db'}"
    return str(store.db.url)  # type: ignore[attr-defined]


@pytest.mark.slow
def test_sixteen_threads_and_four_processes_one_winner(
    store: Store, tmp_path: Path, clock: FakeClock
) -> None:
    conversation = store.create_conversation("alice")
    # The clock is the real one here: the racing processes run on the wall clock.
    clock.set(SystemClock().now())
    asked = store.ask(
        Question("alice", conversation.id, "confirm", "Ship?", expires_in="1d")
    ).interaction
    url = store_url(store, tmp_path)
    go = tmp_path / "go"
    processes = [
        subprocess.Popen(
            [sys.executable, str(RACER), url, asked.id, ROLES[n % 3], str(go)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in range(4)
    ]

    expirer = open_store(url, clock=FakeClock(clock.now() + timedelta(days=2)), migrate=False)
    outcomes: list[str] = []
    errors: list[BaseException] = []
    barrier = threading.Barrier(16)

    def attempt(action: Callable[[], bool]) -> None:
        barrier.wait()
        try:
            outcomes.append("won" if action() else "lost")
        except NotPending:
            outcomes.append("lost")
        except BaseException as exc:  # any other error fails the test below
            errors.append(exc)

    actions: list[Callable[[], bool]] = [
        lambda: store.respond_interaction(asked.id, True, user="alice") is not None,
        lambda: store.cancel_interaction(asked.id, user="alice") is not None,
        lambda: expirer.sweep()["expired"] == 1,
    ]
    threads = [threading.Thread(target=attempt, args=(actions[n % 3],)) for n in range(16)]
    go.touch()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    expirer.close()
    for process in processes:
        out, err = process.communicate(timeout=120)
        assert process.returncode == 0, err
        outcomes.append(out.strip())

    assert errors == []
    assert sorted(outcomes) == ["lost"] * 19 + ["won"]
    final = store.get_interaction(asked.id, user="alice")
    assert final.status in ("answered", "cancelled", "expired")
    with store.transaction(write=False) as tx:
        row = sql(tx).one("SELECT fire_count FROM signals WHERE signal_id = ?", (asked.signal_id,))
    assert row is not None and row["fire_count"] == 1
    answered_events = [e for e in store.events_after("alice") if e.type == "interaction_answered"]
    assert len(answered_events) == 1


def test_many_writers_never_see_a_raw_error(store: Store) -> None:
    conversation = store.create_conversation("alice")
    failures: list[BaseException] = []

    def writer(n: int) -> None:
        try:
            for i in range(15):
                asked = store.ask(
                    Question("alice", conversation.id, "text", f"{n}/{i}")
                ).interaction
                store.park(f"none:{n}", signal_id=asked.signal_id)
                store.respond_interaction(asked.id, "ok", user="alice")
                store.notify_signal(f"s{n}", i)
        except BaseException as exc:  # even our own errors fail this test
            failures.append(exc)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert failures == []
    assert len(store.list_interactions(user="alice", status="answered")) == 8 * 15


def test_concurrent_asks_with_one_idempotency_key_make_one_request(store: Store) -> None:
    conversation = store.create_conversation("alice")
    barrier = threading.Barrier(8)
    found: list[str] = []
    failures: list[BaseException] = []

    def ask() -> None:
        barrier.wait()
        try:
            asked = store.ask(
                Question("alice", conversation.id, "confirm", "Once?", idempotency_key="once")
            ).interaction
            found.append(asked.id)
        except BaseException as exc:  # any error fails the test below
            failures.append(exc)

    threads = [threading.Thread(target=ask) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert failures == []
    assert len(found) == 8 and len(set(found)) == 1
    assert [i.id for i in store.list_interactions(user="alice")] == found[:1]
    requests = [e for e in store.events_after("alice") if e.type == "interaction_request"]
    assert len(requests) == 1
