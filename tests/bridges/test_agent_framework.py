"""The Microsoft Agent Framework bridge: function approvals become tool approvals, answers
resume the run on its serialized session — its model a local fake OpenAI server, in this
process and across real processes with a ``pawflow serve`` between."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from agent_framework import AgentResponse, AgentSession

from pawflow import InvalidInput, Store
from pawflow.bridges.agent_framework import AgentFrameworkBridge
from tests.agent.fake_openai import FakeOpenAI, completion, fake_openai, reply_json
from tests.bridges import framework_app
from tests.bridges.crossing import app, crash, finish, person_at_server
from tests.bridges.framework_app import run_agent, support_agent
from tests.bridges.pydantic_app import tool_call

ASK = "Refund order A-1 (5 EUR) and order B-2 (900 EUR)."
REJECTED = "Error: Tool call invocation was rejected by user."


@pytest.fixture
def model() -> Iterator[FakeOpenAI]:
    framework_app.refunds.clear()
    with fake_openai() as fake:
        yield fake


def two_refunds(model: FakeOpenAI, *then: str) -> None:
    calls = [
        tool_call("call_a", "refund", order="A-1", amount=5),
        tool_call("call_b", "refund", order="B-2", amount=900),
    ]
    replies = [reply_json(completion(text)) for text in then or ["All done."]]
    model.then(reply_json(completion(tool_calls=calls)), *replies)


def tool_replies(model: FakeOpenAI) -> dict[str, str]:
    messages = model.requests[-1]["messages"]
    return {m["tool_call_id"]: m["content"] for m in messages if m["role"] == "tool"}


Finished = list[tuple[AgentResponse[Any], AgentSession]]


def bridge_for(store: Store, model: FakeOpenAI) -> tuple[AgentFrameworkBridge, Finished]:
    finished: Finished = []
    bridge = AgentFrameworkBridge(
        store,
        support_agent(model.url),
        name="support",
        on_result=lambda response, session: finished.append((response, session)),
    )
    return bridge.listen(), finished


def started(store: Store, model: FakeOpenAI, bridge: AgentFrameworkBridge) -> Any:
    conversation = store.create_conversation("ana").id
    response, session = run_agent(support_agent(model.url), ASK)
    return bridge.ask(response, session, owner="ana", conversation_id=conversation)


def pending(store: Store) -> list[Any]:
    return store.list_interactions(user="ana", status="pending")


def test_approvals_are_asked_in_turn_and_the_run_resumes_on_its_session(
    store: Store, model: FakeOpenAI
) -> None:
    two_refunds(model)
    bridge, finished = bridge_for(store, model)
    try:
        first = started(store, model, bridge)
        surface = first.ui_surface
        assert (first.kind, surface["type"], surface["tool"]) == (
            "confirm",
            "tool_approval",
            "refund",
        )
        assert surface["arguments"] == {"order": "A-1", "amount": 5}
        assert surface["decisions"] == ["approve", "reject"]  # what the framework's answer holds
        assert surface["schema"]["required"] == ["order", "amount"]

        store.respond_interaction(first.id, {"decision": "approve"}, user="ana")
        [second] = pending(store)
        assert second.ui_surface["arguments"] == {"order": "B-2", "amount": 900}
        assert (model.hits, finished) == (1, [])

        store.respond_interaction(second.id, "no", user="ana")
        [(response, session)] = finished
        assert response.text == "All done."
        assert framework_app.refunds == [("A-1", 5)]
        assert tool_replies(model) == {"call_a": "refunded 5 on A-1", "call_b": REJECTED}
        kept = session.to_dict()["state"]["in_memory"]["messages"]
        assert kept[-1]["contents"][0]["text"] == "All done."  # the session went on
    finally:
        bridge.close()


def test_an_edit_is_refused_where_the_framework_cannot_run_it(
    store: Store, model: FakeOpenAI
) -> None:
    two_refunds(model)
    bridge, _ = bridge_for(store, model)
    try:
        first = started(store, model, bridge)
        with pytest.raises(InvalidInput, match="approve, reject"):
            store.respond_interaction(
                first.id,
                {"decision": "edit", "arguments": {"order": "A-1", "amount": 1}},
                user="ana",
            )
    finally:
        bridge.close()


def test_a_cancelled_approval_rejects_the_call(store: Store, model: FakeOpenAI) -> None:
    two_refunds(model, "Nobody approved.")
    bridge, finished = bridge_for(store, model)
    try:
        first = started(store, model, bridge)
        store.cancel_interaction(first.id, user="ana")
        [second] = pending(store)
        store.respond_interaction(second.id, "yes", user="ana")
        assert finished[0][0].text == "Nobody approved."
        assert framework_app.refunds == [("B-2", 900)]
    finally:
        bridge.close()


def test_a_resumed_run_that_stops_again_is_asked_again(store: Store, model: FakeOpenAI) -> None:
    model.then(
        reply_json(completion(tool_calls=[tool_call("call_a", "refund", order="A-1", amount=5)])),
        reply_json(completion(tool_calls=[tool_call("call_c", "refund", order="C-3", amount=7)])),
        reply_json(completion("Both refunded.")),
    )
    bridge, finished = bridge_for(store, model)
    try:
        first = started(store, model, bridge)
        store.respond_interaction(first.id, "yes", user="ana")
        [again] = pending(store)
        assert again.ui_surface["arguments"] == {"order": "C-3", "amount": 7}
        store.respond_interaction(again.id, "yes", user="ana")
        assert finished[0][0].text == "Both refunded."
        assert framework_app.refunds == [("A-1", 5), ("C-3", 7)]
    finally:
        bridge.close()


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
                "tests.bridges.framework_app",
                "start",
                *where,
                "--owner",
                "ana",
                "--conversation",
                ana.conversation_id,
            )
        )
        first = ana.waiting("A-1")
        crash(asker)

        ana.answer_cli(first["id"], "yes")
        worker = ana.start(app("tests.bridges.framework_app", "listen", *where))
        second = ana.waiting("B-2")
        ana.answer_http(second["id"], {"decision": "reject", "reason": "Over the limit"})
        assert finish(worker) == {"output": "All done.", "refunds": [["A-1", 5]]}
        assert tool_replies(model) == {"call_a": "refunded 5 on A-1", "call_b": REJECTED}
        assert ana.pending() == []
