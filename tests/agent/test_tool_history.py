"""Tool calls and their results stay in the history; a wakeup is the result of its call."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

import pytest

from pawflow.agent import AgentSpec, ScriptedModel
from pawflow.agent.models.base import ChatMessage, ModelOutput, ModelRequest
from pawflow.chat.service import ChatService
from pawflow.chat.transcript import TRANSCRIPT, model_messages
from pawflow.demo.agents import DEMO_AGENT, DEMO_SCRIPT, demo_agent
from pawflow.records import Conversation
from pawflow.store import Store
from tests.agent.conftest import USER, say, scheduled

QUESTION = "Which environment should I deploy to?"


class Recording:
    """The demo's scripted model, remembering every request it was sent."""

    def __init__(self) -> None:
        self.inner = ScriptedModel.from_package("pawflow.demo", DEMO_SCRIPT)
        self.name = self.inner.name
        self.requests: list[ModelRequest] = []

    def stream(self, request: ModelRequest) -> Iterator[ModelOutput]:
        self.requests.append(request)
        return self.inner.stream(request)


@pytest.fixture
def store(sqlite_store: Store) -> Store:
    """How the history is rebuilt does not depend on the backend: SQLite is enough here."""
    return sqlite_store


@pytest.fixture
def model() -> Recording:
    return Recording()


@pytest.fixture
def recorded(store: Store, model: Recording, helper: AgentSpec) -> Iterator[ChatService]:
    with ChatService(store, [demo_agent(model), helper], poll_interval=None) as started:
        yield started


@pytest.fixture
def chat(store: Store, recorded: ChatService) -> Conversation:
    conversation = store.create_conversation(USER, "Releases")
    recorded.assign(conversation.id, DEMO_AGENT)
    return conversation


def _asked(store: Store, service: ChatService, conversation_id: str) -> str:
    """Say "deploy"; the id of the request_confirmation call it makes."""
    say(store, service, conversation_id, "deploy")
    with store.unit(write=False) as u:
        reply = u.messages.history(conversation_id, user=USER)[-1]
    assert reply.data is not None
    [asking] = [m for m in reply.data[TRANSCRIPT] if m["role"] == "assistant"]
    [call] = asking["tool_calls"]
    assert call["name"] == "request_confirmation"
    return str(call["id"])


def test_a_turn_stores_its_tool_calls_and_their_results(
    store: Store, recorded: ChatService, chat: Conversation
) -> None:
    call_id = _asked(store, recorded, chat.id)
    with store.unit(write=False) as u:
        reply = u.messages.history(chat.id, user=USER)[-1]
    assert reply.role == "assistant" and reply.data is not None
    transcript = reply.data[TRANSCRIPT]
    assert [m["role"] for m in transcript] == ["assistant", "tool"]
    assert transcript[0]["content"] == "Before deploying, I need to know where to."
    assert json.loads(transcript[0]["tool_calls"][0]["arguments"])["message"] == QUESTION
    assert transcript[1]["tool_call_id"] == call_id
    assert transcript[1]["content"].startswith("pending: the question was published")


def test_the_next_turn_sees_the_calls_and_their_results(
    store: Store, recorded: ChatService, chat: Conversation, model: Recording
) -> None:
    # A rollback waits for approval; the next message's model sees the call and its result.
    say(store, recorded, chat.id, "rollback")
    say(store, recorded, chat.id, "hello")
    messages = model.requests[-1].messages
    assert [m.role for m in messages] == ["system", "user", "assistant", "tool", "user"]
    asking, result = messages[2], messages[3]
    assert asking.content == "Rolling production back needs your approval."
    [call] = asking.tool_calls
    assert call.name == "rollback" and json.loads(call.arguments) == {"environment": "production"}
    assert result.tool_call_id == call.id and "needs the user's approval" in (result.content or "")
    # The old result says "not run", which a script rule answers: only "hello" is matched now.
    with store.unit(write=False) as u:
        assert "I am the demo deployer" in u.messages.history(chat.id, user=USER)[-1].content


