"""A typed reply answers the durable request its conversation waits on — on both backends,
with the agent on the OpenAI-compatible provider against a local fake model server."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest

from pawflow.agent.models.openai import OpenAIChatModel
from pawflow.chat import InterceptSpec, Turn
from pawflow.chat.inspect import describe_session
from pawflow.chat.service import ChatService
from pawflow.chat.sessions import SessionRegistry
from pawflow.clock import FakeClock
from pawflow.demo.agents import DEMO_AGENT, demo_agent
from pawflow.flow import FlowFile, FlowService
from pawflow.records import Interaction, Message
from pawflow.store import Question, Store
from pawflow.store.runtime import turns
from pawflow.testing import eventually
from tests.agent.fake_openai import FakeOpenAI, fake_openai
from tests.chat.brain import CHECKS, QUESTION, deployer_brain, resumes, system_prompts
from tests.flow.conftest import deploy
from tests.logs import tracebacks

USER = "alice"
API = {"type": "api", "name": "tour"}


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with fake_openai() as server:
        yield deployer_brain(server)


def deployer(fake: FakeOpenAI) -> Any:
    return demo_agent(OpenAIChatModel("fake-deployer", url=fake.url, max_retries=0))


@pytest.fixture
def service(store: Store, fake: FakeOpenAI) -> Iterator[ChatService]:
    with ChatService(store, [deployer(fake)], poll_interval=None) as started:
        yield started


@pytest.fixture
def conversation(store: Store, service: ChatService) -> str:
    conversation = store.create_conversation(USER, "Releases")
    service.assign(conversation.id, DEMO_AGENT)
    return conversation.id


def say(service: ChatService, conversation_id: str, text: str) -> tuple[Message, Turn]:
    with service.store.unit() as u:
        message = u.messages.append_message(conversation_id, content=text, role="user", author=USER)
    turn = service.handle_message(service.store, conversation_id, message)
    assert turn is not None
    return message, turn


def pending(store: Store, conversation_id: str) -> list[Interaction]:
    return store.list_interactions(user=USER, status="pending", conversation_id=conversation_id)


def newest(store: Store, conversation_id: str) -> Interaction:
    return pending(store, conversation_id)[-1]


def wake(service: ChatService) -> None:
    """Run the wakeup the answer scheduled (on PostgreSQL it may be written a moment later)."""
    eventually(lambda: service.run_due() or None)


def replies(store: Store, conversation_id: str) -> list[str]:
    with store.unit(write=False) as u:
        return [
            m.content
            for m in u.messages.history(conversation_id, user=USER)
            if m.role == "assistant"
        ]


# -- the deployer's own questions ---------------------------------------------------------


@pytest.mark.parametrize(
    ("typed", "taken"),
    [
        ("production", "production"),
        ("the 2nd one", "production"),
        ("#1 please", "staging"),
        ("Staging.", "staging"),
        ("let's deploy to production", "production"),
    ],
)
def test_a_typed_pick_answers_the_request_and_the_agent_resumes_once(
    store: Store,
    service: ChatService,
    conversation: str,
    fake: FakeOpenAI,
    typed: str,
    taken: str,
) -> None:
    say(service, conversation, "deploy the app")
    asked = newest(store, conversation)
    assert (asked.kind, asked.message) == ("choice", QUESTION)
    assert SessionRegistry(store).pending(conversation).id == asked.id  # type: ignore[union-attr]

    message, turn = say(service, conversation, typed)

    assert turn.trace == ["intercept", "classify"] and turn.done
    assert turn.reply == f"Taking *{taken}* for '{QUESTION}'"
    record = store.get_interaction(asked.id, user=USER)
    assert (record.status, record.answer, record.answered_by) == ("answered", taken, USER)
    assert (record.answered_via, record.answered_seq) == ("chat", message.seq)
    with store.unit(write=False) as u:
        said = u.messages.history(conversation, user=USER)[-1]
    assert (said.role, said.author, said.content) == ("assistant", DEMO_AGENT, turn.reply)
    assert said.data is not None and said.data["answered"]["request_id"] == asked.id

    wake(service)
    assert list(resumes(fake).values()) == [1]  # the agent was handed the answer once
    assert re.search(rf"Done: Deployed build \d+ to {taken}\.", replies(store, conversation)[-1])
    assert service.run_due() == 0


def test_chatter_and_out_of_range_picks_leave_it_pending(
    store: Store, service: ChatService, conversation: str, fake: FakeOpenAI
) -> None:
    say(service, conversation, "deploy")
    asked = newest(store, conversation)

    for chatter in ("how long does it take?", "the 7th one", "not production", "yes"):
        _, turn = say(service, conversation, chatter)
        assert turn.trace[-1] == "record"  # an ordinary turn of the agent
        assert store.get_interaction(asked.id, user=USER).status == "pending"
        # The agent's model is told the request still waits.
        assert "A request is still waiting" in system_prompts(fake)[-1]
        assert QUESTION in system_prompts(fake)[-1]
    assert replies(store, conversation)[-1] == "echo: yes"
    # Nothing was inferred over it, nothing withdrew it: it is still what the chat waits on.
    waiting = SessionRegistry(store).pending(conversation)
    assert waiting is not None and waiting.id == asked.id and waiting.kind == "request"
    assert SessionRegistry(store).history(conversation) == []

    _, turn = say(service, conversation, "production")
    assert store.get_interaction(asked.id, user=USER).answer == "production"


def test_yes_with_two_requests_pending_asks_which_one_and_takes_neither(
    store: Store, service: ChatService, conversation: str, clock: FakeClock
) -> None:
    say(service, conversation, "confirm alpha")
    clock.advance("1s")
    say(service, conversation, "confirm beta")  # not a yes or a no: the agent asks again
    first, second = pending(store, conversation)
    assert (first.message, second.message) == ("Ship alpha?", "Ship beta?")

    _, turn = say(service, conversation, "yes")

    assert turn.reply == (
        "Which one? 'yes' could answer 2 requests waiting here: 'Ship alpha?' and"
        " 'Ship beta?'. Nothing was taken: answer the one you mean with its buttons."
    )
    with store.unit(write=False) as u:
        said = u.messages.history(conversation, user=USER)[-1]
    assert said.data is not None and said.data["which"] == {
        "request_ids": [first.id, second.id],
        "text": "yes",
    }
    assert [r.status for r in pending(store, conversation)] == ["pending", "pending"]

    # Once one is answered in its block, "yes" can mean only the other.
    store.respond_interaction(second.id, False, user=USER)
    _, turn = say(service, conversation, "yes")
    assert turn.reply == "Taking *yes* for 'Ship alpha?'"
    assert store.get_interaction(first.id, user=USER).answer is True


def test_a_typed_answer_that_fits_one_request_of_several_takes_it_signed_by_a_name(
    store: Store, service: ChatService
) -> None:
    conversation = store.create_conversation(USER, "Tour").id
    card = {
        "contract": "pawflow.ui-surface.v1",
        "type": "card",
        "fallback": "confirm",
        "title": "Merge?",
        "actions": [{"label": "Merge", "value": True}, {"label": "Wait", "value": False}],
    }
    store.ask(
        Question(USER, conversation, "choice", "Which region?", requester=API, options=["eu", "us"])
    )
    update = "Merge the dependency update?"
    merge = store.ask(
        Question(USER, conversation, "confirm", update, requester=API, ui_surface=card)
    ).interaction

    _, turn = say(service, conversation, "merge")

    assert turn.reply == "Taking *Merge* for 'Merge the dependency update?'"
    assert store.get_interaction(merge.id, user=USER).answer is True
    with store.unit(write=False) as u:
        assert u.messages.history(conversation, user=USER)[-1].author == "tour"


@pytest.mark.parametrize(("typed", "ran"), [("yes", True), ("nope, not now", False)])
def test_a_tool_approval_answered_by_typing(
    store: Store,
    service: ChatService,
    conversation: str,
    fake: FakeOpenAI,
    typed: str,
    ran: bool,
) -> None:
    say(service, conversation, "roll back production")
    approval = newest(store, conversation)
    assert approval.title == "Approval needed" and approval.kind == "confirm"

    _, turn = say(service, conversation, typed)

    assert turn.reply == f"Taking *{'yes' if ran else 'no'}* for '{approval.message}'"
    decided = store.get_interaction(approval.id, user=USER).answer
    assert decided["decision"] == ("approve" if ran else "reject")
    assert decided["by"] == USER
    wake(service)
    rolled_back = [r for r in replies(store, conversation) if "Rolled back production" in r]
    assert len(rolled_back) == (1 if ran else 0)
    assert list(resumes(fake, "rollback").values()) == [1]  # the agent goes on once
    assert ("Rejected by alice" in replies(store, conversation)[-1]) is not ran


@pytest.mark.parametrize(
    ("typed", "taken"), [("unit and lint", ["unit", "lint"]), ("1, 3", ["unit", "e2e"])]
)
def test_several_picks_answer_a_multi(
    store: Store,
    service: ChatService,
    conversation: str,
    fake: FakeOpenAI,
    typed: str,
    taken: list[str],
) -> None:
    say(service, conversation, "run checks")
    asked = newest(store, conversation)
    assert asked.message == CHECKS

    _, turn = say(service, conversation, typed)

    assert turn.reply == f"Taking *{taken[0]}* and *{taken[1]}* for '{CHECKS}'"
    assert store.get_interaction(asked.id, user=USER).answer == taken
    wake(service)
    assert replies(store, conversation)[-1] == f'Got ["{taken[0]}", "{taken[1]}"].'
    assert list(resumes(fake).values()) == [1]


# -- every kind, asked by anyone in the conversation ----------------------------------------

KINDS: list[tuple[str, dict[str, Any], str, Any]] = [
    ("confirm", {}, "sure, go ahead", True),
    ("confirm", {}, "no thanks", False),
    (
        "choice",
        {"options": [{"value": "pdf", "label": "PDF"}, {"value": "html", "label": "Web page"}]},
        "web page",
        "html",
    ),
    ("choice", {"options": ["pdf", "html", "csv"]}, "the last one", "csv"),
    ("multi", {"options": ["support", "sales", "legal"]}, "sales, support", ["support", "sales"]),
    ("integer", {}, "7", 7),
    ("decimal", {}, "12.50", "12.5"),
    ("decimal", {}, "0.1", "0.1"),
    ("date", {}, "2026-05-01", "2026-05-01"),
    ("datetime", {}, "2026-05-01T10:00+02:00", "2026-05-01T08:00:00Z"),
]


@pytest.mark.parametrize(("kind", "extra", "typed", "taken"), KINDS)
def test_every_kind_reads_its_answer_from_a_message(
    store: Store,
    service: ChatService,
    kind: str,
    extra: dict[str, Any],
    typed: str,
    taken: Any,
) -> None:
    # A conversation without an agent: the answer needs nobody but the pipeline.
    conversation = store.create_conversation(USER, "Questions").id
    asked = store.ask(
        Question(USER, conversation, kind, "Well?", requester=API, **extra)
    ).interaction

    message, turn = say(service, conversation, typed)

    record = store.get_interaction(asked.id, user=USER)
    assert (record.status, record.answer) == ("answered", taken)
    assert (record.answered_via, record.answered_seq) == ("chat", message.seq)
    assert turn.reply is not None and turn.reply.startswith("Taking *")
    with store.unit(write=False) as u:
        assert u.messages.history(conversation, user=USER)[-1].author == "tour"


@pytest.mark.parametrize(
    ("kind", "extra"),
    [
        ("text", {}),
        ("multiline", {}),
        ("file", {}),
        ("form", {"response_schema": {"type": "object", "properties": {"n": {"type": "string"}}}}),
    ],
)
def test_free_text_never_answers_a_text_multiline_file_or_form(
    store: Store, service: ChatService, conversation: str, kind: str, extra: dict[str, Any]
) -> None:
    asked = store.ask(
        Question(USER, conversation, kind, "Tell me", requester=API, **extra)
    ).interaction
    for typed in ("production", "yes", "42", "2026-05-01"):
        _, turn = say(service, conversation, typed)
        assert turn.trace[-1] == "record"
    assert store.get_interaction(asked.id, user=USER).status == "pending"


def test_a_typed_answer_the_request_refuses_says_why_and_leaves_it_pending(
    store: Store, service: ChatService, conversation: str
) -> None:
    asked = store.ask(
        Question(
            USER,
            conversation,
            "integer",
            "How many replicas?",
            response_schema={"type": "integer", "minimum": 1, "maximum": 10},
            requester=API,
        )
    ).interaction
    _, turn = say(service, conversation, "42")
    assert turn.trace == ["intercept", "classify"]
    assert turn.reply is not None
    assert turn.reply.startswith("That does not answer 'How many replicas?'")
    assert "10" in turn.reply
    assert store.get_interaction(asked.id, user=USER).status == "pending"
    say(service, conversation, "4")
    assert store.get_interaction(asked.id, user=USER).answer == 4


def test_a_request_answered_meanwhile_is_not_answered_twice(
    store: Store, service: ChatService, conversation: str
) -> None:
    say(service, conversation, "confirm gamma")
    asked = newest(store, conversation)
    with store.unit() as u:
        message = u.messages.append_message(conversation, content="yes", role="user", author=USER)
    turn = Turn.for_message(store, message)
    service.pipeline.stage("intercept")(turn)  # what the turn saw as it began
    store.respond_interaction(asked.id, False, user=USER, via="button")
    service.pipeline.stage("classify")(turn)
    assert turn.done and turn.reply == "'Ship gamma?' was answered already: nothing was taken."
    record = store.get_interaction(asked.id, user=USER)
    assert (record.answer, record.answered_via) == (False, "button")


# -- flows, intercepts, continuations ----------------------------------------------------------

FLOW = """
name: approve-release
tasks:
  ask:
    type: requestConfirmation
    properties:
      message: "Release ${version}?"
    next: wait
  wait:
    type: durableWait
    properties:
      timeout: 2d
    next:
      success: route
  route:
    type: routeOnAttribute
    properties:
      routes:
        approved: {attribute: durable.wait.value, path: $.answer, equals: true}
        rejected: {attribute: durable.wait.value, path: $.answer, equals: false}
