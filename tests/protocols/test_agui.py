"""The AG-UI face, read and written with the protocol's own Python types (``ag_ui.core``)."""

from __future__ import annotations

import threading
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest
from ag_ui.core import (
    CustomEvent,
    Event,
    ResumeEntry,
    RunAgentInput,
    RunErrorEvent,
    RunFinishedEvent,
    RunFinishedInterruptOutcome,
    RunFinishedSuccessOutcome,
    RunStartedEvent,
    TextMessageContentEvent,
    UserMessage,
)
from pydantic import TypeAdapter

from pawflow.agui import mount as mount_agui
from pawflow.chat.service import ChatService
from pawflow.demo.agents import demo_agent
from pawflow.server.credentials import revoke_tokens
from pawflow.server.testing import live_server
from pawflow.store import Store
from pawflow.testing import eventually, temporary_store
from tests.protocols.conftest import Server
from tests.server.conftest import QUIET

pytestmark = pytest.mark.slow
EVENTS: TypeAdapter[Any] = TypeAdapter(Event)


def run(server: Server, user: str, run_input: RunAgentInput, agent: str = "deployer") -> list[Any]:
    """One run: the input posted, its SSE stream read into typed events."""
    body = run_input.model_dump_json(by_alias=True, exclude_none=True)
    headers = {
        "Authorization": f"Bearer {server.tokens[user]}",
        "Content-Type": "application/json",
        "Accept": "text/event-stream",
    }
    events = []
    with httpx.stream(
        "POST", f"{server.url}/agui/{agent}", content=body, headers=headers, timeout=60
    ) as response:
        assert response.status_code == 200, response.read()
        assert response.headers["content-type"].startswith("text/event-stream")
        for line in response.iter_lines():
            if line.startswith("data: "):
                events.append(EVENTS.validate_json(line.removeprefix("data: ")))
    return events


def said(events: list[Any]) -> str:
    return "".join(e.delta for e in events if isinstance(e, TextMessageContentEvent))


def start(thread: str, text: str) -> RunAgentInput:
    message = UserMessage(id=str(uuid.uuid4()), role="user", content=text)
    return RunAgentInput(thread_id=thread, run_id=str(uuid.uuid4()), messages=[message])


def resume(thread: str, *entries: ResumeEntry) -> RunAgentInput:
    return RunAgentInput(
        thread_id=thread, run_id=str(uuid.uuid4()), messages=[], resume=list(entries)
    )


def interrupted(server: Server, user: str, thread: str) -> tuple[list[Any], Any]:
    events = run(server, user, start(thread, "deploy please"))
    assert isinstance(events[0], RunStartedEvent)
    finished = events[-1]
    assert isinstance(finished, RunFinishedEvent)
    assert isinstance(finished.outcome, RunFinishedInterruptOutcome)
    [interrupt] = finished.outcome.interrupts
    return events, interrupt


def test_a_question_ends_the_run_with_an_interrupt_and_its_resume_carries_the_agent_on(
    served: Server,
) -> None:
    thread = f"t-{uuid.uuid4()}"
    events, interrupt = interrupted(served, "ana", thread)
    assert "need to know where to" in said(events)
    assert interrupt.reason == "choice"
    assert interrupt.message == "Which environment should I deploy to?"
    assert interrupt.response_schema["enum"] == ["staging", "production"]
    assert interrupt.expires_at is not None
    assert interrupt.metadata["pawflow"]["status"] == "pending"
    # The interrupt is the request: the API lists it, by the same id.
    assert [r["id"] for r in served.pending("ana")] == [interrupt.id]

    entry = ResumeEntry(interrupt_id=interrupt.id, status="resolved", payload="staging")
    events = run(served, "ana", resume(thread, entry))
    finished = events[-1]
    assert isinstance(finished, RunFinishedEvent)
    assert isinstance(finished.outcome, RunFinishedSuccessOutcome)
    assert "Done: deployed build" in said(events)
    assert "to staging" in said(events)
    with served.api("ana") as api:
        got = api.post("/api/actions/get_interaction", json={"request_id": interrupt.id})
    record = got.json()["interaction"]
    assert (record["status"], record["answer"], record["answered_via"]) == (
        "answered",
        "staging",
        "agui",
    )