def test_a_wakeup_reaches_the_model_as_the_result_of_the_call_that_asked(
    store: Store, recorded: ChatService, chat: Conversation, model: Recording
) -> None:
    call_id = _asked(store, recorded, chat.id)
    request = store.list_interactions(user=USER, status="pending")[0]
    store.respond_interaction(request.id, "staging", user=USER)
    scheduled(recorded, chat.id)
    assert recorded.run_due() == 1

    woken = model.requests[1].messages
    assert [m.role for m in woken] == ["system", "user", "assistant", "assistant", "tool"]
    assert woken[2] == ChatMessage("assistant", "Before deploying, I need to know where to.")
    [call] = woken[3].tool_calls
    assert call.id == call_id and call.name == "request_confirmation"
    assert woken[4] == ChatMessage(
        "tool", '{"status": "answered", "answer": "staging"}', tool_call_id=call_id
    )
    assert not any("[confirmation:" in (m.content or "") for m in woken)
    # People still read the wakeup in the conversation, and the demo goes on as before.
    with store.unit(write=False) as u:
        history = u.messages.history(chat.id, user=USER)
    assert history[2].role == "system" and '"staging"' in history[2].content
    assert re.search(r"Done: deployed build \d+ to staging\.", history[-1].content)

    # The turn after: the call sits where its answer came, then the deploy and its report.
    say(store, recorded, chat.id, "thanks")
    later = model.requests[-1].messages
    assert [m.role for m in later] == [
        "system",
        "user",
        "assistant",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "assistant",
        "user",
    ]
    assert later[3].tool_calls[0].id == call_id and later[4].tool_call_id == call_id
    assert later[5].tool_calls[0].name == "deploy"
    assert later[6].tool_call_id == later[5].tool_calls[0].id
    assert (later[6].content or "").startswith("Deployed build")
    ids = [c.id for m in later for c in m.tool_calls]
    assert len(ids) == len(set(ids))  # every call once, each with one result
    assert sorted(ids) == sorted(m.tool_call_id or "" for m in later if m.role == "tool")


def test_an_answer_after_other_messages_comes_last(
    store: Store, recorded: ChatService, chat: Conversation, model: Recording
) -> None:
    call_id = _asked(store, recorded, chat.id)
    say(store, recorded, chat.id, "how are you?")
    request = store.list_interactions(user=USER, status="pending")[0]
    store.cancel_interaction(request.id, user=USER)
    scheduled(recorded, chat.id)
    assert recorded.run_due() == 1
    woken = model.requests[-1].messages
    assert [m.role for m in woken[-4:]] == ["user", "assistant", "assistant", "tool"]
    assert woken[-1] == ChatMessage("tool", '{"status": "cancelled"}', tool_call_id=call_id)
    with store.unit(write=False) as u:
        reply = u.messages.history(chat.id, user=USER)[-1].content
    assert "the question was cancelled: I have not deployed anything" in reply


def test_an_approved_call_runs_once_in_the_history(
    store: Store, recorded: ChatService, chat: Conversation, model: Recording
) -> None:
    say(store, recorded, chat.id, "rollback")
    request = store.list_interactions(user=USER, status="pending")[0]
    store.respond_interaction(request.id, True, user=USER)
    scheduled(recorded, chat.id)
    assert recorded.run_due() == 1
    woken = model.requests[-1].messages
    [call_id] = {c.id for m in woken for c in m.tool_calls}
    results = [m for m in woken if m.role == "tool"]
    assert [m.tool_call_id for m in results] == [call_id]
    assert (results[0].content or "").startswith("Rolled back")
    assert woken[-1] == results[0]


def test_wakeups_stored_before_calls_were_kept_still_read_as_before(store: Store) -> None:
    conversation = store.create_conversation(USER, "old")
    line = '[agent:deployer] [confirmation:x] The user answered "Go?": true'
    with store.unit() as u:
        old = [
            u.messages.append_message(conversation.id, content="go", role="user", author=USER),
            u.messages.append_message(
                conversation.id, content="I've asked.", role="assistant", author="deployer"
            ),
            u.messages.append_message(
                conversation.id,
                content=line,
                role="system",
                author="agent:deployer",
                data={"wakeup": "w"},
            ),
        ]
    assert model_messages(old) == [
        ChatMessage("user", "go"),
        ChatMessage("assistant", "I've asked."),
        ChatMessage("system", line),
    ]


def test_an_unreadable_transcript_falls_back_to_the_text(store: Store) -> None:
    conversation = store.create_conversation(USER, "odd")
    with store.unit() as u:
        said = u.messages.append_message(
            conversation.id,
            content="Hello.",
            role="assistant",
            author="deployer",
            data={TRANSCRIPT: [{"content": "no role"}]},
        )
    assert model_messages([said]) == [ChatMessage("assistant", "Hello.")]
