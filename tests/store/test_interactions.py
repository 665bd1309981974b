"""The interaction lifecycle and its access rules, on every backend."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest

from pawflow import (
    Conflict,
    FakeClock,
    Interaction,
    InvalidAnswer,
    InvalidDuration,
    InvalidInput,
    NotFound,
    NotPending,
    Store,
)
from pawflow.store import Question


@pytest.fixture
def conversation_id(store: Store) -> str:
    return store.create_conversation("alice", "Plans").id


def test_request_answer_record(store: Store, conversation_id: str) -> None:
    asked = store.ask(
        Question(
            "alice",
            conversation_id,
            "multi",
            "Which regions?",
            options=["eu", {"value": "us", "label": "United States"}, "ap"],
            title="Regions",
            requester={"type": "flow", "name": "rollout"},
        )
    ).interaction
    record = asked.to_dict()
    assert record["contract"] == "pawflow.user-interaction.v1"
    assert record["status"] == "pending"
    assert record["signal_id"] == f"confirmation:{asked.id}"
    assert record["options"][1] == {"value": "us", "label": "United States"}
    assert record["requester"] == {"type": "flow", "name": "rollout"}
    assert len(asked.id) >= 22

    answered = store.respond_interaction(asked.id, ["ap", "eu"], user="alice")
    assert answered.status == "answered"
    assert answered.answer == ["eu", "ap"]  # option order, not click order
    assert answered.answered_by == "alice"
    assert store.get_interaction(asked.id, user="alice") == answered


def test_the_record_keeps_where_the_answer_came_from(
    store: Store, conversation_id: str, clock: FakeClock
) -> None:
    typed = store.ask(Question("alice", conversation_id, "confirm", "Go?")).interaction
    with store.unit() as u:
        said = u.messages.append_message(conversation_id, content="yes", author="alice")
    done = store.respond_interaction(typed.id, True, user="alice", via="chat", seq=said.seq)
    assert (done.answered_via, done.answered_seq) == ("chat", said.seq)
    assert store.get_interaction(typed.id, user="alice") == done
    [_, answered] = [e for e in store.events_after("alice") if e.data.get("id") == typed.id]
    assert answered.type == "interaction_answered"
    assert (answered.data["answered_via"], answered.data["answered_seq"]) == ("chat", said.seq)

    clicked = store.ask(Question("alice", conversation_id, "confirm", "Go?")).interaction
    for via, seq in (("bogus", None), ("", None), ("button", 3), ("chat", True)):
        with pytest.raises(InvalidInput, match="answered_"):
            store.respond_interaction(clicked.id, True, user="alice", via=via, seq=seq)
    assert store.get_interaction(clicked.id, user="alice").pending
    cancelled = store.cancel_interaction(clicked.id, user="alice")
    assert (cancelled.answered_via, cancelled.answered_seq) == (None, None)
    assert store.pending_request(conversation_id) is None


def test_an_answer_returns_the_record_as_stored_with_a_policy_and_a_deadline(
    store: Store, conversation_id: str, clock: FakeClock
) -> None:
    """The answer's record is made from the request as its transaction read (and held) it,
    not read back: it is the stored record, a policy's columns and all."""
    asked = store.ask(
        Question(
            "alice",
            conversation_id,
            "text",
            "Release name?",
            expires_in="1d",
            policy={"assignees": ["alice", "bob"]},
        )
    ).interaction
    clock.advance(timedelta(minutes=5))
    answered = store.respond_interaction(asked.id, "Falcon", user="alice", via="cli")
    assert (answered.status, answered.answer, answered.answered_via) == (
        "answered",
        "Falcon",
        "cli",
    )
    assert answered.answered_at == clock.now()
    assert store.get_interaction(asked.id, user="alice") == answered
    with pytest.raises(NotPending):
        store.respond_interaction(asked.id, "Eagle", user="alice")


