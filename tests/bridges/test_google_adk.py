"""The Google ADK bridge: tool confirmations (plain, or with a payload to fill) and
long-running calls become requests, answers resume the run through the ADK runner on its
SQLite session — its model a local fake OpenAI server, in this process and across real
processes with a ``pawflow serve`` between."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from google.adk.events import Event

from pawflow import InvalidInput, Store
from pawflow.bridges.google_adk import AdkBridge, payload_schema
from tests.agent.fake_openai import FakeOpenAI, completion, fake_openai, reply_json
from tests.bridges import adk_app
from tests.bridges.adk_app import last_text, run_agent, runner_for
from tests.bridges.crossing import app, crash, finish, person_at_server
from tests.bridges.pydantic_app import tool_call

# Loading ADK and LiteLLM, and a run through the runner, take long on a busy machine.
pytestmark = pytest.mark.timeout(300)

REJECTED = '{"error": "This tool call is rejected."}'


@pytest.fixture
def model() -> Iterator[FakeOpenAI]:
    adk_app.effects.clear()
    with fake_openai() as fake:
        yield fake


def refund_and_leave(model: FakeOpenAI) -> None:
    calls = [
        tool_call("call_r", "refund", order="A-1", amount=5),
        tool_call("call_l", "leave", days=3),
    ]
    model.then(reply_json(completion(tool_calls=calls)), reply_json(completion("All done.")))


def tool_replies(model: FakeOpenAI) -> dict[str, str]:
    messages = model.requests[-1]["messages"]
    return {m["tool_call_id"]: m["content"] for m in messages if m["role"] == "tool"}


def bridge_for(
    store: Store, model: FakeOpenAI, sessions: Path
) -> tuple[AdkBridge, list[list[Event]]]:
    finished: list[list[Event]] = []
    runner = runner_for(model.url, sessions)
    return AdkBridge(store, runner, name="support", on_result=finished.append).listen(), finished


def started(store: Store, model: FakeOpenAI, bridge: AdkBridge, sessions: Path) -> Any:
    conversation = store.create_conversation("ana").id
    run_agent(runner_for(model.url, sessions), "Refund A-1, book leave.", "s-1")
    return bridge.ask(
        user_id="customer", session_id="s-1", owner="ana", conversation_id=conversation
    )


def pending(store: Store) -> list[Any]:
    return store.list_interactions(user="ana", status="pending")


def test_a_confirmation_and_a_payload_to_fill_resume_the_run_through_the_runner(
    store: Store, model: FakeOpenAI, tmp_path: Path
) -> None:
    refund_and_leave(model)
    sessions = tmp_path / "sessions.db"
    bridge, finished = bridge_for(store, model, sessions)
    try:
        first = started(store, model, bridge, sessions)
        assert first.kind == "confirm"
        surface = first.ui_surface
        assert (surface["type"], surface["tool"]) == ("tool_approval", "refund")
        assert (surface["arguments"], surface["decisions"]) == (
            {"order": "A-1", "amount": 5},
            ["approve", "reject"],
        )
        # Asking again (a crash between the run and the ask) doubles nothing.
        assert (
            bridge.ask(
                user_id="customer",
                session_id="s-1",
                owner="ana",
                conversation_id=first.conversation_id,
            )
            is None
        )

        store.respond_interaction(first.id, "yes", user="ana")
        [second] = pending(store)
        assert (second.kind, second.message) == ("form", "Approve 3 days off?")
        schema = payload_schema({"approved_days": 3, "note": ""})
        assert second.response_schema["properties"] == schema["properties"]
        assert second.response_schema["required"] == ["confirmed", "approved_days", "note"]
        assert adk_app.effects == []  # nothing ran before both were answered

        answer = {"confirmed": True, "approved_days": 2, "note": "not Friday"}
        store.respond_interaction(second.id, answer, user="ana")
        assert last_text(finished[0]) == "All done."
        assert adk_app.effects == [
            ["refund", "A-1", 5],
            ["leave", {"approved_days": 2, "note": "not Friday"}],
        ]
        assert pending(store) == []
    finally:
        bridge.close()


def test_a_rejected_confirmation_never_runs_the_tool(
    store: Store, model: FakeOpenAI, tmp_path: Path
) -> None:
    refund_and_leave(model)
    sessions = tmp_path / "sessions.db"
    bridge, finished = bridge_for(store, model, sessions)
    try:
        first = started(store, model, bridge, sessions)
        store.respond_interaction(first.id, {"decision": "reject", "reason": "no"}, user="ana")
        [second] = pending(store)
        store.cancel_interaction(second.id, user="ana")  # unconfirmed: refused too
        assert last_text(finished[0]) == "All done."
        assert adk_app.effects == []
        assert tool_replies(model) == {"call_r": REJECTED, "call_l": '{"status": "refused"}'}
    finally:
        bridge.close()


def test_a_long_running_call_asks_what_it_waits_on_and_the_answer_is_its_result(
    store: Store, model: FakeOpenAI, tmp_path: Path
) -> None:
    model.then(
        reply_json(completion(tool_calls=[tool_call("call_t", "ticket", topic="the parcel")])),
        reply_json(completion("A person will answer.")),
        reply_json(completion("Closed.")),
    )
    sessions = tmp_path / "sessions.db"
    bridge, finished = bridge_for(store, model, sessions)
    try:
        asked = started(store, model, bridge, sessions)
        assert (asked.kind, asked.message) == ("text", "What should we do about the parcel?")
        store.respond_interaction(asked.id, "Send another", user="ana")
        assert last_text(finished[0]) == "Closed."
        assert tool_replies(model) == {"call_t": '{"result": "Send another"}'}
    finally:
        bridge.close()


def test_a_payload_names_its_fields_or_is_refused() -> None:
    schema = payload_schema({"days": 2, "paid": True})
    assert schema["properties"]["days"] == {"type": "integer", "default": 2}
    assert schema["required"] == ["confirmed", "days", "paid"]
    given = {"type": "object", "properties": {"days": {"type": "integer"}}}
    assert payload_schema(given)["required"] == ["confirmed"]
    with pytest.raises(InvalidInput, match="JSON Schema"):
        payload_schema({"when": [1, 2]})


# -- across processes ---------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.timeout(600)  # a bound for a busy machine: three processes load the framework
def test_a_run_asked_by_a_process_that_died_is_resumed_by_another(
    db_url: str, tmp_path: Path, model: FakeOpenAI
) -> None:
    refund_and_leave(model)
    with person_at_server(db_url, tmp_path) as ana:
        where = ["--db", db_url, "--model", model.url, "--sessions", str(tmp_path / "s.db")]
        asker = ana.start(
            app(
                "tests.bridges.adk_app",
                "start",
                *where,
                "--owner",
                "ana",
                "--conversation",
                ana.conversation_id,
            )
        )
        first = ana.waiting("refund")
        crash(asker)

        ana.answer_cli(first["id"], "yes")
        worker = ana.start(app("tests.bridges.adk_app", "listen", *where))
        second = ana.waiting("days off")
        ana.answer_http(second["id"], {"confirmed": True, "approved_days": 2, "note": ""})
        assert finish(worker) == {
            "output": "All done.",
            "effects": [["refund", "A-1", 5], ["leave", {"approved_days": 2, "note": ""}]],
        }
        assert ana.pending() == []
