"""The Pydantic AI bridge: deferred tool calls become requests (tool approvals with their four
decisions, results asked of a person), answers resume the run from its message history — its
model a local fake OpenAI server, in this process and across real processes with a
``pawflow serve`` between."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai.agent import AgentRunResult

from pawflow import InvalidInput, Store
from pawflow.bridges.pydantic_ai import UNANSWERED_RESULTS, PydanticAIBridge
from pawflow.bridges.questions import UNANSWERED_REASONS, decision_of
from pawflow.records import Outcome
from tests.agent.fake_openai import FakeOpenAI, completion, fake_openai, reply_json
from tests.bridges import pydantic_app
from tests.bridges.crossing import app, crash, finish, person_at_server
from tests.bridges.pydantic_app import support_agent, tool_call

ASK = "Refund order A-1 (5 EUR) and order B-2 (900 EUR)."


@pytest.fixture
def model() -> Iterator[FakeOpenAI]:
    pydantic_app.refunds.clear()
    with fake_openai() as fake:
        yield fake


def two_refunds(model: FakeOpenAI) -> None:
    calls = [
        tool_call("call_a", "refund", order="A-1", amount=5),
        tool_call("call_b", "refund", order="B-2", amount=900),
    ]
    model.then(reply_json(completion(tool_calls=calls)), reply_json(completion("All done.")))


def tool_replies(model: FakeOpenAI) -> dict[str, str]:
    """What the run told the model each tool call gave, by call id (the last request)."""
    messages = model.requests[-1]["messages"]
    return {m["tool_call_id"]: m["content"] for m in messages if m["role"] == "tool"}


def bridge_for(
    store: Store, model: FakeOpenAI
) -> tuple[PydanticAIBridge, list[AgentRunResult[Any]]]:
    finished: list[AgentRunResult[Any]] = []
    bridge = PydanticAIBridge(
        store, support_agent(model.url), name="support", on_result=finished.append
    )
    return bridge.listen(), finished


def started(store: Store, model: FakeOpenAI, bridge: PydanticAIBridge) -> Any:
    conversation = store.create_conversation("ana").id
    result = support_agent(model.url).run_sync(ASK)
    return bridge.ask(result, owner="ana", conversation_id=conversation)


def pending(store: Store) -> list[Any]:
    return store.list_interactions(user="ana", status="pending")


def test_an_edited_and_a_rejected_call_resume_the_run_once_both_are_decided(
    store: Store, model: FakeOpenAI
) -> None:
    two_refunds(model)
    bridge, finished = bridge_for(store, model)
    try:
        first = started(store, model, bridge)
        assert first.kind == "confirm"
        surface = first.ui_surface
        assert (surface["type"], surface["tool"], surface["agent"]) == (
            "tool_approval",
            "refund",
            "support",
        )
        assert surface["arguments"] == {"order": "A-1", "amount": 5}
        assert surface["schema"]["required"] == ["order", "amount"]
        assert surface["description"] == "Refund an amount on an order."
        assert first.message == 'support wants to run refund with {"order": "A-1", "amount": 5}.'

        edited = {"decision": "edit", "arguments": {"order": "A-1", "amount": 4}}
        store.respond_interaction(first.id, edited, user="ana")
        [second] = pending(store)
        assert second.ui_surface["arguments"] == {"order": "B-2", "amount": 900}
        assert (model.hits, finished) == (1, [])  # nothing ran before both were decided

        rejected = {"decision": "reject", "reason": "Over the limit"}
        store.respond_interaction(second.id, rejected, user="ana")
        [done] = finished
        assert done.output == "All done."
        assert pydantic_app.refunds == [("A-1", 4)]
        assert tool_replies(model) == {"call_a": "refunded 4 on A-1", "call_b": "Over the limit"}
        assert pending(store) == []
    finally:
        bridge.close()


def test_an_edit_that_does_not_fit_the_tools_schema_is_refused_and_stays_open(
    store: Store, model: FakeOpenAI
) -> None:
    two_refunds(model)
    bridge, _ = bridge_for(store, model)
    try:
        first = started(store, model, bridge)
        with pytest.raises(InvalidInput) as refused:
            store.respond_interaction(
                first.id, {"decision": "edit", "arguments": {"order": "A-1"}}, user="ana"
            )
        assert [e.path for e in refused.value.errors or []] == ["arguments"]
        assert [r.id for r in pending(store)] == [first.id]
    finally:
        bridge.close()


def test_a_response_stands_for_the_result_and_a_deferred_call_asks_for_its_own(
    store: Store, model: FakeOpenAI
) -> None:
    calls = [
        tool_call("call_a", "refund", order="A-1", amount=5),
        tool_call("call_l", "ledger", order="A-1"),
    ]
    model.then(reply_json(completion(tool_calls=calls)), reply_json(completion("Noted.")))
    bridge, finished = bridge_for(store, model)
    try:
        first = started(store, model, bridge)
        store.respond_interaction(
            first.id, {"decision": "respond", "text": "Refunded by hand"}, user="ana"
        )
        [paid] = pending(store)
        assert (paid.kind, paid.message) == ("integer", "How much was paid on A-1?")
        store.respond_interaction(paid.id, "5", user="ana")
        assert finished[0].output == "Noted."
        assert pydantic_app.refunds == []
        assert tool_replies(model) == {"call_a": "Refunded by hand", "call_l": "5"}
    finally:
        bridge.close()


def test_a_cancelled_approval_and_a_cancelled_result_say_so_to_the_model(
    store: Store, model: FakeOpenAI
) -> None:
    calls = [
        tool_call("call_a", "refund", order="A-1", amount=5),
        tool_call("call_l", "ledger", order="A-1"),
    ]
    model.then(reply_json(completion(tool_calls=calls)), reply_json(completion("Nobody.")))
    bridge, finished = bridge_for(store, model)
    try:
        first = started(store, model, bridge)
        store.cancel_interaction(first.id, user="ana")
        [paid] = pending(store)
        store.cancel_interaction(paid.id, user="ana")
        assert finished[0].output == "Nobody."
        assert pydantic_app.refunds == []
        assert tool_replies(model) == {
            "call_a": UNANSWERED_REASONS["cancelled"],
            "call_l": UNANSWERED_RESULTS["cancelled"],
        }
    finally:
        bridge.close()


def test_a_run_that_ends_without_deferred_calls_asks_nothing(
    store: Store, model: FakeOpenAI
) -> None:
    model.then(reply_json(completion("Nothing to refund.")))
    bridge = PydanticAIBridge(store, support_agent(model.url), name="support")
    assert started(store, model, bridge) is None
    assert pending(store) == []


def test_an_answer_that_is_no_decision_is_refused() -> None:
    assert decision_of(Outcome(status="expired")).reason == UNANSWERED_REASONS["expired"]
    with pytest.raises(InvalidInput, match="needs a decision"):
        decision_of(Outcome(status="answered", answer=True))


# -- across processes ---------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.timeout(600)  # a bound for a busy machine: three processes load the framework
def test_a_run_asked_by_a_process_that_died_is_resumed_by_another(
    db_url: str, tmp_path: Path, model: FakeOpenAI
) -> None:
    two_refunds(model)
    with person_at_server(db_url, tmp_path) as ana:
        where = ["--db", db_url, "--model", model.url]
        asker = ana.start(
            app(
                "tests.bridges.pydantic_app",
                "start",
                *where,
                "--owner",
                "ana",
                "--conversation",
                ana.conversation_id,
            )
        )
        first = ana.waiting("A-1")
        crash(asker)  # the process that asked dies before anyone answers

        ana.answer_cli(first["id"], "--edit", '{"order": "A-1", "amount": 4}')
        worker = ana.start(app("tests.bridges.pydantic_app", "listen", *where))
        second = ana.waiting("B-2")
        ana.answer_http(second["id"], {"decision": "reject", "reason": "Over the limit"})
        assert finish(worker) == {"output": "All done.", "refunds": [["A-1", 4]]}
        assert tool_replies(model) == {"call_a": "refunded 4 on A-1", "call_b": "Over the limit"}
        assert ana.pending() == []
