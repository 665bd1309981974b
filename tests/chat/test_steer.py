"""The steer and record: answers go to whoever asked in the conversation, and nobody else."""

from __future__ import annotations

import pytest

from pawflow.agent import AgentSpec, ScriptedModel, Tool, ToolContext
from pawflow.chat import STAGES
from pawflow.chat.service import ChatService
from pawflow.clock import FakeClock
from pawflow.store import Store
from tests.chat.conftest import conversation, last_reply, pending, say

PLAN_QUESTION = "Would you like to proceed with this plan?"


@pytest.fixture
def store(sqlite_store: Store) -> Store:
    """The steer does not depend on the backend (the registry tests run on both)."""
    return sqlite_store


def test_a_yes_to_an_offer_reaches_the_agent_that_made_it(
    store: Store, service: ChatService
) -> None:
    session = conversation(store, service)
    say(service, session, "plan the launch")
    asked = pending(service, session)
    assert asked is not None
    assert (asked.owner, asked.kind, asked.origin) == ("planner", "approval", "inferred")
    assert asked.question == PLAN_QUESTION

    turn = say(service, session, "yes go ahead with the plan")
    assert turn.trace == list(STAGES)  # the normal stages ran: curation saw it
    assert turn.intent == "answer" and turn.match is not None and turn.match.answer is True
    author, text = last_reply(store, session)
    assert author == "planner"
    assert (
        text == f'Earlier I asked "{PLAN_QUESTION}" — taking that as yes.\n\nPlanner acting on yes.'
    )
    [closed] = service.sessions.history(session)
    assert (closed.status, closed.reply) == ("answered", "yes go ahead with the plan")
    assert turn.recorded is not None and turn.recorded.data is not None
    assert turn.recorded.data["answered"]["continuation_id"] == closed.id


def test_a_no_is_an_answer_too_and_anything_else_leaves_the_offer_open(
    store: Store, service: ChatService
) -> None:
    session = conversation(store, service)
    say(service, session, "plan the launch")
    say(service, session, "what's the capital of France?")
    assert last_reply(store, session) == ("planner", "Paris.")
    assert pending(service, session) is not None  # an approval outlives a non-answer
    say(service, session, "nope, not now")
    assert last_reply(store, session)[1].endswith("taking that as no.\n\nPlanner acting on no.")
    assert pending(service, session) is None


def test_the_answer_goes_to_the_agent_that_asked_not_the_one_assigned_now(
    store: Store, service: ChatService
) -> None:
    service.chat.register_agent(
        AgentSpec("other", "You are another agent.", ScriptedModel({"default": {"reply": "other"}}))
    )
    session = conversation(store, service)
    say(service, session, "plan the launch")
    service.assign(session, "other")
    say(service, session, "yes")
    assert last_reply(store, session)[0] == "planner"
    say(service, session, "hello")
    assert last_reply(store, session) == ("other", "other")


def test_a_pick_hands_the_item_to_its_owner(store: Store, service: ChatService) -> None:
    session = conversation(store, service)
    say(service, session, "what's in the news?")
    offered = pending(service, session)
    assert offered is not None and offered.kind == "choice"
    assert offered.options == ["Alpha", "Beta", "Gamma", "Delta launches", "Epsilon"]

    turn = say(service, session, "tell me more about the 4th")
    assert turn.match is not None and turn.match.pick == 4
    assert last_reply(store, session) == (
        "planner",
        'Earlier I asked "Want me to open any of these?" — taking that as #4: Delta launches.'
        "\n\nOpening 4: Delta launches.",
    )
    assert [c.status for c in service.sessions.history(session)] == ["answered"]


def test_a_message_that_does_not_pick_withdraws_the_choice(
    store: Store, service: ChatService
) -> None:
    session = conversation(store, service)
    say(service, session, "what's in the news?")
    turn = say(service, session, "what's the capital of France?")
    assert turn.match is None and turn.intent == "chat"
    assert last_reply(store, session) == ("planner", "Paris.")  # answered normally
    assert [c.status for c in service.sessions.history(session)] == ["withdrawn"]
    # The withdrawn list is gone for good: a later "4" is just a message.
    say(service, session, "4")
    assert last_reply(store, session) == ("planner", "Planner here.")


def test_an_inferred_question_matches_the_next_reply_and_regrounds_when_old(
    store: Store, service: ChatService, clock: FakeClock
) -> None:
    session = conversation(store, service)
    say(service, session, "guess which city I'm in")
    asked = pending(service, session)
    assert asked is not None and (asked.kind, asked.question) == (
        "question",
        "Which city are you in?",
    )
    say(service, session, "Lyon")
    assert last_reply(store, session) == ("planner", "Noted Lyon.")

    say(service, session, "which city now")
    clock.advance("2d")
    say(service, session, "Paris")
    assert last_reply(store, session)[1] == (
        'Earlier I asked "Which city are you in?" — you replied "Paris".\n\nNoted Paris.'
    )


def test_a_later_question_supersedes_the_earlier_one(store: Store, service: ChatService) -> None:
    session = conversation(store, service)
    say(service, session, "plan the launch")
    say(service, session, "what's in the news?")
    history = service.sessions.history(session)
    assert [(c.kind, c.status) for c in history] == [
        ("approval", "superseded"),
        ("choice", "pending"),
    ]
    say(service, session, "yes")  # not a pick: the list is withdrawn, the old plan stays closed
    assert "taking that as yes" not in last_reply(store, session)[1]


def test_explicit_beats_inferred(store: Store, service: ChatService) -> None:
    chat = service.chat

    def offer_deploy(ctx: ToolContext) -> str:
        """Offer to deploy, as an explicit approval of the conversation."""
        chat.ask(ctx.conversation_id, "deployer-tool", "approval", "Deploy build 7 now?")
        return "offered"

    chat.register_tool(Tool.from_function(offer_deploy), agent="offerer")
    script = {
        "turns": [
            {"role": "user", "match": "deploy", "tool_calls": [{"name": "offer_deploy"}]},
            {"role": "tool", "match": "offered", "reply": "I can deploy. Anything else?"},
        ]
    }
    chat.register_agent(AgentSpec("offerer", "You offer.", ScriptedModel(script)))
    session = conversation(store, service)
    service.assign(session, "offerer")
    turn = say(service, session, "deploy")
    assert turn.reply == "I can deploy. Anything else?"
    found = pending(service, session)
    assert found is not None
    assert (found.owner, found.origin, found.question) == (
        "deployer-tool",
        "explicit",
        "Deploy build 7 now?",
    )
    assert turn.opened is None
