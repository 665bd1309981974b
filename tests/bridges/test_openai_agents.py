"""The OpenAI Agents SDK bridge: tool approvals become requests, answers approve or reject
and resume the run — its model a local fake OpenAI server, in this process and across real
processes with a ``pawflow serve`` between."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from agents import RunResult

from pawflow import InvalidInput, Store, open_store
from pawflow.bridges.openai_agents import (
    UNANSWERED_MESSAGES,
    OpenAIAgentsBridge,
    approval_decision,
    approval_request,
)
from pawflow.records import Outcome
from pawflow.server.credentials import issue_token
from pawflow.testing import eventually, throwaway_postgres
from tests.agent.fake_openai import FakeOpenAI, completion, fake_openai, reply_json
from tests.bridges import agents_app
from tests.bridges.agents_app import support_agent, tool_call
from tests.served import Served

ROOT = Path(__file__).parents[2]
ASK = "Refund order A-1 (5 EUR) and order B-2 (900 EUR)."


@pytest.fixture
def model() -> Iterator[FakeOpenAI]:
    agents_app.refunds.clear()
    with fake_openai() as fake:
        yield fake


def two_refunds(model: FakeOpenAI) -> None:
    """The model asks for two refunds at once, then sums up what it was told."""
    calls = [tool_call("call_a", "A-1", 5), tool_call("call_b", "B-2", 900)]
    model.then(reply_json(completion(tool_calls=calls)), reply_json(completion("All done.")))


def run_agent(model: FakeOpenAI, text: str) -> RunResult:
    """The application's own run, on a model client of its own."""
    return agents_app.run_agent(support_agent(model.url), text)


def tool_replies(model: FakeOpenAI) -> dict[str, str]:
    """What the run told the model each tool call gave, by call id (the last request)."""
    messages = model.requests[-1]["messages"]
    return {m["tool_call_id"]: m["content"] for m in messages if m["role"] == "tool"}


def pending(store: Store) -> list[Any]:
    return store.list_interactions(user="ana", status="pending")


def test_an_approval_is_a_confirm_or_a_form_with_a_reason(model: FakeOpenAI) -> None:
    two_refunds(model)
    result = run_agent(model, ASK)
    item = result.interruptions[0]
    assert approval_request(item) == {
        "kind": "confirm",
        "title": "Approve refund?",
        "message": 'support wants to call refund with {"order": "A-1", "amount": 5}.',
    }
    with_reason = approval_request(item, ask_reason=True)
    assert with_reason["kind"] == "form"
    assert with_reason["response_schema"]["required"] == ["approve"]


@pytest.mark.parametrize(
    ("outcome", "decision"),
    [
        (Outcome(status="answered", answer=True), (True, None)),
        (Outcome(status="answered", answer=False), (False, None)),
        (Outcome(status="answered", answer={"approve": True, "reason": "fine"}), (True, None)),
        (
            Outcome(status="answered", answer={"approve": False, "reason": "Too much"}),
            (False, "Too much"),
        ),
        (Outcome(status="answered", answer={"approve": False}), (False, None)),
        (Outcome(status="cancelled"), (False, UNANSWERED_MESSAGES["cancelled"])),
        (Outcome(status="expired"), (False, UNANSWERED_MESSAGES["expired"])),
    ],
)
def test_an_answer_reads_as_a_decision(outcome: Outcome, decision: tuple[bool, str | None]) -> None:
    assert approval_decision(outcome) == decision


def test_an_answer_that_is_no_decision_is_refused() -> None:
    with pytest.raises(InvalidInput, match="yes or no"):
        approval_decision(Outcome(status="answered", answer="maybe"))


def bridge_for(
    store: Store, model: FakeOpenAI, **options: Any
) -> tuple[OpenAIAgentsBridge, list[RunResult]]:
    finished: list[RunResult] = []
    bridge = OpenAIAgentsBridge(
        store, support_agent(model.url), name="support", on_result=finished.append, **options
    )
    return bridge.listen(), finished


def test_approvals_are_asked_in_turn_and_the_run_resumes_once_all_are_decided(
    store: Store, model: FakeOpenAI
) -> None:
    two_refunds(model)
    conversation = store.create_conversation("ana").id
    bridge, finished = bridge_for(store, model, ask_reason=True)
    try:
        result = run_agent(model, ASK)
        first = bridge.ask(result, owner="ana", conversation_id=conversation)
        assert first is not None and first.kind == "form"
        assert [r.message for r in pending(store)] == [first.message]
        assert "A-1" in first.message

        store.respond_interaction(first.id, {"approve": True}, user="ana")
        [second] = pending(store)
        assert "B-2" in second.message
        assert (model.hits, finished) == (1, [])  # nothing ran before every call was decided

        store.respond_interaction(
            second.id, {"approve": False, "reason": "Over the limit"}, user="ana"
        )
        [done] = finished
        assert done.final_output == "All done."
        assert agents_app.refunds == [("A-1", 5)]
        assert tool_replies(model) == {"call_a": "refunded 5 on A-1", "call_b": "Over the limit"}
        assert pending(store) == []
    finally:
        bridge.close()


