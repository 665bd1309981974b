"""A consequential tool runs only after the user approves it in the chat — and only once."""

from __future__ import annotations

import pytest

from pawflow.chat.service import ChatService
from pawflow.records import Conversation
from pawflow.store import Store
from pawflow.store.runtime import turns
from tests.agent.conftest import USER, Deleter, history, say, scheduled


@pytest.fixture
def helped(store: Store, service: ChatService, conversation: Conversation) -> Conversation:
    service.assign(conversation.id, "helper")
    return conversation


def ask_to_clean(store: Store, service: ChatService, conversation: Conversation) -> str:
    say(store, service, conversation.id, "clean up the temp files")
    [request] = store.list_interactions(user=USER, status="pending")
    assert request.kind == "confirm"
    assert request.message == "Allow helper to run delete_files with pattern: *.tmp?"
    assert request.requester.name == "helper"
    return request.id


def test_it_does_not_run_until_approved(
    store: Store, service: ChatService, helped: Conversation, deleter: Deleter
) -> None:
    request_id = ask_to_clean(store, service, helped)
    assert deleter.calls == []
    assert history(store, helped.id)[-1][2] == (
        "Cleaning needs your approval.\n\n"
        "I need your approval to run delete_files with pattern: *.tmp."
    )

    store.respond_interaction(request_id, True, user=USER)
    scheduled(service, helped.id)
    assert deleter.calls == []  # answering alone runs nothing
    assert service.run_due() == 1
    assert deleter.calls == ["*.tmp"]
    assert history(store, helped.id)[-1] == ("assistant", "helper", "Deleted 3 files.")
    assert service.run_due() == 0
    assert deleter.calls == ["*.tmp"]


@pytest.mark.parametrize("decision", ["decline", "cancel"])
def test_it_never_runs_when_declined(
    store: Store, service: ChatService, helped: Conversation, deleter: Deleter, decision: str
) -> None:
    request_id = ask_to_clean(store, service, helped)
    if decision == "decline":
        store.respond_interaction(request_id, False, user=USER)
    else:
        store.cancel_interaction(request_id, user=USER)
    scheduled(service, helped.id)
    assert service.run_due() == 1
    assert deleter.calls == []
    assert history(store, helped.id)[-1] == ("assistant", "helper", "Nothing was deleted.")


def test_an_interrupted_approved_call_is_not_run_again(
    store: Store, service: ChatService, helped: Conversation, deleter: Deleter
) -> None:
    request_id = ask_to_clean(store, service, helped)
    store.respond_interaction(request_id, True, user=USER)
    [wakeup] = scheduled(service, helped.id)
    # As if a process had started the call and died: the journal says it began.
    with store.transaction() as tx:
        assert turns.mark_tool_started(tx, wakeup.id, store.now())
    assert service.run_due() == 1
    assert deleter.calls == []


def test_an_approval_shows_the_call_its_tool_and_the_decisions(
    store: Store, service: ChatService, helped: Conversation
) -> None:
    request_id = ask_to_clean(store, service, helped)
    request = store.get_interaction(request_id, user=USER)
    assert request.ui_surface == {
        "contract": "pawflow.ui-surface.v1",
        "type": "tool_approval",
        "fallback": "confirm",
        "title": "helper wants to run delete_files",
        "tool": "delete_files",
        "agent": "helper",
        "description": "Delete the files matching a pattern.",
        "arguments": {"pattern": "*.tmp"},
        "schema": {
            "type": "object",
            "properties": {"pattern": {"type": "string", "description": "A glob pattern."}},
            "required": ["pattern"],
            "additionalProperties": False,
        },
        "decisions": ["approve", "edit", "reject", "respond"],
    }
