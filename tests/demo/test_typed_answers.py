"""Through a real ``pawflow serve --demo`` and its HTTP API, a typed reply in the Demo
conversation answers the newest pending request, as its button would (or asks which one
when it could answer several) — with the deployer on
the OpenAI-compatible provider against a local fake model server, on both backends."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pawflow.client import Client
from pawflow.demo.tour import DEMO_TITLE
from pawflow.records import Interaction, Message
from pawflow.testing import eventually, throwaway_postgres
from tests.agent.fake_openai import FakeOpenAI, fake_openai
from tests.chat.brain import CHECKS, QUESTION, deployer_brain, resumes, system_prompts
from tests.conftest import require_postgres
from tests.served import Served

LOCAL = "local"


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def db(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'demo.db'}"
        return
    require_postgres()
    with throwaway_postgres() as url:
        yield url


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with fake_openai() as server:
        yield deployer_brain(server)


@pytest.fixture
def served(db: str, tmp_path: Path, fake: FakeOpenAI) -> Iterator[Served]:
    model = {"PAWFLOW_MODEL_URL": fake.url, "PAWFLOW_MODEL": "fake-deployer"}
    server = Served(db, tmp_path, args=["--demo"], env=model)
    server.start()
    try:
        yield server
    finally:
        server.kill()


class Demo:
    """The Demo conversation, used as a person would: messages in, requests and replies out."""

    def __init__(self, served: Served) -> None:
        self.client = Client(served.url, served.printed("export PAWFLOW_TOKEN="))
        [found] = [c for c in self.client.list_conversations() if c.title == DEMO_TITLE]
        self.id = found.id

    def pending(self) -> list[Interaction]:
        return list(self.client.iter_interactions(status="pending", conversation_id=self.id))

    def say(self, text: str) -> Message:
        return self.client.send_message(self.id, text)

    def replies_after(self, message: Message | None = None) -> list[str]:
        after = 0 if message is None else message.seq
        history = self.client.get_history(self.id, after_seq=after)
        return [m.content for m in history if m.role == "assistant"]

    def reply(self, message: Message, pattern: str) -> str:
        """The first reply after ``message`` that matches, once it is there."""

        def found() -> str | None:
            replies = self.replies_after(message)
            return next((r for r in replies if re.search(pattern, r, re.MULTILINE)), None)

        return eventually(found, timeout=30)

    def asks(self, text: str, question: str) -> Interaction:
        """Say ``text``; the request the deployer asks in return."""
        before = {r.id for r in self.pending()}
        self.say(text)

        def asked() -> Interaction | None:
            return next(
                (r for r in self.pending() if r.id not in before and r.message == question), None
            )

        return eventually(asked, timeout=30)

    def answers(self, typed: str, request: Interaction) -> tuple[Interaction, Message]:
        """Type ``typed``; the request once answered, and the message that answered it."""
        message = self.say(typed)
        record = eventually(
            lambda: (
                (found := self.client.get_interaction(request.id)).status != "pending" and found
            ),
            timeout=30,
        )
        assert isinstance(record, Interaction)
        assert (record.status, record.answered_by) == ("answered", LOCAL)
        assert (record.answered_via, record.answered_seq) == ("chat", message.seq)
        self.reply(message, rf"^Taking \*.+\* for '{re.escape(request.message)}'$")
        return record, message

    def still_pending(self, request: Interaction, chatter: str) -> None:
        message = self.say(chatter)
        self.reply(message, rf"^echo: {re.escape(chatter)}$")  # an ordinary turn
        assert self.client.get_interaction(request.id).status == "pending"


def inspect(db: str, conversation_id: str, directory: Path) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "pawflow", "session", "inspect", conversation_id, "--db", db],
        capture_output=True,
        text=True,
        check=True,
        cwd=directory,
    )
    return done.stdout


@pytest.fixture
def demo(served: Served) -> Iterator[Demo]:
    opened = Demo(served)
    with opened.client:
        yield opened


@pytest.mark.slow
def test_typed_answers_reach_their_request_and_the_requester_resumes_once(
    demo: Demo, fake: FakeOpenAI, db: str, tmp_path: Path
) -> None:
    # The demo's expense flow asks for its form as the server starts: a form is never
    # answered by free text, and "deploy" is an ordinary turn for the deployer.
    eventually(lambda: any(r.kind == "form" for r in demo.pending()), timeout=30)
    # The demo's own confirm is answered in its block first: while it is open, a typed
    # "yes" could answer it as well as the deployer's, and would be asked which one.
    (running,) = [r for r in demo.pending() if r.kind == "confirm"]
    demo.client.respond_interaction(running.id, True)

    deploys: list[tuple[str, str]] = [
        ("production", "production"),
        ("the 2nd one", "production"),
        ("#1 please", "staging"),
    ]
    for number, (typed, taken) in enumerate(deploys):
        asked = demo.asks("deploy the app", QUESTION)
        if number == 0:
            assert "is waiting on deployer: the durable choice request" in inspect(
                db, demo.id, tmp_path
            )
            # Chatter and a pick out of range leave it pending; the model hears it waits.
            demo.still_pending(asked, "how long will it take?")
            assert "A request is still waiting" in system_prompts(fake)[-1]
            demo.still_pending(asked, "the 7th one")
        record, message = demo.answers(typed, asked)
        assert record.answer == taken
        demo.reply(message, rf"^Done: Deployed build \d+ to {taken}\.$")

    confirms: list[tuple[str, str, Any, str]] = [
        ("confirm release", "sounds good, go ahead", True, "Got true."),
        ("confirm hotfix", "nope, not now", False, "Got false."),
        ("run checks", "unit and lint", ["unit", "lint"], 'Got ["unit", "lint"].'),
    ]
    for ask, typed, taken, then in confirms:
        question = CHECKS if ask == "run checks" else f"Ship {ask.split()[1]}?"
        asked = demo.asks(ask, question)
        record, message = demo.answers(typed, asked)
        assert record.answer == taken
        demo.reply(message, rf"^{re.escape(then)}$")

    approval = demo.asks(
        "roll back production", "Allow deployer to run rollback with environment: production?"
    )
    record, message = demo.answers("yes", approval)
    assert record.answer["decision"] == "approve"
    demo.reply(message, r"^Done: Rolled back production to its previous build\.$")

    first = demo.asks("confirm alpha", "Ship alpha?")
    second = demo.asks("confirm beta", "Ship beta?")  # "confirm beta" answers nothing
    # "yes" could answer either: it answers neither, and asks which one.
    said = demo.say("yes")
    demo.reply(said, r"^Which one\? 'yes' could answer 2 requests waiting here: 'Ship alpha\?'")
    assert {demo.client.get_interaction(r.id).status for r in (first, second)} == {"pending"}
    demo.client.respond_interaction(first.id, False)  # in its block
    record, message = demo.answers("yes", second)
    assert record.answer is True
    demo.reply(message, r"^Got true\.$")

    # Each answer resumed its requester once: 8 answers handed back, and one approved call.
    assert sorted(resumes(fake).values()) == [1] * 8
    assert list(resumes(fake, "rollback").values()) == [1]
    deployed = [r for r in demo.replies_after() if "Done: Deployed build" in r]
    assert len(deployed) == 3