def test_the_newest_pending_request_is_what_a_conversation_waits_on(
    store: Store, conversation_id: str, clock: FakeClock
) -> None:
    assert store.pending_request(conversation_id) is None
    first = store.ask(Question("alice", conversation_id, "confirm", "One?")).interaction
    second = store.ask(Question("alice", conversation_id, "confirm", "Two?")).interaction  # same ms
    assert store.pending_request(conversation_id) == second
    store.respond_interaction(second.id, True, user="alice")
    assert store.pending_request(conversation_id) == first
    brief = store.ask(
        Question("alice", conversation_id, "confirm", "Soon?", expires_in="1m")
    ).interaction
    assert store.pending_request(conversation_id) == brief
    clock.advance("2m")  # past its deadline it waits no more, swept or not
    assert store.pending_request(conversation_id) == first


def test_non_confirmation_kinds_use_the_interaction_signal(
    store: Store, conversation_id: str
) -> None:
    asked = store.ask(Question("alice", conversation_id, "integer", "How many?")).interaction
    assert asked.signal_id == f"interaction:{asked.id}"


def test_invalid_answer_keeps_the_request_pending(store: Store, conversation_id: str) -> None:
    asked = store.ask(
        Question(
            "alice",
            conversation_id,
            "form",
            "Expense",
            response_schema={
                "type": "object",
                "properties": {
                    "amount": {"type": "number", "minimum": 1},
                    "reason": {"type": "string"},
                },
                "required": ["amount", "reason"],
            },
        )
    ).interaction
    with pytest.raises(InvalidAnswer) as caught:
        store.respond_interaction(asked.id, {"amount": "0.5", "extra": 1}, user="alice")
    paths = {error.path for error in caught.value.errors}
    assert {"amount", "reason", "extra"} <= paths
    assert store.get_interaction(asked.id, user="alice").status == "pending"
    assert store.get_signal(asked.signal_id) is None


def test_exactly_one_way_out_of_pending(store: Store, conversation_id: str) -> None:
    asked = store.ask(Question("alice", conversation_id, "confirm", "Go?")).interaction
    store.cancel_interaction(asked.id, user="alice")
    with pytest.raises(NotPending) as caught:
        store.respond_interaction(asked.id, True, user="alice")
    assert caught.value.status == "cancelled"
    with pytest.raises(NotPending):
        store.cancel_interaction(asked.id, user="alice")
    fired = store.get_signal(asked.signal_id)
    assert fired is not None and fired.value == {"status": "cancelled", "answer": None}


def test_reads_are_scoped_and_foreign_equals_unknown(store: Store, conversation_id: str) -> None:
    asked = store.ask(Question("alice", conversation_id, "text", "Name?")).interaction
    with pytest.raises(NotFound) as foreign:
        store.get_interaction(asked.id, user="mallory")
    with pytest.raises(NotFound) as unknown:
        store.get_interaction("no-such-id", user="mallory")
    assert str(foreign.value) == str(unknown.value)
    attempts: list[Callable[[], object]] = [
        lambda: store.respond_interaction(asked.id, "x", user="mallory"),
        lambda: store.cancel_interaction(asked.id, user="mallory"),
    ]
    for attempt in attempts:
        with pytest.raises(NotFound):
            attempt()
    assert store.list_interactions(user="mallory") == []
    assert [i.id for i in store.list_interactions(user="alice")] == [asked.id]


def test_write_collaborators_may_answer_read_collaborators_may_not(
    store: Store, conversation_id: str
) -> None:
    store.share_conversation(conversation_id, user="alice", with_user="bob", access="write")
    store.share_conversation(conversation_id, user="alice", with_user="carol", access="read")
    first = store.ask(Question("alice", conversation_id, "confirm", "One?")).interaction
    second = store.ask(Question("alice", conversation_id, "confirm", "Two?")).interaction
    with pytest.raises(NotFound):
        store.respond_interaction(first.id, True, user="carol")
    assert store.respond_interaction(first.id, True, user="bob").answered_by == "bob"
    assert store.cancel_interaction(second.id, user="bob").status == "cancelled"
    with pytest.raises(NotFound):  # reads stay with the owner
        store.get_interaction(first.id, user="bob")


