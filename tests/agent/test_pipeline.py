"""The turn pipeline: its stages in order, intercepts, routing, progress events."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from pawflow.chat import STAGES, Pipeline, Turn, default_pipeline
from pawflow.chat.service import ChatService
from pawflow.errors import ConfigError
from pawflow.records import Conversation
from pawflow.store import Store
from tests.agent.conftest import USER, history, say, scheduled


@pytest.fixture
def store(sqlite_store: Store) -> Store:
    """The pipeline does not depend on the backend: SQLite is enough here."""
    return sqlite_store


def test_the_stages_run_in_the_one_order(service: ChatService) -> None:
    pipeline = service.pipeline
    assert [stage.name for stage in pipeline.stages] == list(STAGES)
    assert STAGES == ("intercept", "classify", "route", "plan", "execute", "curate", "record")
    with pytest.raises(ConfigError, match="intercept → classify"):
        Pipeline(list(reversed(pipeline.stages)))


def test_a_full_turn_goes_through_every_stage(
    store: Store, service: ChatService, conversation: Conversation
) -> None:
    with store.unit() as u:
        message = u.messages.append_message(conversation.id, content="hello there", author=USER)
    turn = service.handle_message(store, conversation.id, message)
    assert turn is not None and turn.trace == list(STAGES)
    assert turn.intent == "chat" and turn.agent is not None and turn.agent.name == "deployer"
    assert turn.recorded is not None and turn.recorded.author == "deployer"
    assert "I am the demo deployer" in turn.recorded.content


@dataclass
class Greeter:
    name: str = "greeter"
    resolves_confirmation: bool = False

    def __call__(self, turn: Turn) -> str | None:
        return "Hi! (answered without the agent)" if turn.text.startswith("hi") else None


def test_an_intercept_settles_the_turn_and_skips_the_rest(
    store: Store, service: ChatService, conversation: Conversation
) -> None:
    pipeline = default_pipeline(service, [Greeter()])
    with store.unit() as u:
        hi = u.messages.append_message(conversation.id, content="hi", author=USER)
    turn = pipeline.run(Turn.for_message(store, hi))
    assert turn.trace == ["intercept"] and turn.answered_by == "greeter" and turn.results == []
    assert history(store, conversation.id)[-1] == (
        "assistant",
        "greeter",
        "Hi! (answered without the agent)",
    )
    with store.unit() as u:
        deploy = u.messages.append_message(conversation.id, content="deploy", author=USER)
    passed = pipeline.run(Turn.for_message(store, deploy))
    assert passed.trace == list(STAGES)


def test_a_conversation_without_an_agent_gets_no_reply(store: Store, service: ChatService) -> None:
    quiet = store.create_conversation(USER, "quiet")
    with store.unit() as u:
        anyone = u.messages.append_message(quiet.id, content="anyone?", author=USER)
    turn = service.handle_message(store, quiet.id, anyone)
    assert turn is not None and turn.trace == ["intercept", "classify", "route"]
    assert len(history(store, quiet.id)) == 1


def test_only_user_messages_start_turns(
    store: Store, service: ChatService, conversation: Conversation
) -> None:
    with store.unit() as u:
        note = u.messages.append_message(
            conversation.id, content="fyi", role="system", author="pawflow"
        )
    assert service.handle_message(store, conversation.id, note) is None
    turn = service.handle_message(store, conversation.id, "deploy")  # stored first, as the owner's
    assert turn is not None and history(store, conversation.id)[-2] == ("user", USER, "deploy")


def test_progress_streams_as_durable_events(
    store: Store, service: ChatService, conversation: Conversation
) -> None:
    say(store, service, conversation.id, "deploy")
    store.respond_interaction(
        store.list_interactions(user=USER, status="pending")[0].id, "staging", user=USER
    )
    scheduled(service, conversation.id)
    service.run_due()
    events = store.events_after(USER)
    progress = [e.data for e in events if e.type == "agent_progress"]
    assert all(p["agent"] == "deployer" and p["run_id"] for p in progress)
    phases = [p["phase"] for p in progress]
    # The first turn asks; the wakeup's turn deploys and reports.
    assert phases == [
        "thinking",
        "text",
        "tool",
        "tool_result",
        "finished",
        "thinking",
        "text",
        "tool",
        "tool_result",
        "thinking",
        "text",
        "finished",
    ]
    tools = [(p["tool"], p.get("error")) for p in progress if p["phase"] == "tool_result"]
    assert tools == [("request_confirmation", False), ("deploy", False)]
    assert progress[4]["halt_reason"] == "awaiting_confirmation"
    assert progress[-1]["status"] == "completed"
    messages = [e.data for e in events if e.type == "message"]
    assert [m["role"] for m in messages] == ["user", "assistant", "system", "assistant"]
    reply = messages[1]
    assert reply["data"]["halt_reason"] == "awaiting_confirmation"
    assert reply["data"]["request_id"] == store.list_interactions(user=USER)[0].id
    assert reply["data"]["checkpoint"]["run_id"] == reply["data"]["run_id"]
