"""The write rule, kept by the store alone: publishing, posting and answering need owner or
write access; a requester that asks and waits does both in one transaction."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from pawflow.agent import Toolbox, ToolContext
from pawflow.agent.builtin_tools import builtin_tools
from pawflow.agent.models.base import ToolCall
from pawflow.errors import InvalidInput, NotFound
from pawflow.records import Interaction
from pawflow.store import Park, Question, Store


@pytest.fixture
def shared(store: Store) -> str:
    conversation = store.create_conversation("alice", "Shared").id
    store.share_conversation(conversation, user="alice", with_user="bob", access="write")
    store.share_conversation(conversation, user="alice", with_user="carol", access="read")
    return conversation


def test_ask_and_park_publishes_and_waits_in_one_call(store: Store, shared: str) -> None:
    def payload(asked: Interaction) -> bytes:
        return json.dumps({"request_id": asked.id}).encode()

    asked, parked = store.ask(
        Question("bob", shared, "confirm", "Ship it?"), park=Park("robot:ship", payload)
    )
    assert parked is not None
    assert (asked.owner, asked.status, asked.requester.type) == ("bob", "pending", "api")
    assert (parked.target, parked.signal_id, parked.status) == (
        "robot:ship",
        asked.signal_id,
        "parked",
    )
    assert json.loads(parked.payload) == {"request_id": asked.id}
    store.respond_interaction(asked.id, True, user="alice")
    resumed = store.get_continuation(parked.id)
    assert (resumed.status, resumed.outcome) == ("resolved", "signaled")
    assert resumed.value == {"status": "answered", "answer": True}


def test_a_reader_can_neither_publish_nor_post(store: Store, shared: str) -> None:
    attempts: list[Callable[[], Any]] = [
        lambda: store.ask(Question("carol", shared, "confirm", "Mine?")).interaction,
        lambda: store.ask(Question("carol", shared, "confirm", "Mine?"), park=Park("robot:x")),
        lambda: store.post_message(shared, "hello", user="carol"),
        # Who may not publish learns nothing, not even that the question is malformed.
        lambda: store.ask(Question("carol", shared, "no-such-kind", "")).interaction,
        lambda: store.ask(Question("dave", shared, "confirm", "Mine?")).interaction,
    ]
    for attempt in attempts:
        with pytest.raises(NotFound, match="conversation not found"):
            attempt()
    assert store.list_interactions(user="carol") == []
    assert store.pending_continuations("robot:x") == 0
    with store.unit(write=False) as u:
        assert u.messages.history(shared, user="carol") == []
    assert store.post_message(shared, "hello", user="bob").author == "bob"


def test_an_agent_acting_for_a_reader_cannot_ask_there(store: Store, shared: str) -> None:
    box = Toolbox(builtin_tools())
    ctx = ToolContext(store, "helper", shared, "carol", "run")
    outcome = box.invoke(ToolCall("c", "request_confirmation", '{"message": "Go?"}'), ctx)
    assert outcome.error and "not found" in outcome.content
    assert store.list_interactions(user="carol") == []
    assert store.pending_continuations("agent:helper") == 0


def test_answering_through_a_kind_filter(store: Store, shared: str) -> None:
    text = store.ask(Question("alice", shared, "text", "Name?")).interaction
    with pytest.raises(NotFound):
        store.respond_interaction(text.id, "x", user="alice", kinds=("confirm", "choice"))
    with pytest.raises(NotFound):
        store.cancel_interaction(text.id, user="bob", kinds=("confirm",))
    assert store.respond_interaction(text.id, "x", user="bob", kinds=("text",)).answer == "x"


def test_sharing_with_known_users_only(store: Store, shared: str) -> None:
    with pytest.raises(InvalidInput, match="unknown user"):
        store.share_conversation(
            shared, user="alice", with_user="nobody", access="read", known_users_only=True
        )
    with pytest.raises(NotFound):  # only the owner learns whether the user exists
        store.share_conversation(
            shared, user="bob", with_user="nobody", access="read", known_users_only=True
        )
    assert "nobody" not in store.get_conversation(shared, user="alice").members
