"""An answer and the delivery it resolves commit in one transaction, when the handler is here:
the handler sees the answer, no second transaction runs, and a refused delivery leaves the
answer committed and the continuation resolved for the sweeper."""

from __future__ import annotations

from typing import Any

import pytest

from pawflow import Delivery, FakeClock, Store, Undeliverable
from pawflow.store import Park, Question
from pawflow.store.engine import database
from pawflow.store.engine.database import sql
from pawflow.testing import eventually


@pytest.fixture
def conversation(store: Store) -> str:
    return store.create_conversation("ann").id


def _count_write_transactions(monkeypatch: pytest.MonkeyPatch, store: Store) -> list[bool]:
    opened: list[bool] = []
    original = type(store.db).transaction

    def counting(self: database.Database, *, write: bool = True) -> Any:
        if write:
            opened.append(write)
        return original(self, write=write)

    monkeypatch.setattr(type(store.db), "transaction", counting)
    return opened


def test_the_handler_runs_inside_the_answering_transaction(
    store: Store, conversation: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[tuple[str, Any]] = []

    def handler(delivery: Delivery) -> None:
        row = sql(delivery.tx).one(
            "SELECT status FROM interactions WHERE signal_id = ?",
            (delivery.continuation.signal_id,),
        )
        assert row is not None
        seen.append((row["status"], delivery.continuation.value))

    store.register_handler("here", handler)
    asked, _ = store.ask(Question("ann", conversation, "confirm", "Ship?"), park=Park("here:x"))
    writes = _count_write_transactions(monkeypatch, store)
    store.respond_interaction(asked.id, True, user="ann")
    # Delivered before respond_interaction returned, by the one write that answered.
    assert seen == [("answered", {"status": "answered", "answer": True})]
    assert len(writes) == 1
    assert store.pending_continuations("here:x") == 0


def test_a_refused_delivery_keeps_the_answer_and_waits_for_the_sweeper(
    store: Store, conversation: str, clock: FakeClock
) -> None:
    refuse = [True]
    got: list[str] = []

    def handler(delivery: Delivery) -> None:
        sql(delivery.tx).execute("DELETE FROM signals")  # undone with the refusal
        if refuse[0]:
            raise Undeliverable("not now")
        got.append(delivery.continuation.id)

    store.register_handler("here", handler)
    asked, parked = store.ask(
        Question("ann", conversation, "confirm", "Ship?"), park=Park("here:x")
    )
    assert parked is not None
    answered = store.respond_interaction(asked.id, False, user="ann")
    assert answered.status == "answered" and got == []
    kept = store.get_continuation(parked.id)
    assert kept.status == "resolved" and kept.attempts == 1
    assert store.get_signal(asked.signal_id) is not None
    refuse[0] = False
    clock.advance("5s")
    store.sweep()
    eventually(lambda: got)  # the sweep or a listener thread, whichever comes first
    assert got == [parked.id]


def test_what_no_handler_here_takes_is_left_for_another_process(
    store: Store, conversation: str
) -> None:
    asked, parked = store.ask(Question("ann", conversation, "confirm", "Ship?"), park=Park("far:x"))
    assert parked is not None
    store.respond_interaction(asked.id, True, user="ann")
    assert store.get_continuation(parked.id).status == "resolved"
    got: list[str] = []
    store.register_handler("far", lambda delivery: got.append(delivery.continuation.id))
    assert got == [parked.id]


def test_a_cancel_delivers_in_its_transaction_too(store: Store, conversation: str) -> None:
    got: list[Any] = []
    store.register_handler("here", lambda delivery: got.append(delivery.continuation.value))
    asked, _ = store.ask(Question("ann", conversation, "text", "Name?"), park=Park("here:x"))
    store.cancel_interaction(asked.id, user="ann")
    assert got == [{"status": "cancelled", "answer": None}]


def test_a_question_asked_inside_a_delivery_commits_with_it_or_not_at_all(
    store: Store, conversation: str, clock: FakeClock
) -> None:
    fail = [True]

    def ask_next(delivery: Delivery) -> None:
        store.ask(
            Question("ann", conversation, "text", "And then?"), park=Park("next:x"), tx=delivery.tx
        )
        assert store.pending_continuations("next:x", tx=delivery.tx) == 1
        if fail[0]:
            raise Undeliverable("not now")  # takes the question back with it

    store.register_handler("here", ask_next)
    asked, _ = store.ask(Question("ann", conversation, "confirm", "Ship?"), park=Park("here:x"))
    store.respond_interaction(asked.id, True, user="ann")
    assert store.list_interactions(user="ann", status="pending") == []
    assert store.pending_continuations("next:x") == 0
    fail[0] = False
    clock.advance("5s")
    store.sweep()
    eventually(lambda: store.pending_continuations("here:x") == 0)
    [follow_up] = store.list_interactions(user="ann", status="pending")
    assert follow_up.message == "And then?"
    assert store.pending_continuations("next:x") == 1