"""


def test_a_flows_request_is_answered_by_typing_and_the_flow_goes_on(
    store: Store, service: ChatService, conversation: str
) -> None:
    flows = FlowService(store, reconcile_interval=None)
    flows.start()
    try:
        flow = deploy(flows, FLOW, conversation, user=USER)
        flow.instance.inject(FlowFile.create(attributes={"version": "2.4"}))
        asked = eventually(lambda: pending(store, conversation))[0]
        assert asked.requester.type == "flow"

        _, turn = say(service, conversation, "sounds good, go ahead")

        assert turn.reply == "Taking *yes* for 'Release 2.4?'"
        with store.unit(write=False) as u:
            assert u.messages.history(conversation, user=USER)[-1].author == "approve-release"
        [ending] = flow.wait_endings(1, "route", "approved")
        assert ending.flowfile.attributes["confirmation.request_id"] == asked.id
    finally:
        flows.stop()


def test_intercepts_that_resolve_confirmations_stay_shielded_while_a_request_waits(
    store: Store, fake: FakeOpenAI
) -> None:
    heard: list[str] = []

    def approver(turn: Turn) -> str | None:
        heard.append(turn.text)
        return "the approver took it"

    def greeter(turn: Turn) -> str | None:
        return "hello there" if turn.text == "hi" else None

    intercepts = [
        InterceptSpec("approver", approver, resolves_confirmation=True),
        InterceptSpec("greeter", greeter),
    ]
    with ChatService(store, [deployer(fake)], poll_interval=None, intercepts=intercepts) as chat:
        conversation = store.create_conversation(USER, "Shielded").id
        asked = store.ask(Question(USER, conversation, "confirm", "Go?", requester=API)).interaction
        _, turn = say(chat, conversation, "hi")
        assert turn.reply == "hello there"  # resolving nothing, never shielded
        _, turn = say(chat, conversation, "yes")
        assert heard == [] and "shielded approver" in turn.notes
        assert store.get_interaction(asked.id, user=USER).answer is True
        _, turn = say(chat, conversation, "yes")  # nothing waits any more
        assert heard == ["yes"] and turn.reply == "the approver took it"


def test_the_newest_of_a_continuation_and_a_request_is_what_the_chat_waits_on(
    store: Store, conversation: str, clock: FakeClock
) -> None:
    sessions = SessionRegistry(store)
    older = sessions.ask(conversation, "planner", "approval", "Proceed with the plan?")
    clock.advance("1s")
    request = store.ask(Question(USER, conversation, "confirm", "Go?", requester=API)).interaction
    waiting = sessions.pending(conversation)
    assert waiting is not None and (waiting.kind, waiting.id) == ("request", request.id)
    assert waiting.owner == "api:tour" and waiting.request == request
    # The newer request superseded the continuation, as a second continuation would.
    assert sessions.get(older.id).status == "superseded"  # type: ignore[union-attr]

    clock.advance("1s")
    newer = sessions.ask(conversation, "planner", "question", "Which city?")
    assert sessions.pending(conversation) == newer
    sessions.withdraw(newer.id)
    assert sessions.pending(conversation).id == request.id  # type: ignore[union-attr]
    assert store.get_interaction(request.id, user=USER).status == "pending"

    clock.advance(timedelta(days=1))
    store.respond_interaction(request.id, True, user=USER)
    assert sessions.pending(conversation) is None


def test_session_inspect_says_the_conversation_waits_on_the_request(
    store: Store, service: ChatService, conversation: str
) -> None:
    say(service, conversation, "deploy")
    asked = newest(store, conversation)
    lines = describe_session(store, conversation)
    assert lines[1].startswith(
        f"this conversation is waiting on {DEMO_AGENT}: the durable choice request {asked.id},"
        f' "{QUESTION}"'
    )
    assert lines[2:4] == ["  1. staging", "  2. production"]


def test_the_answer_and_the_reply_are_one_transaction(
    store: Store, service: ChatService, conversation: str, clock: FakeClock
) -> None:
    say(service, conversation, "confirm delta")
    asked = newest(store, conversation)
    with store.unit() as u:
        message = u.messages.append_message(conversation, content="yes", role="user", author=USER)
    with store.transaction() as tx:
        turn_id = turns.enqueue(
            tx,
            conversation,
            agent=DEMO_AGENT,
            message_id=message.id,
            now=clock.now(),
        )
    with store.unit() as u:
        stale = u.turns.claim(turn_id, "process-a", timedelta(seconds=5))
    assert stale is not None
    clock.advance("10s")  # its lease ran out: another process takes the turn over
    with store.unit() as u:
        assert u.turns.claim(turn_id, "process-b", timedelta(seconds=5)) is not None

    turn = Turn.for_message(store, message)
    turn.key = stale.key
    service.pipeline.run(turn)

    assert turn.done and turn.recorded is None
    assert store.get_interaction(asked.id, user=USER).status == "pending"  # undone with it
    with store.unit(write=False) as u:
        assert u.messages.history(conversation, user=USER)[-1].id == message.id


def test_a_typed_answer_to_a_request_that_waits_for_others_is_not_taken(
    store: Store, service: ChatService
) -> None:
    conversation = store.create_conversation(USER, "Questions").id
    asked = store.ask(
        Question(
            USER, conversation, "confirm", "Ship?", requester=API, policy={"assignees": ["ada"]}
        )
    ).interaction
    _, turn = say(service, conversation, "yes")
    assert store.get_interaction(asked.id, user=USER).status == "pending"
    assert (
        turn.reply
        == "'Ship?' is not yours to answer (this request waits for ada): nothing was taken."
    )


def test_a_second_typed_vote_is_not_taken_and_says_which_vote_stands(
    store: Store, service: ChatService, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    conversation = store.create_conversation(USER, "Questions").id
    policy = {"assignees": [USER, "ada"], "required_approvals": 2}
    asked = store.ask(
        Question(USER, conversation, "confirm", "Ship?", requester=API, policy=policy)
    ).interaction
    _, first = say(service, conversation, "yes")
    assert first.reply == "Your vote on 'Ship?' was counted; the request waits for more approvals."
    assert store.get_interaction(asked.id, user=USER).status == "pending"
    _, again = say(service, conversation, "no")
    assert (
        again.reply == f"'Ship?': {USER} has already voted yes: the vote stands; nothing was taken."
    )
    with store.unit(write=False) as u:
        details = u.accountability.details(asked.id, user=USER)
    assert details["policy"]["progress"] == "1 of 2 approvals"
    assert tracebacks(caplog.records) == []
