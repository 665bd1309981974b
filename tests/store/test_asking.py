"""``Store.ask``: a question and what waits for its answer, one record each, one door."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pawflow import Delivery, InvalidInput, Park, Question, Store
from pawflow.records import DEFAULTED_VIA, Outcome
from pawflow.testing import FakeClock


@pytest.fixture
def conversation_id(store: Store) -> str:
    return store.create_conversation("alice", "Asking").id


def test_ask_publishes_and_parks_in_one_go(store: Store, conversation_id: str) -> None:
    question = Question("alice", conversation_id, "confirm", "Deploy?")
    asked = store.ask(question, park=Park("job:1", {"step": 3}))
    assert asked.interaction.status == "pending"
    assert asked.continuation is not None
    assert asked.continuation.signal_id == asked.interaction.signal_id
    assert json.loads(asked.continuation.payload) == {"step": 3}  # a JSON value, as JSON
    assert store.ask(Question("alice", conversation_id, "confirm", "Again?")).continuation is None


@pytest.mark.filterwarnings(
    "ignore:Store\\.(request_interaction|ask_and_park) is deprecated:DeprecationWarning"
)
def test_the_idempotency_key_holds_on_every_path(store: Store, conversation_id: str) -> None:
    """Asked again under its key, a question finds the first request, and what waits for it:
    no second request, no second continuation (the parking path used to drop the key)."""
    first, parked = store.ask_and_park(
        "alice", conversation_id, "confirm", "Ship?", target="job:2", idempotency_key="ship-1"
    )
    again, parked_again = store.ask_and_park(
        "alice", conversation_id, "confirm", "Ship?", target="job:2", idempotency_key="ship-1"
    )
    assert (again.id, parked_again.id) == (first.id, parked.id)
    assert store.pending_continuations("job:2") == 1
    question = Question("alice", conversation_id, "confirm", "Ship?", idempotency_key="ship-1")
    assert store.ask(question, park=Park("job:2")).continuation == parked
    assert store.request_interaction(
        "alice", conversation_id, "confirm", "Ship?", idempotency_key="ship-1"
    ) == store.get_interaction(first.id, user="alice")
    assert len(store.list_interactions(user="alice")) == 1


def test_a_repeat_after_the_answer_resumes_at_once(store: Store, conversation_id: str) -> None:
    """The first continuation was delivered; the repeat's is parked on a signal that fired."""
    resumed: list[bytes] = []

    def on_resume(delivery: Delivery) -> None:
        resumed.append(delivery.continuation.payload)

    store.register_handler("job", on_resume)
    question = Question("alice", conversation_id, "confirm", "Go?", idempotency_key="go-1")
    asked = store.ask(question, park=Park("job:3", b"first"))
    store.respond_interaction(asked.interaction.id, True, user="alice")
    assert store.ask(question, park=Park("job:3", b"again")).interaction == (
        store.get_interaction(asked.interaction.id, user="alice")
    )
    assert resumed == [b"first", b"again"]


@pytest.mark.parametrize("payload", [object(), {"when": {1, 2}}, float("nan")])
def test_a_payload_is_bytes_or_json(store: Store, conversation_id: str, payload: object) -> None:
    with pytest.raises(InvalidInput) as refused:
        store.park("job:4", signal_id="go", payload=payload)  # type: ignore[arg-type]
    assert refused.value.errors[0].path == "payload"
    question = Question("alice", conversation_id, "confirm", "Go?")
    with pytest.raises(InvalidInput):
        store.ask(question, park=Park("job:4", payload))  # type: ignore[arg-type]
    assert store.list_interactions(user="alice") == []  # refused whole: nothing was asked


def test_what_waits_reads_how_the_question_ended(
    store: Store, conversation_id: str, clock: FakeClock
) -> None:
    """Answered, defaulted by its on_expire policy, cancelled, expired: each reads back as a
    typed ``Outcome`` from the value its signal fired with, which keeps its JSON shape."""
    ended: dict[bytes, Outcome] = {}

    def on_resume(delivery: Delivery) -> None:
        continuation = delivery.continuation
        ended[continuation.payload] = Outcome.of(
            continuation.value, resolution=continuation.outcome
        )

    store.register_handler("job", on_resume)

    def ask(name: bytes, **more: Any) -> str:
        question = Question("alice", conversation_id, "confirm", "Go?", **more)
        return store.ask(question, park=Park("job:4", name)).interaction.id

    answered = ask(b"answered")
    defaulted = ask(b"defaulted", expires_in="3d", policy={"on_expire": {"answer": False}})
    cancelled = ask(b"cancelled")
    ask(b"expired", expires_in="1h")
    store.respond_interaction(answered, True, user="alice", via="cli")
    store.cancel_interaction(cancelled, user="alice")
    clock.advance("4d")
    store.sweep()
    assert ended == {
        b"answered": Outcome(status="answered", answer=True),
        b"defaulted": Outcome(
            status="defaulted", answer=False, answered_via=DEFAULTED_VIA, waited="3 days"
        ),
        b"cancelled": Outcome(status="cancelled"),
        b"expired": Outcome(status="expired"),
    }
    assert ended[b"answered"].answered and ended[b"defaulted"].answered
    assert [ended[name].unanswered for name in (b"cancelled", b"expired")] == [
        "cancelled",
        "expired",
    ]
    fired = store.get_signal(store.get_interaction(defaulted, user="alice").signal_id)
    assert fired is not None and fired.value == {
        "status": "answered",
        "answer": False,
        "answered_via": "policy:on_expire",
        "waited": "3 days",
    }
    assert ended[b"defaulted"].to_value() == fired.value


def test_a_timed_out_or_withdrawn_wait_reads_as_unanswered() -> None:
    assert Outcome.of(None, resolution="timeout") == Outcome(status="expired")
    assert Outcome.of(None, resolution="cancelled") == Outcome(status="cancelled")
    assert Outcome.of("not an interaction's").status == "expired"


def test_the_older_spellings_warn_and_point_to_ask(store: Store, conversation_id: str) -> None:
    with pytest.warns(DeprecationWarning, match=r"Store\.request_interaction .* Store\.ask"):
        store.request_interaction("alice", conversation_id, "confirm", "Old?")
    with pytest.warns(DeprecationWarning, match=r"Store\.ask_and_park .* Store\.ask"):
        store.ask_and_park("alice", conversation_id, "confirm", "Old too?", target="job:5")
