"""Fixtures for chat tests: an ChatService with the planner, the organizer and the inbox."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pawflow.agent import AgentSpec, ScriptedModel
from pawflow.chat import Turn
from pawflow.chat.service import ChatService
from pawflow.chat.sessions import SessionContinuation
from pawflow.demo import chat as demo_chat
from pawflow.demo.chat import SAMPLE_FILES, fill_sandbox
from pawflow.demo.plugins.planner import PLANNER, planner_agent
from pawflow.store import Store

USER = "alice"

# What the tests' planner says; the packaged demo script plays the same parts.
PLANNER_SCRIPT: dict[str, Any] = {
    "name": "planner-test",
    "turns": [
        {
            "role": "tool",
            "match": r"Asked the user: Neo4j or Stardog\?\nUser answered: (?P<db>Neo4j|Stardog)\n",
            "reply": "Setting up {db}.",
        },
        {
            "role": "tool",
            "match": r"Asked the user: (?P<q>[^\n]*)\nUser answered: (?P<reply>[^\n]*)\n",
            "reply": "Dropping the setup. About {reply}: it is sunny.",
        },
        {
            "role": "user",
            "match": r"^\[answer\] [^\n]*\n.*\(read as: (?P<yn>yes|no)\)",
            "reply": "Planner acting on {yn}.",
        },
        {
            "role": "user",
            "match": r'^\[answer\] [\s\S]*The user picked (?P<n>\d+): "(?P<item>[^"]*)"',
            "reply": "Opening {n}: {item}.",
        },
        {
            "role": "user",
            "match": r'^\[answer\] You asked the user: "[^"]*"\nThe user replied: "(?P<r>[^"]*)"',
            "reply": "Noted {r}.",
        },
        {
            "role": "user",
            "match": r"(?i)graph database",
            "tool_calls": [{"name": "ask_user", "arguments": {"question": "Neo4j or Stardog?"}}],
        },
        {
            "role": "user",
            "match": r"(?i)\bplan\b",
            "reply": (
                "Here is a plan:\n1. Draft the announcement\n2. Email the beta users\n"
                "Would you like to proceed with this plan?"
            ),
        },
        {
            "role": "user",
            "match": r"(?i)\bnews\b",
            "reply": (
                "Headlines:\n1. Alpha\n2. Beta\n3. Gamma\n4. Delta launches\n5. Epsilon\n"
                "Want me to open any of these?"
            ),
        },
        {"role": "user", "match": r"(?i)which city", "reply": "Which city are you in?"},
        {"role": "user", "match": r"(?i)capital of france", "reply": "Paris."},
    ],
    "default": {"reply": "Planner here."},
}


def planner_model() -> ScriptedModel:
    return ScriptedModel(PLANNER_SCRIPT)


@pytest.fixture
def sandbox(tmp_path: Path) -> Path:
    folder = tmp_path / "downloads"
    fill_sandbox(folder)
    return folder


def sandbox_state(folder: Path) -> dict[str, str]:
    """Every file under the sandbox, by relative path, with its text."""
    return {
        str(path.relative_to(folder)): path.read_text("utf-8")
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


def install(service: ChatService, sandbox: Path, *, model: Any = None) -> None:
    demo_chat.install(service.chat, "planner", {"model": model or planner_model()})
    demo_chat.install(service.chat, "organizer", {"sandbox": str(sandbox)})
    demo_chat.install(service.chat, "inbox", {})


@pytest.fixture
def service(store: Store, sandbox: Path) -> Iterator[ChatService]:
    with ChatService(store, poll_interval=None) as started:
        install(started, sandbox)
        yield started


def conversation(store: Store, service: ChatService, title: str = "Planner") -> str:
    made = store.create_conversation(USER, title)
    service.assign(made.id, PLANNER)
    return made.id


def say(service: ChatService, conversation_id: str, text: str) -> Turn:
    with service.store.unit() as u:
        message = u.messages.append_message(conversation_id, content=text, role="user", author=USER)
    turn = service.handle_message(service.store, conversation_id, message)
    assert turn is not None
    return turn


def last_reply(store: Store, conversation_id: str) -> tuple[str, str]:
    with store.unit(write=False) as u:
        message = u.messages.history(conversation_id, user=USER)[-1]
    assert message.role == "assistant", message
    return message.author, message.content


def pending(service: ChatService, conversation_id: str) -> SessionContinuation | None:
    return service.sessions.pending(conversation_id)


def planner_spec() -> AgentSpec:
    return planner_agent(planner_model())


__all__ = ["SAMPLE_FILES", "USER"]
