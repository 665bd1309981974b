"""The session continuation registry, on every backend."""

from __future__ import annotations

import pytest

from pawflow.chat import sessions
from pawflow.chat.service import ChatService
from pawflow.chat.sessions import SessionRegistry
from pawflow.clock import FakeClock
from pawflow.errors import Conflict, InvalidInput, NotPending
from pawflow.store import Store


@pytest.fixture
def registry(store: Store) -> SessionRegistry:
    return SessionRegistry(store)


def test_a_second_question_supersedes_the_first_which_is_kept(registry: SessionRegistry) -> None:
    first = registry.ask("s1", "planner", "question", "Which city?")
    second = registry.ask("s1", "organizer", "approval", "Shall I move 3 files?")
    assert registry.pending("s1") == second
    history = registry.history("s1")
    assert [(c.id, c.status) for c in history] == [(first.id, "superseded"), (second.id, "pending")]
    assert history[0].closed_at is not None
    with pytest.raises(NotPending) as raised:
        registry.answered(first.id, "Paris")
    assert raised.value.status == "superseded"


def test_a_raw_second_insert_fails_with_a_conflict(store: Store, registry: SessionRegistry) -> None:
    registry.ask("s1", "planner", "question", "Which city?")
    now = store.now()
    with pytest.raises(Conflict), store.transaction() as tx:
        sessions.insert(
            tx,
            session_id="s1",
            owner="organizer",
            kind="approval",
            origin="explicit",
            question="Shall I?",
            run_id=None,
            step_id=None,
            intent=None,
            payload=None,
            now=now,
            expires_at=now,
        )
    assert [c.owner for c in registry.history("s1")] == ["planner"]


def test_sessions_never_see_each_other(registry: SessionRegistry) -> None:
    registry.ask("s1", "organizer", "approval", "Shall I move 3 files?")
    # Exactly one is pending in the whole store: still nothing for another session.
    assert registry.pending("s2") is None
    assert registry.history("s2") == []


def test_ttl_is_enforced_on_read_and_swept(
    store: Store, registry: SessionRegistry, clock: FakeClock
) -> None:
    short = registry.ask("s1", "planner", "question", "Which city?", ttl="1h")
    registry.ask("s2", "planner", "question", "Which day?", ttl="1h")
    clock.advance("2h")
    assert registry.pending("s1") is None  # expired on read
    assert [c.status for c in registry.history("s1")] == ["expired"]
    assert registry.get(short.id) is not None
    assert sessions.expire_due(store) == {"session_continuations_expired": 1}  # s2
    assert [c.status for c in registry.history("s2")] == ["expired"]


def test_answer_withdraw_and_choices(registry: SessionRegistry) -> None:
    choice = registry.ask(
        "s1",
        "inbox",
        "choice",
        "Which one?",
        payload=[{"label": "Invoice", "value": "<a@x>"}, "Offsite"],
    )
    assert choice.options == ["Invoice", "Offsite"]
    assert choice.option_value(1) == "<a@x>" and choice.option_value(2) == "Offsite"
    done = registry.answered(choice.id, "the first one")
    assert done.status == "answered" and done.reply == "the first one"
    asked = registry.ask("s1", "planner", "question", "Which city?")
    assert registry.withdraw(asked.id).status == "withdrawn"
    assert registry.pending("s1") is None
    with pytest.raises(InvalidInput):
        registry.ask("s1", "inbox", "choice", "Which one?", payload=["only one"])


def test_by_run_finds_the_questions_of_a_run(registry: SessionRegistry) -> None:
    registry.ask("s1", "planner", "question", "Neo4j or Stardog?", run_id="r1", step_id="0001")
    [found] = registry.by_run("r1")
    assert (found.session_id, found.step_id) == ("s1", "0001")


def test_the_agent_service_sweeps_expired_continuations(store: Store, clock: FakeClock) -> None:
    with ChatService(store, poll_interval=None) as service:
        service.sessions.ask("s1", "planner", "question", "Which city?", ttl="1h")
        clock.advance("2h")
        assert store.sweep()["session_continuations_expired"] == 1
    assert [c.status for c in SessionRegistry(store).history("s1")] == ["expired"]
