"""An action runs in one turn on a worker thread; FastAPI still sees its parameters.

The action's handler is a plain function (the store's calls block). Its endpoint runs it on
a worker thread once and hands its record back to the event loop, which checks and encodes
it against the action's model; the body, the dependencies and the schema stay the handler's.
An action that only calls the store runs on the loop itself where the store never waits to
read (SQLite), and again on a worker thread where one of its calls would have waited.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import httpx
import pytest
from fastapi import APIRouter, Depends, FastAPI, Request
from fastapi.testclient import TestClient
from pydantic import BaseModel

from pawflow.server.context import context_of
from pawflow.server.routes import action_route
from pawflow.server.testing import live_server
from pawflow.store import Park, Question
from pawflow.testing import eventually, temporary_store
from tests.server.conftest import QUIET
from tests.store.test_waits import Holder


class Ask(BaseModel):
    text: str


class Said(BaseModel):
    text: str
    caller: str
    on_the_loop: bool


def _caller(request: Request) -> str:
    return request.headers.get("x-caller", "nobody")


def _app(ran: list[threading.Thread]) -> FastAPI:
    router = APIRouter(prefix="/api/actions")

    @action_route(router, "say", Said, "Say it back", (422,))
    def say(body: Ask, caller: Annotated[str, Depends(_caller)], request: Request) -> Said:
        """Say the text back."""
        ran.append(threading.current_thread())
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            on_the_loop = False
        else:
            on_the_loop = True
        return Said(text=body.text, caller=caller, on_the_loop=on_the_loop)

    app = FastAPI()
    app.include_router(router)
    return app


def test_the_handler_runs_once_on_a_worker_thread() -> None:
    ran: list[threading.Thread] = []
    with TestClient(_app(ran)) as client:
        response = client.post("/api/actions/say", json={"text": "hi"}, headers={"x-caller": "ann"})
    assert response.status_code == 200
    assert response.json() == {"text": "hi", "caller": "ann", "on_the_loop": False}
    assert len(ran) == 1
    assert ran[0] is not threading.main_thread()


def test_fastapi_reads_the_body_and_the_schema_off_the_handler() -> None:
    ran: list[threading.Thread] = []
    with TestClient(_app(ran)) as client:
        refused = client.post("/api/actions/say", json={"words": "hi"})
        schema = client.get("/openapi.json").json()
    assert refused.status_code == 422
    assert ran == []  # refused before the handler ran
    operation = schema["paths"]["/api/actions/say"]["post"]
    assert operation["operationId"] == "say"
    assert operation["description"] == "Say the text back."
    body = operation["requestBody"]["content"]["application/json"]["schema"]
    assert body == {"$ref": "#/components/schemas/Ask"}
    answered = operation["responses"]["200"]["content"]["application/json"]["schema"]
    assert answered == {"$ref": "#/components/schemas/Said"}


# -- an action that only calls the store: on the loop, or on a thread where it would wait ----


class Wrote(BaseModel):
    conversation_id: str


def _writing_route(ran: list[str]) -> Callable[[FastAPI], None]:
    router = APIRouter(prefix="/test")

    @action_route(router, "write", Wrote, "Start a conversation", (422,), on_loop=True)
    def write(body: Ask, request: Request) -> Wrote:
        ran.append(threading.current_thread().name)
        conversation = context_of(request).store.create_conversation("ann", body.text)
        return Wrote(conversation_id=conversation.id)

    return lambda app: app.include_router(router)


def test_a_store_action_runs_on_the_loop_and_again_on_a_thread_where_it_would_wait(
    tmp_path: Path,
) -> None:
    ran: list[str] = []
    with (
        temporary_store("sqlite", tmp_path) as store,
        live_server(store, settings=QUIET, endpoints=[_writing_route(ran)]) as server,
        server.client("ann") as client,
    ):
        first = client.post("/test/write", json={"text": "free"})
        assert first.status_code == 200
        assert ran == ["pawflow-test-server"]  # the server's event loop: no thread turn

        holder = Holder(store)  # this process's writer, held for as long as the test says
        answered: list[httpx.Response] = []
        waiting = threading.Thread(
            target=lambda: answered.append(client.post("/test/write", json={"text": "held"}))
        )
        try:
            waiting.start()
            eventually(lambda: len(ran) == 3)  # refused on the loop, then run on a thread
            assert ran[1] == "pawflow-test-server"
            assert ran[2] != "pawflow-test-server"
            assert answered == []  # the thread waits for the writer ...
            with httpx.Client(base_url=server.url, timeout=30) as other:
                assert other.get("/healthz").status_code == 200  # ... and the loop goes on
        finally:
            holder.let_go()
            waiting.join(30)
        assert [r.status_code for r in answered] == [200]
        titles = sorted(c.title for c in store.list_conversations(user="ann"))
        assert titles == ["free", "held"]  # written once: the refused try left nothing


def test_an_answer_to_resume_a_handler_here_is_delivered_from_a_worker_thread(
    tmp_path: Path,
) -> None:
    delivered: list[str] = []
    with (
        temporary_store("sqlite", tmp_path) as store,
        live_server(store, settings=QUIET) as server,
        server.client("ann") as client,
    ):
        store.register_handler(
            "resume", lambda d: delivered.append(threading.current_thread().name)
        )
        conversation = store.create_conversation("ann", "asks")
        asked = store.ask(
            Question("ann", conversation.id, "confirm", "Ship it?"), park=Park("resume:run-1")
        )
        response = client.post(
            "/api/actions/respond_interaction",
            json={"request_id": asked.interaction.id, "answer": True},
        )
        assert response.status_code == 200
        assert response.json()["interaction"]["status"] == "answered"
        assert len(delivered) == 1
        assert delivered[0] != "pawflow-test-server"  # the handler may take its time there


def test_an_action_on_the_loop_must_take_the_request() -> None:
    router = APIRouter()

    def no_request(body: Ask) -> Wrote:
        return Wrote(conversation_id=body.text)

    with pytest.raises(TypeError, match="takes the request"):
        action_route(router, "bare", Wrote, "No request", (422,), on_loop=True)(no_request)
