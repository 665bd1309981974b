"""Fixtures for agent tests: a started ChatService (no poller thread) and its agents."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from pawflow.agent import AgentSpec, ScriptedModel, Tool
from pawflow.chat.service import ChatService
from pawflow.demo.agents import DEMO_AGENT, DEMO_SCRIPT, demo_agent
from pawflow.records import Conversation, Message
from pawflow.store import Store
from pawflow.store.runtime.turns import Wakeup
from pawflow.testing import eventually

USER = "alice"

# A second agent for what the demo does not show: quick answers, approvals of a
# consequential tool, plain chatter.
HELPER_SCRIPT: dict[str, Any] = {
    "name": "helper-test",
    "turns": [
        {
            "role": "user",
            "match": r"^quick",
            "tool_calls": [
                {
                    "name": "request_confirmation",
                    "arguments": {"message": "Proceed?", "mode": "confirm", "wait_seconds": 30},
                }
            ],
        },
        {
            "role": "user",
            "match": r"^brief",
            "tool_calls": [
                {
                    "name": "request_confirmation",
                    "arguments": {"message": "Proceed?", "wait_seconds": 0.05},
                }
            ],
        },
        {
            "role": "tool",
            "match": r'The user answered "Proceed\?": (?P<a>true|false)',
            "reply": "Got it right away: {a}.",
        },
        {
            "role": "tool",
            "match": r'^\{"status": "answered", "answer": (?P<a>true|false)\}$',
            "reply": "Got it later: {a}.",
        },
        {
            "role": "user",
            "match": r"^clean",
            "reply": "Cleaning needs your approval.",
            "tool_calls": [{"name": "delete_files", "arguments": {"pattern": "*.tmp"}}],
        },
        {"role": "tool", "match": r"^deleted (?P<n>\d+)", "reply": "Deleted {n} files."},
        {"role": "tool", "match": r"not run", "reply": "Nothing was deleted."},
    ],
    "default": {"reply": "Hello from the helper."},
}


class Deleter:
    """A consequential tool that remembers every time it really ran."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def delete_files(self, pattern: str) -> str:
        """Delete the files matching a pattern.

        Args:
            pattern: A glob pattern.
        """
        self.calls.append(pattern)
        return f"deleted 3 files matching {pattern}"


@pytest.fixture
def deleter() -> Deleter:
    return Deleter()


@pytest.fixture
def helper(deleter: Deleter) -> AgentSpec:
    return AgentSpec(
        name="helper",
        instructions="You help.",
        model=ScriptedModel(HELPER_SCRIPT),
        tools=[Tool.from_function(deleter.delete_files, consequential=True)],
    )


@pytest.fixture
def deployer() -> AgentSpec:
    return demo_agent(ScriptedModel.from_package("pawflow.demo", DEMO_SCRIPT))


@pytest.fixture
def service(store: Store, deployer: AgentSpec, helper: AgentSpec) -> Iterator[ChatService]:
    with ChatService(store, [deployer, helper], poll_interval=None) as started:
        yield started


@pytest.fixture
def conversation(store: Store, service: ChatService) -> Conversation:
    conversation = store.create_conversation(USER, "Releases")
    service.assign(conversation.id, DEMO_AGENT)
    return conversation


def say(store: Store, service: ChatService, conversation_id: str, text: str) -> Message:
    """Post a user message and run the turn it starts; the message stored."""
    with store.unit() as u:
        message = u.messages.append_message(conversation_id, content=text, role="user", author=USER)
    service.handle_message(store, conversation_id, message)
    return message


def scheduled(service: ChatService, conversation_id: str, count: int = 1) -> list[Wakeup]:
    """The conversation's queued wakeups, once ``count`` exist.

    On PostgreSQL the delivery that writes them may run on the store's listener thread,
    just after the answering transaction.
    """

    def ready() -> list[Wakeup] | None:
        found = [w for w in service.wakeups_of(conversation_id) if w.status == "queued"]
        return found if len(found) >= count else None

    return eventually(ready)


def history(store: Store, conversation_id: str) -> list[tuple[str, str, str]]:
    with store.unit(write=False) as u:
        return [
            (m.role, m.author, m.content) for m in u.messages.history(conversation_id, user=USER)
        ]
