"""An action runs in one turn on a worker thread; FastAPI still sees its parameters.

The action's handler is a plain function (the store's calls block). Its endpoint runs it on
a worker thread once and hands its record back to the event loop, which checks and encodes
it against the action's model; the body, the dependencies and the schema stay the handler's.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Annotated

from fastapi import APIRouter, Depends, FastAPI, Request
from fastapi.testclient import TestClient
from pydantic import BaseModel

from pawflow.server.routes import action_route


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