def test_list_filters_and_pages(store: Store, conversation_id: str, clock: FakeClock) -> None:
    other = store.create_conversation("alice", "Other").id
    made = []
    for n in range(5):
        clock.advance("1s")
        made.append(
            store.ask(
                Question("alice", other if n % 2 else conversation_id, "text", f"Q{n}")
            ).interaction
        )
    store.respond_interaction(made[0].id, "done", user="alice")
    pending = store.list_interactions(user="alice", status="pending")
    assert [i.message for i in pending] == ["Q1", "Q2", "Q3", "Q4"]
    in_other = store.list_interactions(user="alice", conversation_id=other)
    assert [i.message for i in in_other] == ["Q1", "Q3"]

    seen: list[str] = []
    cursor: str | None = None
    while True:
        page, cursor = store.page_interactions(user="alice", limit=2, cursor=cursor)
        seen.extend(i.message for i in page)
        if cursor is None:
            break
    assert seen == ["Q0", "Q1", "Q2", "Q3", "Q4"]
    with pytest.raises(InvalidInput):
        store.page_interactions(user="alice", cursor="not a cursor!")


def test_expiry_by_sweeper_and_on_answer(
    store: Store, conversation_id: str, clock: FakeClock
) -> None:
    swept = store.ask(
        Question("alice", conversation_id, "confirm", "A?", expires_in="1h")
    ).interaction
    late = store.ask(
        Question("alice", conversation_id, "confirm", "B?", expires_in="2h")
    ).interaction
    clock.advance("90m")
    assert store.sweep()["expired"] == 1
    assert store.get_interaction(swept.id, user="alice").status == "expired"
    assert store.get_signal(swept.signal_id).value == {"status": "expired", "answer": None}  # type: ignore[union-attr]

    clock.advance("1h")  # past B's deadline, before any sweep: the answer must not win
    with pytest.raises(NotPending) as caught:
        store.respond_interaction(late.id, True, user="alice")
    assert caught.value.status == "expired"
    assert store.get_interaction(late.id, user="alice").status == "expired"
    assert store.sweep()["expired"] == 0


def test_calendar_aware_expiry(store: Store, conversation_id: str, clock: FakeClock) -> None:
    clock.set(datetime(2026, 1, 31, 12, tzinfo=UTC))
    asked = store.ask(
        Question("alice", conversation_id, "confirm", "?", expires_in="1mo")
    ).interaction
    assert asked.expires_at == datetime(2026, 2, 28, 12, tzinfo=UTC)
    with pytest.raises(InvalidDuration) as caught:
        store.ask(Question("alice", conversation_id, "confirm", "?", expires_in="soon"))
    assert "90s" in str(caught.value)


def test_bad_requests_are_clear(store: Store, conversation_id: str) -> None:
    with pytest.raises(InvalidInput, match="kind"):
        store.ask(Question("alice", conversation_id, "essay", "?"))
    with pytest.raises(InvalidInput):
        store.ask(Question("alice", conversation_id, "choice", "?"))  # no options
    with pytest.raises(InvalidInput):
        store.ask(Question("alice", conversation_id, "text", ""))
    with pytest.raises(NotFound):
        store.ask(Question("mallory", conversation_id, "text", "?"))


def test_file_answers_reference_the_answerers_own_upload(
    store: Store, conversation_id: str
) -> None:
    asked = store.ask(
        Question(
            "alice",
            conversation_id,
            "file",
            "Receipt?",
            response_schema={"type": "object", "maxBytes": 100, "mediaTypes": ["image/*"]},
        )
    ).interaction
    theirs = store.add_file("mallory", "x.png", "image/png", b"\x89PNG")
    with pytest.raises(InvalidAnswer):
        store.respond_interaction(asked.id, theirs.id, user="alice")
    too_big = store.add_file("alice", "big.png", "image/png", b"0" * 101)
    with pytest.raises(InvalidAnswer):
        store.respond_interaction(asked.id, too_big.id, user="alice")
    wrong_type = store.add_file("alice", "r.pdf", "application/pdf", b"%PDF")
    with pytest.raises(InvalidAnswer):
        store.respond_interaction(asked.id, {"id": wrong_type.id}, user="alice")
    mine = store.add_file("alice", "r.png", "image/png", b"\x89PNG")
    answered = store.respond_interaction(asked.id, {"id": mine.id}, user="alice")
    assert answered.answer == mine.to_dict()
    assert answered.answer["sha256"] == hashlib.sha256(b"\x89PNG").hexdigest()


