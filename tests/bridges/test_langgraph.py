"""The LangGraph bridge: interrupts become requests, answers resume the graph through its own
checkpointer — in this process, and across real processes with a ``pawflow serve`` between."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import interrupt
from pydantic import BaseModel, field_validator

from pawflow import FakeClock, InvalidInput, Store, open_store
from pawflow.bridges.langgraph import LangGraphBridge, interrupt_request, unanswered
from pawflow.server.credentials import issue_token
from pawflow.testing import eventually, throwaway_postgres
from tests.bridges.graphs import Graph, Refund, config, parallel_graph, refund_graph
from tests.served import Served

ROOT = Path(__file__).parents[2]


@pytest.mark.parametrize(
    ("value", "schema", "request_"),
    [
        ("Ship it?", None, {"kind": "text", "message": "Ship it?"}),
        (
            "Ship it?",
            {"type": "boolean"},
            {"kind": "confirm", "message": "Ship it?", "response_schema": {"type": "boolean"}},
        ),
        (
            {"kind": "choice", "message": "Which?", "options": ["a", "b"], "order": 17},
            None,
            {"kind": "choice", "message": "Which?", "options": ["a", "b"]},
        ),
        (
            {"question": "Which?", "options": ["a", "b"], "title": "Pick"},
            None,
            {"kind": "choice", "message": "Which?", "options": ["a", "b"], "title": "Pick"},
        ),
        (
            {"message": "Age?", "response_schema": {"type": "integer", "minimum": 0}},
            None,
            {
                "kind": "integer",
                "message": "Age?",
                "response_schema": {"type": "integer", "minimum": 0},
            },
        ),
        (
            {"message": "Where?", "expires_in": "2h"},
            {"type": "object", "properties": {"city": {"type": "string"}}},
            {
                "kind": "form",
                "message": "Where?",
                "expires_in": "2h",
                "response_schema": {"type": "object", "properties": {"city": {"type": "string"}}},
            },
        ),
        ({"order": 17}, None, {"kind": "text", "message": '{"order": 17}'}),
        (
            ["a", 1],
            {"type": "string", "format": "date"},
            {
                "kind": "date",
                "message": '["a", 1]',
                "response_schema": {"type": "string", "format": "date"},
            },
        ),
    ],
    ids=["string", "string-boolean", "kind", "options", "schema", "form", "other", "other-date"],
)
def test_an_interrupt_value_names_its_request(
    value: object, schema: dict[str, Any] | None, request_: dict[str, Any]
) -> None:
    assert interrupt_request(value, schema) == request_


def test_an_interrupt_without_a_message_is_refused() -> None:
    with pytest.raises(InvalidInput, match="needs a message"):
        interrupt_request({"kind": "confirm", "message": " "})


def test_only_the_bridge_value_reads_as_unanswered() -> None:
    assert unanswered({"pawflow_unanswered": "expired", "request_id": "r"}) == "expired"
    assert unanswered({"pawflow_unanswered": "expired", "request_id": "r", "x": 1}) is None
    assert unanswered("cancelled") is None


def refunds(store: Store, tmp_path: Path, **options: Any) -> tuple[LangGraphBridge, Graph, str]:
    graph = refund_graph(tmp_path / "checkpoints.db")
    conversation = store.create_conversation("ana", "refunds")
    return LangGraphBridge(store, graph, name="refunds", **options).listen(), graph, conversation.id


def pending(store: Store) -> list[tuple[str, str]]:
    return [(i.kind, i.message) for i in store.list_interactions(user="ana", status="pending")]


def only_pending(store: Store) -> str:
    [request] = store.list_interactions(user="ana", status="pending")
    return request.id


def test_each_answer_resumes_the_graph_until_it_ends(store: Store, tmp_path: Path) -> None:
    bridge, graph, conversation = refunds(store, tmp_path)
    result = bridge.invoke(
        {"order": "A-17", "amount": 120},
        thread_id="A-17",
        owner="ana",
        conversation_id=conversation,
    )
    assert "__interrupt__" in result
    [asked] = store.list_interactions(user="ana", status="pending")
    assert (asked.kind, asked.title, asked.message) == (
        "confirm",
        "Refund",
        "Refund 120 EUR on order A-17?",
    )
    assert asked.conversation_id == conversation
    assert asked.requester.name == "langgraph.refunds"

    store.respond_interaction(asked.id, "yes", user="ana")
    assert pending(store) == [("text", "A note for the customer?")]
    assert graph.get_state(config("A-17")).next == ("note",)

    store.respond_interaction(only_pending(store), "Sorry for the wait", user="ana")
    state = graph.get_state(config("A-17"))
    assert state.next == ()
    assert state.values == {
        "order": "A-17",
        "amount": 120,
        "outcome": "approved",
        "note": "Sorry for the wait",
    }
    assert pending(store) == []


def test_asking_again_doubles_nothing(store: Store, tmp_path: Path) -> None:
    bridge, _, conversation = refunds(store, tmp_path)
    bridge.invoke(
        {"order": "B", "amount": 5}, thread_id="B", owner="ana", conversation_id=conversation
    )
    assert bridge.ask(thread_id="B", owner="ana", conversation_id=conversation) == []
    assert len(pending(store)) == 1


def test_interrupts_of_one_step_are_asked_once_each_in_any_order(
    store: Store, tmp_path: Path
) -> None:
    graph = parallel_graph(tmp_path / "checkpoints.db")
    conversation = store.create_conversation("ana").id
    bridge = LangGraphBridge(store, graph, name="pair").listen()
    bridge.invoke({"answers": []}, thread_id="p", owner="ana", conversation_id=conversation)
    asked = {i.message: i.id for i in store.list_interactions(user="ana", status="pending")}
    assert sorted(asked) == ["Left?", "Right?"]

    store.respond_interaction(asked["Right?"], "yes", user="ana")
    # Left still waits on its first question: resuming Right asked nothing twice.
    assert pending(store) == [("text", "Left?")]
    assert graph.get_state(config("p")).next == ("left",)

    store.respond_interaction(asked["Left?"], "no", user="ana")
    final = graph.get_state(config("p")).values
    assert sorted(final["answers"]) == ["Left? no", "Right? yes"]
    assert pending(store) == []


def test_a_cancelled_request_resumes_the_graph_as_unanswered(store: Store, tmp_path: Path) -> None:
    bridge, graph, conversation = refunds(store, tmp_path)
    bridge.invoke(
        {"order": "C", "amount": 9}, thread_id="C", owner="ana", conversation_id=conversation
    )
    store.cancel_interaction(only_pending(store), user="ana")
    state = graph.get_state(config("C"))
    assert (state.next, state.values["outcome"]) == ((), "cancelled")
    assert pending(store) == []


def test_an_expired_request_resumes_the_graph_as_unanswered(
    store: Store, tmp_path: Path, clock: FakeClock
) -> None:
    bridge, graph, conversation = refunds(store, tmp_path, expires_in="1h")
    bridge.invoke(
        {"order": "D", "amount": 9}, thread_id="D", owner="ana", conversation_id=conversation
    )
    [asked] = store.list_interactions(user="ana", status="pending")
    assert asked.expires_at is not None
    clock.advance("2h")
    assert store.sweep()["expired"] == 1
    assert graph.get_state(config("D")).values["outcome"] == "expired"


def test_an_answer_waits_for_a_process_that_resumes_the_graph(store: Store, tmp_path: Path) -> None:
    graph = refund_graph(tmp_path / "checkpoints.db")
    conversation = store.create_conversation("ana").id
    asker = LangGraphBridge(store, graph, name="refunds")  # asks, never listens
    asker.invoke(
        {"order": "E", "amount": 1}, thread_id="E", owner="ana", conversation_id=conversation
    )
    store.respond_interaction(only_pending(store), "no", user="ana")
    assert graph.get_state(config("E")).next == ("review",)  # nobody resumed it yet

    LangGraphBridge(store, refund_graph(tmp_path / "checkpoints.db"), name="refunds").listen()
    assert graph.get_state(config("E")).values["outcome"] == "refused"


def test_a_graph_that_fails_on_resuming_is_retried(
    store: Store, tmp_path: Path, clock: FakeClock
) -> None:
    failures = ["the ledger is down"]

    def book(state: Refund) -> Refund:
        answer = interrupt("Book it?")
        if failures:
            raise RuntimeError(failures.pop())
        return {"outcome": str(answer)}

    builder = StateGraph(Refund)
    builder.add_node("book", book)
    builder.add_edge(START, "book")
    builder.add_edge("book", END)
    graph = builder.compile(checkpointer=InMemorySaver())
    conversation = store.create_conversation("ana").id
    bridge = LangGraphBridge(store, graph, name="ledger").listen()
    bridge.invoke({}, thread_id="F", owner="ana", conversation_id=conversation)
    [waiting] = graph.get_state(config("F")).interrupts

    store.respond_interaction(only_pending(store), "booked", user="ana")  # the resume fails
    assert store.pending_continuations(f"langgraph.ledger:F:{waiting.id}") == 1  # kept
    assert failures == []
    clock.advance("1m")
    store.sweep()
    assert graph.get_state(config("F")).values == {"outcome": "booked"}
    assert pending(store) == []


class Age(BaseModel):
    years: int

    @field_validator("years")
    @classmethod
    def plausible(cls, years: int) -> int:
        if years > 150:
            raise ValueError("nobody is that old")
        return years


def age_graph() -> Graph:
    """An interrupt typed with a model: LangGraph validates the resume value itself."""

    def ask_age(state: Refund) -> Refund:
        age = interrupt("How old is the customer?", response_schema=Age)
        return {"outcome": f"{age.years} years"}

    builder = StateGraph(Refund)
    builder.add_node("ask_age", ask_age)
    builder.add_edge(START, "ask_age")
    builder.add_edge("ask_age", END)
    return builder.compile(checkpointer=InMemorySaver())


def test_a_typed_interrupt_is_a_form_and_an_answer_it_refuses_is_asked_again(
    store: Store,
) -> None:
    graph = age_graph()
    conversation = store.create_conversation("ana").id
    bridge = LangGraphBridge(store, graph, name="ages").listen()
    bridge.invoke({}, thread_id="G", owner="ana", conversation_id=conversation)
    [first] = store.list_interactions(user="ana", status="pending")
    assert first.kind == "form"
    assert first.response_schema["required"] == ["years"]

    store.respond_interaction(first.id, {"years": 200}, user="ana")  # the model refuses it
    [again] = store.list_interactions(user="ana", status="pending")
    assert again.id != first.id and again.message == first.message
    store.respond_interaction(again.id, {"years": 40}, user="ana")
    assert graph.get_state(config("G")).values == {"outcome": "40 years"}


def test_a_typed_interrupt_nobody_answered_stays_until_asked_again(store: Store) -> None:
    graph = age_graph()
    conversation = store.create_conversation("ana").id
    bridge = LangGraphBridge(store, graph, name="ages").listen()
    bridge.invoke({}, thread_id="H", owner="ana", conversation_id=conversation)
    store.cancel_interaction(only_pending(store), user="ana")
    assert graph.get_state(config("H")).next == ("ask_age",)
    assert pending(store) == []
    [asked] = bridge.ask(thread_id="H", owner="ana", conversation_id=conversation)
    assert asked.message == "How old is the customer?"


def test_a_graph_without_a_checkpointer_is_refused(store: Store) -> None:
    builder = StateGraph(Refund)
    builder.add_node("noop", lambda state: {})
    builder.add_edge(START, "noop")
    with pytest.raises(InvalidInput, match="checkpointer"):
        LangGraphBridge(store, builder.compile(), name="nothing")


def test_a_bad_bridge_name_is_refused(store: Store, tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="bridge name"):
        LangGraphBridge(store, refund_graph(tmp_path / "c.db"), name="a:b")


# -- across processes ---------------------------------------------------------------------


@pytest.fixture
def db_url(backend: str, tmp_path: Path) -> Iterator[str]:
    if backend == "postgres":
        with throwaway_postgres() as url:
            yield url
    else:
        yield f"sqlite:///{tmp_path / 'pawflow.db'}"


def graphs(command: str, db: str, checkpoints: Path, *extra: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "tests.bridges.graphs",
        command,
        "--db",
        db,
        "--checkpoints",
        str(checkpoints),
        *extra,
    ]


@pytest.mark.slow
def test_a_graph_interrupted_in_one_process_is_resumed_by_an_answer_from_another(
    db_url: str, tmp_path: Path
) -> None:
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
        checkpoints = tmp_path / "checkpoints.db"
        thread = ["--thread", "order-17"]

        # One process runs the graph until it interrupts, asks, and exits.
        subprocess.run(
            graphs(
                "start",
                db_url,
                checkpoints,
                *thread,
                "--owner",
                "ana",
                "--conversation",
                conversation_id,
            ),
            cwd=ROOT,
            check=True,
            timeout=60,
        )

        def pending_requests() -> list[dict[str, Any]]:
            listed = api.post("/api/actions/list_interactions", json={"status": "pending"})
            requests: list[dict[str, Any]] = listed.json()["interactions"]
            return requests

        [review] = pending_requests()
        assert review["message"] == "Refund 120 EUR on order order-17?"

        # The person answers with the command line, while no process could resume the graph.
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pawflow",
                "answer",
                review["id"],
                "yes",
                "--server",
                served.url,
            ],
            env={**os.environ, "PAWFLOW_TOKEN": token},
            cwd=tmp_path,
            check=True,
            capture_output=True,
            timeout=60,
        )

        # Later, a process that resumes graphs starts: it takes the answer, and the next one.
        worker = subprocess.Popen(
            graphs("listen", db_url, checkpoints, *thread),
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            note = eventually(
                lambda: [r for r in pending_requests() if r["kind"] == "text"],
                timeout=60,
                interval=0.1,
            )
            assert note[0]["message"] == "A note for the customer?"
            answered = api.post(
                "/api/actions/respond_interaction",
                json={"request_id": note[0]["id"], "answer": "Refunded today"},
            )
            assert answered.status_code == 200, answered.text
            out, err = worker.communicate(timeout=90)
        finally:
            if worker.poll() is None:
                worker.kill()
                worker.communicate(timeout=30)
        assert worker.returncode == 0, err
        assert json.loads(out) == {
            "order": "order-17",
            "amount": 120,
            "outcome": "approved",
            "note": "Refunded today",
        }
        assert pending_requests() == []
        # The graph's own checkpointer holds the end, for any process that reads it.
        state = refund_graph(checkpoints).get_state(config("order-17"))
        assert (state.next, state.values["note"]) == ((), "Refunded today")
        api.close()
    finally:
        served.kill()
