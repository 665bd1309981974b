"""Conversations that read like a person: shortlists withdrawn by whoever answers, the
packaged planner script answering every reading, and the optional reply classifier."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from pawflow.agent import ScriptedModel
from pawflow.agent.models.base import ChatMessage, ModelRequest
from pawflow.chat.classifier import ModelClassifier, enable
from pawflow.chat.matching import Match
from pawflow.chat.service import ChatService
from pawflow.chat.sessions import SessionContinuation
from pawflow.demo import chat as demo_chat
from pawflow.demo.plugins.inbox import OWNER as INBOX
from pawflow.demo.plugins.planner import planner_script
from pawflow.store import Store
from tests.chat.conftest import conversation, install, last_reply, pending, say


@pytest.fixture
def store(sqlite_store: Store) -> Store:
    return sqlite_store


def _shortlist(service: ChatService, session: str) -> SessionContinuation:
    say(service, session, "check my inbox")
    listed = pending(service, session)
    assert listed is not None and (listed.owner, listed.kind) == (INBOX, "choice")
    return listed


def _status(service: ChatService, session: str, continuation_id: str) -> str:
    [found] = [c for c in service.sessions.history(session) if c.id == continuation_id]
    return found.status


def test_an_intercepted_turn_withdraws_the_shortlist(store: Store, service: ChatService) -> None:
    session = conversation(store, service)
    say(service, session, "organize my downloads")
    say(service, session, "yes")  # everything is in place now: organizing asks nothing
    listed = _shortlist(service, session)

    turn = say(service, session, "organize my downloads")
    assert turn.answered_by == "organizer.organize"
    assert last_reply(store, session)[1].startswith("Everything in downloads/ is already")
    assert _status(service, session, listed.id) == "withdrawn"
    assert f"withdrew choice {listed.id}" in turn.notes

    turn = say(service, session, "2")
    assert turn.answered_by is None  # not the inbox: the planner heard a plain "2"
    assert last_reply(store, session)[0] == "planner"
    assert "From:" not in last_reply(store, session)[1]


def test_a_plan_proposed_over_a_shortlist_leaves_no_pick_to_make(
    store: Store, service: ChatService
) -> None:
    session = conversation(store, service)
    listed = _shortlist(service, session)
    say(service, session, "organize my downloads")
    assert _status(service, session, listed.id) != "pending"
    plan = pending(service, session)
    assert plan is not None and plan.kind == "approval"
    say(service, session, "2")
    assert "From:" not in last_reply(store, session)[1]


def test_a_pick_still_opens_the_email(store: Store, service: ChatService) -> None:
    session = conversation(store, service)
    listed = _shortlist(service, session)
    turn = say(service, session, "the second one please")
    assert turn.answered_by == "inbox.open"
    assert "From:" in last_reply(store, session)[1]
    assert _status(service, session, listed.id) == "answered"


# -- the packaged planner script ----------------------------------------------------------


def _played(task: str) -> str:
    request = ModelRequest(messages=(ChatMessage("system", "x"), ChatMessage("user", task)))
    return planner_script().respond(request).text


def test_the_demo_planner_answers_every_reading_of_an_answer(
    store: Store, service: ChatService
) -> None:
    session = conversation(store, service)
    offer = service.sessions.ask(session, "planner", "approval", "Shall I book the room?")
    assert _played(Match(offer, "nope, not now", answer=False).task()).startswith(
        "All right, nothing goes ahead."
    )
    assert _played(Match(offer, "sure 👍", answer=True).task()) == "On it."
    listed = service.sessions.ask(
        session, "planner", "choice", "Which one?", payload=["Alpha", "Beta"]
    )
    assert 'Here is more on "Beta"' in _played(Match(listed, "the second", pick=2).task())
    asked = service.sessions.ask(session, "planner", "question", "Which city?")
    assert _played(Match(asked, "Lyon").task()) == 'Noted: "Lyon".'


def test_nope_not_now_gets_the_refusal_in_the_demo(store: Store, sandbox: Path) -> None:
    with ChatService(store, poll_interval=None) as demo:
        demo_chat.install(demo.chat, "planner", {"model": planner_script()})
        session = conversation(store, demo)
        say(demo, session, "plan the launch")
        say(demo, session, "nope, not now")
        reply = last_reply(store, session)[1]
        assert "taking that as no" in reply
        assert reply.endswith("Tell me what to change and I'll rework the plan.")


# -- the optional classifier --------------------------------------------------------------


class Recording:
    """A classifier that says what it is told to, and remembers what it was asked."""

    def __init__(self, yes_no: bool | None = True, pick: int | None = 2) -> None:
        self.answer = yes_no
        self.item = pick
        self.asked: list[str] = []

    def yes_no(self, question: str, reply: str) -> bool | None:
        self.asked.append(reply)
        return self.answer

    def pick(self, question: str, options: Sequence[str], reply: str) -> int | None:
        self.asked.append(reply)
        return self.item


@pytest.fixture
def classified(store: Store, sandbox: Path) -> Iterator[tuple[ChatService, Recording]]:
    recording = Recording()
    with ChatService(store, poll_interval=None) as started:
        install(started, sandbox)
        enable(started.pipeline, recording)
        yield started, recording


def test_the_classifier_is_off_by_default(store: Store, service: ChatService) -> None:
    session = conversation(store, service)
    say(service, session, "plan the launch")
    turn = say(service, session, "knock yourself out")
    assert turn.match is None and pending(service, session) is not None


def test_the_classifier_reads_only_what_the_tables_do_not_know(
    store: Store, classified: tuple[ChatService, Recording]
) -> None:
    service, recording = classified
    session = conversation(store, service)
    say(service, session, "plan the launch")
    turn = say(service, session, "knock yourself out")
    assert turn.match is not None and turn.match.answer is True
    assert recording.asked == ["knock yourself out"]

    say(service, session, "plan the launch")
    for refused in ("yes but change step 2", "what would step 2 involve?", "yes and no"):
        turn = say(service, session, refused)
        assert turn.match is None, refused  # refused stays refused
    say(service, session, "yes")  # the tables know it: the classifier is not asked
    assert recording.asked == ["knock yourself out"]


def test_the_classifier_picks_only_listed_items_and_never_quantities(
    store: Store, classified: tuple[ChatService, Recording]
) -> None:
    service, recording = classified
    session = conversation(store, service)
    say(service, session, "what's in the news?")
    turn = say(service, session, "the sqlite thing")
    assert turn.match is not None and turn.match.pick == 2
    say(service, session, "what's in the news?")
    turn = say(service, session, "top two")
    assert turn.match is None and recording.asked == ["the sqlite thing"]
    recording.item = 9  # out of range
    say(service, session, "what's in the news?")
    assert say(service, session, "the graph one").match is None


def test_the_classifier_never_matches_for_another_session(
    store: Store, classified: tuple[ChatService, Recording]
) -> None:
    service, recording = classified
    asking = conversation(store, service, "asking")
    other = conversation(store, service, "other")
    say(service, asking, "plan the launch")
    turn = say(service, other, "knock yourself out")
    assert turn.match is None and recording.asked == []
    assert pending(service, asking) is not None


def test_a_model_classifier_reads_the_models_one_word(store: Store) -> None:
    model = ScriptedModel(
        {
            "turns": [
                {"match": "knock yourself out", "reply": "YES"},
                {"match": "not my thing", "reply": "no."},
                {"match": "the sqlite", "reply": "2"},
            ],
            "default": {"reply": "NEITHER"},
        }
    )
    reader = ModelClassifier(model, store)
    assert reader.yes_no("Shall I?", "knock yourself out") is True
    assert reader.yes_no("Shall I?", "not my thing") is False
    assert reader.yes_no("Shall I?", "hmm, let me see") is None
    assert reader.pick("Which?", ["a", "b"], "the sqlite one") == 2
    assert reader.pick("Which?", ["a", "b"], "dunno") is None