def test_events_are_logged_with_the_change(store: Store, conversation_id: str) -> None:
    store.share_conversation(conversation_id, user="alice", with_user="bob", access="write")
    asked = store.ask(Question("alice", conversation_id, "confirm", "Go?")).interaction
    store.respond_interaction(asked.id, "no", user="alice")
    for user in ("alice", "bob"):
        events = store.events_after(user)
        assert [e.type for e in events] == ["interaction_request", "interaction_answered"]
        assert events[1].data["answer"] is False
    assert store.events_after("mallory") == []
    first = store.events_after("alice")[0].seq
    assert [e.type for e in store.events_after("alice", first)] == ["interaction_answered"]


def test_asking_again_with_an_idempotency_key_returns_the_first_request(
    store: Store, conversation_id: str, clock: FakeClock
) -> None:
    def ask(
        message: str = "Ship it?", options: list[str] | None = None, key: str | None = "ship-42"
    ) -> Interaction:
        return store.ask(
            Question(
                "alice",
                conversation_id,
                "choice",
                message,
                options=options or ["yes", "no"],
                expires_in="1d",
                idempotency_key=key,
            )
        ).interaction

    first = ask()
    events = store.events_after("alice")
    clock.advance("1h")  # a later deadline is not another question
    assert ask() == first
    assert store.events_after("alice") == events  # nothing asked, nothing announced
    assert store.list_interactions(user="alice") == [first]

    # Answered since: the repeat finds it as it is now.
    answered = store.respond_interaction(first.id, "yes", user="alice")
    assert ask() == answered

    with pytest.raises(Conflict, match="idempotency_key 'ship-42' was used for another request"):
        ask("Ship it now?")
    with pytest.raises(Conflict, match="differs in options"):
        ask(options=["yes", "later"])

    # A key is its owner's own: the same key by someone else is another request.
    store.share_conversation(conversation_id, user="alice", with_user="bob", access="write")
    theirs = store.ask(
        Question("bob", conversation_id, "confirm", "Ship it?", idempotency_key="ship-42")
    ).interaction
    assert theirs.id != first.id
    # Without a key, asking twice asks twice.
    assert ask(key=None).id != first.id
    assert len(store.list_interactions(user="alice")) == 2


@pytest.mark.parametrize("key", ["", "a\x00b", "line\nbreak", "k" * 256, 7])
def test_an_unusable_idempotency_key_is_refused(
    store: Store, conversation_id: str, key: object
) -> None:
    with pytest.raises(InvalidInput) as refused:
        store.ask(Question("alice", conversation_id, "confirm", "Go?", idempotency_key=key))  # type: ignore[arg-type]
    assert [e.path for e in refused.value.errors] == ["idempotency_key"]


def test_text_no_database_can_keep_is_refused_alike_on_every_backend(
    store: Store, conversation_id: str
) -> None:
    """NUL is refused before it reaches the database: SQLite would keep it, PostgreSQL
    cannot; either way the caller gets the same clear refusal."""
    asks: list[tuple[dict[str, object], str]] = [
        ({"message": "Deploy\x00now?"}, "message"),
        ({"title": "Deploy\x00"}, "title"),
        ({"response_schema": {"type": "string", "title": "x\x00"}}, "response_schema.title"),
        (
            {"response_schema": {"type": "string", "description": "\ud800"}},
            "response_schema.description",
        ),
    ]
    for fields, path in asks:
        question: dict[str, object] = {"message": "Deploy?", **fields}
        message = question.pop("message")
        assert isinstance(message, str)
        with pytest.raises(InvalidInput) as caught:
            store.ask(Question("alice", conversation_id, "text", message, **question))  # type: ignore[arg-type]
        found = caught.value.errors[0]
        assert found.path == path, caught.value.errors
        assert "\x00" not in str(caught.value)
    for lookup in (
        lambda: store.get_interaction("id\x00", user="alice"),
        lambda: store.cancel_interaction("id\x00", user="alice"),
        lambda: store.page_interactions(user="alice", conversation_id="c\x00"),
        lambda: store.create_conversation("alice", "Plans\x00"),
    ):
        with pytest.raises((InvalidInput, NotFound)):
            lookup()
    assert store.list_interactions(user="alice") == []