def test_a_resume_that_fails_validation_is_a_clear_error_and_the_request_stays_pending(
    served: Server,
) -> None:
    thread = f"t-{uuid.uuid4()}"
    _, interrupt = interrupted(served, "ana", thread)
    entry = ResumeEntry(interrupt_id=interrupt.id, status="resolved", payload="the moon")
    events = run(served, "ana", resume(thread, entry))
    error = events[-1]
    assert isinstance(error, RunErrorEvent)
    assert error.code == "invalid_answer"
    assert error.raw_event is not None
    assert error.raw_event["errors"], error.message
    assert interrupt.id in [r["id"] for r in served.pending("ana")]

    # Answered properly, it resumes as if nothing had happened.
    entry = ResumeEntry(interrupt_id=interrupt.id, status="resolved", payload="production")
    events = run(served, "ana", resume(thread, entry))
    assert isinstance(events[-1], RunFinishedEvent)
    assert "to production" in said(events)


def test_a_request_answered_elsewhere_first_is_seen_resolved(served: Server) -> None:
    thread = f"t-{uuid.uuid4()}"
    _, interrupt = interrupted(served, "ana", thread)
    with served.api("ana") as api:
        answered = api.post(
            "/api/actions/respond_interaction",
            json={"request_id": interrupt.id, "answer": "production"},
        )
        assert answered.status_code == 200, answered.text

    # The AG-UI side answers too, later: the first answer won, and the run says so.
    entry = ResumeEntry(interrupt_id=interrupt.id, status="resolved", payload="staging")
    events = run(served, "ana", resume(thread, entry))
    [resolved] = [e for e in events if isinstance(e, CustomEvent)]
    assert resolved.name == "pawflow.resolved"
    assert (resolved.value["status"], resolved.value["answer"]) == ("answered", "production")
    finished = events[-1]
    assert isinstance(finished, RunFinishedEvent)
    assert isinstance(finished.outcome, RunFinishedSuccessOutcome)
    # A run on the thread no longer asks it either.
    events = run(served, "ana", resume(thread))
    assert isinstance(events[-1].outcome, RunFinishedSuccessOutcome)


def test_cancelling_an_interrupt_cancels_the_request(served: Server) -> None:
    thread = f"t-{uuid.uuid4()}"
    _, interrupt = interrupted(served, "ana", thread)
    events = run(
        served, "ana", resume(thread, ResumeEntry(interrupt_id=interrupt.id, status="cancelled"))
    )
    assert isinstance(events[-1], RunFinishedEvent)
    assert "cancelled" in said(events)
    assert interrupt.id not in [r["id"] for r in served.pending("ana")]


def test_another_user_s_interrupt_is_not_found_like_an_unknown_one(served: Server) -> None:
    _, interrupt = interrupted(served, "ana", f"t-{uuid.uuid4()}")
    errors = []
    for request_id in (interrupt.id, "int_unknown"):
        entry = ResumeEntry(interrupt_id=request_id, status="resolved", payload="staging")
        events = run(served, "bob", resume(f"t-{uuid.uuid4()}", entry))
        error = events[-1]
        assert isinstance(error, RunErrorEvent)
        errors.append((error.code, error.message))
    assert errors[0] == errors[1] == ("not_found", "interaction not found")
    assert interrupt.id in [r["id"] for r in served.pending("ana")]


def test_bad_calls_are_refused_before_any_run(served: Server) -> None:
    body = start("t", "deploy").model_dump_json(by_alias=True)
    url = f"{served.url}/agui/deployer"
    assert httpx.post(url, content=body).status_code == 401
    headers = {"Authorization": f"Bearer {served.tokens['ana']}"}
    assert httpx.post(url, content=b"{}", headers=headers).status_code == 422
    unknown = httpx.post(f"{served.url}/agui/nobody", content=body, headers=headers)
    assert (unknown.status_code, unknown.json()["error"]) == (404, "agent not found")


def test_a_run_waiting_for_its_agent_ends_when_the_token_is_revoked(tmp_path: Path) -> None:
    # The agent's service never runs a turn here (no turn loop): the run waits for it.
    with temporary_store("sqlite", tmp_path) as store:
        idle = ChatService(store, [demo_agent()], poll_interval=None)
        with live_server(
            store, settings=QUIET, services=[idle], agents=idle, endpoints=[mount_agui]
        ) as server:
            served = Server(server.url, {"ana": server.token("ana")})
            events: list[Any] = []
            reader = threading.Thread(
                target=lambda: events.extend(run(served, "ana", start("t-1", "deploy")))
            )
            reader.start()
            try:
                eventually(lambda: waiting_turns(store))
                with store.transaction() as tx:
                    revoke_tokens(tx, "ana", now=store.now())
            finally:
                reader.join(timeout=30)
    error = events[-1]
    assert isinstance(error, RunErrorEvent)
    assert (error.code, error.message) == ("unauthorized", "the token was revoked")


def waiting_turns(store: Store) -> int:
    """How many turns wait in ana's conversations."""
    conversations = store.list_conversations(user="ana")
    with store.unit(write=False) as u:
        return sum(len(u.turns.open_turns(c.id)) for c in conversations)