def test_a_refused_confirm_rejects_with_the_sdks_message(store: Store, model: FakeOpenAI) -> None:
    model.then(
        reply_json(completion(tool_calls=[tool_call("call_a", "A-1", 5)])),
        reply_json(completion("Not refunded.")),
    )
    conversation = store.create_conversation("ana").id
    bridge, finished = bridge_for(store, model)
    try:
        asked = bridge.ask(
            run_agent(model, ASK),
            owner="ana",
            conversation_id=conversation,
        )
        assert asked is not None and asked.kind == "confirm"
        store.respond_interaction(asked.id, "no", user="ana")
        assert finished[0].final_output == "Not refunded."
        assert agents_app.refunds == []
        reply = tool_replies(model)["call_a"]
        assert reply and "refunded" not in reply
    finally:
        bridge.close()


def test_a_cancelled_approval_rejects_the_call_saying_so(store: Store, model: FakeOpenAI) -> None:
    model.then(
        reply_json(completion(tool_calls=[tool_call("call_a", "A-1", 5)])),
        reply_json(completion("Nobody approved.")),
    )
    conversation = store.create_conversation("ana").id
    bridge, finished = bridge_for(store, model)
    try:
        asked = bridge.ask(
            run_agent(model, ASK),
            owner="ana",
            conversation_id=conversation,
        )
        assert asked is not None
        store.cancel_interaction(asked.id, user="ana")
        assert finished[0].final_output == "Nobody approved."
        assert tool_replies(model) == {"call_a": UNANSWERED_MESSAGES["cancelled"]}
    finally:
        bridge.close()


def test_a_resumed_run_that_stops_again_is_asked_again(store: Store, model: FakeOpenAI) -> None:
    model.then(
        reply_json(completion(tool_calls=[tool_call("call_a", "A-1", 5)])),
        reply_json(completion(tool_calls=[tool_call("call_c", "C-3", 7)])),
        reply_json(completion("Both refunded.")),
    )
    conversation = store.create_conversation("ana").id
    bridge, finished = bridge_for(store, model)
    try:
        asked = bridge.ask(
            run_agent(model, ASK),
            owner="ana",
            conversation_id=conversation,
        )
        assert asked is not None
        store.respond_interaction(asked.id, "yes", user="ana")
        [again] = pending(store)
        assert "C-3" in again.message and finished == []
        store.respond_interaction(again.id, "yes", user="ana")
        assert finished[0].final_output == "Both refunded."
        assert agents_app.refunds == [("A-1", 5), ("C-3", 7)]
    finally:
        bridge.close()


def test_a_run_that_needs_no_approval_asks_nothing(store: Store, model: FakeOpenAI) -> None:
    model.then(reply_json(completion("Nothing to refund.")))
    conversation = store.create_conversation("ana").id
    bridge = OpenAIAgentsBridge(store, support_agent(model.url), name="support")
    result = run_agent(model, "Hello")
    assert bridge.ask(result, owner="ana", conversation_id=conversation) is None
    assert pending(store) == []


# -- across processes ---------------------------------------------------------------------


@pytest.fixture
def db_url(backend: str, tmp_path: Path) -> Iterator[str]:
    if backend == "postgres":
        with throwaway_postgres() as url:
            yield url
    else:
        yield f"sqlite:///{tmp_path / 'pawflow.db'}"


def agents(command: str, db: str, model: str, *extra: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "tests.bridges.agents_app",
        command,
        "--db",
        db,
        "--model",
        model,
        *extra,
    ]


@pytest.mark.slow
def test_a_run_stopped_in_one_process_is_approved_and_rejected_from_another(
    db_url: str, tmp_path: Path, model: FakeOpenAI
) -> None:
    two_refunds(model)
    with open_store(db_url) as opened:
        token = issue_token(opened, "ana")
    served = Served(db_url, tmp_path)
    served.start()
    try:
        api = httpx.Client(
            base_url=served.url, headers={"Authorization": f"Bearer {token}"}, timeout=30
        )
        conversation = api.post("/api/actions/create_conversation", json={}).json()
        conversation_id = conversation["conversation"]["id"]

        subprocess.run(
            agents("start", db_url, model.url, "--owner", "ana", "--conversation", conversation_id),
            cwd=ROOT,
            check=True,
            timeout=60,
        )

        def pending_requests() -> list[dict[str, Any]]:
            listed = api.post("/api/actions/list_interactions", json={"status": "pending"})
            requests: list[dict[str, Any]] = listed.json()["interactions"]
            return requests

        [first] = pending_requests()
        assert "A-1" in first["message"]
        # Approved over the HTTP API while no process could resume the run.
        approved = api.post(
            "/api/actions/respond_interaction",
            json={"request_id": first["id"], "answer": {"approve": True}},
        )
        assert approved.status_code == 200, approved.text

        # Later, a process that resumes runs starts: it takes the approval, asks the next.
        worker = subprocess.Popen(
            agents("listen", db_url, model.url),
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            second = eventually(
                lambda: [r for r in pending_requests() if "B-2" in r["message"]],
                timeout=60,
                interval=0.1,
            )
            answered = api.post(
                "/api/actions/respond_interaction",
                json={
                    "request_id": second[0]["id"],
                    "answer": {"approve": False, "reason": "Over the limit"},
                },
            )
            assert answered.status_code == 200, answered.text
            out, err = worker.communicate(timeout=90)
        finally:
            if worker.poll() is None:
                worker.kill()
                worker.communicate(timeout=30)
        assert worker.returncode == 0, err
        assert json.loads(out) == {"output": "All done.", "refunds": [["A-1", 5]]}
        assert tool_replies(model) == {"call_a": "refunded 5 on A-1", "call_b": "Over the limit"}
        assert pending_requests() == []
        api.close()
    finally:
        served.kill()
