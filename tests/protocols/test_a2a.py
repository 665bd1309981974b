"""The A2A face, driven by the A2A SDK's own client over JSON-RPC."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx
import pytest
from a2a.client import Client, ClientConfig, ClientFactory
from a2a.helpers.proto_helpers import get_data_parts, get_message_text, new_data_part
from a2a.types.a2a_pb2 import (
    CancelTaskRequest,
    GetTaskRequest,
    Message,
    Part,
    Role,
    SendMessageRequest,
    Task,
    TaskState,
)
from a2a.utils.errors import TaskNotFoundError

from tests.protocols.conftest import Server

pytestmark = pytest.mark.slow


@asynccontextmanager
async def client(
    server: Server, user: str, agent: str = "deployer", *, streaming: bool = False
) -> AsyncIterator[Client]:
    headers = {"Authorization": f"Bearer {server.tokens[user]}"}
    async with httpx.AsyncClient(headers=headers, timeout=60) as http:
        factory = ClientFactory(ClientConfig(httpx_client=http, streaming=streaming))
        made = await factory.create_from_url(f"{server.url}/a2a/{agent}")
        try:
            yield made
        finally:
            await made.close()


async def send(
    a2a: Client, *parts: Part, task: Task | None = None, context_id: str | None = None
) -> Task:
    message = Message(message_id=str(uuid.uuid4()), role=Role.ROLE_USER, parts=list(parts))
    if task is not None:
        message.task_id = task.id
        message.context_id = task.context_id
    elif context_id is not None:
        message.context_id = context_id
    found: list[Task] = []
    async for response in a2a.send_message(SendMessageRequest(message=message)):
        if response.HasField("task"):
            found.append(response.task)
    assert found
    return found[-1]


def text(value: str) -> Part:
    return Part(text=value)


def asked(task: Task) -> list[dict[str, Any]]:
    """The request records an input-required task carries."""
    assert task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED, task.status
    return [d for d in get_data_parts(task.status.message.parts) if "contract" in d]


def test_a_question_is_input_required_and_an_answer_on_the_task_resumes_it(
    served: Server,
) -> None:
    async def main() -> None:
        async with client(served, "ana") as a2a:
            task = await send(a2a, text("deploy please"))
            [request] = asked(task)
            assert request["contract"] == "pawflow.user-interaction.v1"
            assert request["kind"] == "choice"
            assert request["response_schema"]["enum"] == ["staging", "production"]
            assert "need to know where to" in get_message_text(task.status.message)
            assert [r["id"] for r in served.pending("ana")] == [request["id"]]

            # An answer outside the schema: still input-required, the request still pending.
            task = await send(
                a2a,
                new_data_part({"request_id": request["id"], "answer": "the moon"}),
                task=task,
            )
            [again] = asked(task)
            assert again["id"] == request["id"]
            assert "not accepted" in get_message_text(task.status.message)
            assert [r["id"] for r in served.pending("ana")] == [request["id"]]

            # The answer, as a data part naming the request.
            task = await send(
                a2a,
                new_data_part({"request_id": request["id"], "answer": "staging"}),
                task=task,
            )
            assert task.status.state == TaskState.TASK_STATE_COMPLETED
            assert "to staging" in get_message_text(task.status.message)
            fetched = await a2a.get_task(GetTaskRequest(id=task.id))
            assert fetched.status.state == TaskState.TASK_STATE_COMPLETED

    anyio.run(main)
    with served.api("ana") as api:
        records = api.post("/api/actions/list_interactions", json={"status": "answered"}).json()
    vias = {r["answered_via"] for r in records["interactions"]}
    assert "a2a" in vias


def test_a_text_answers_the_only_request_and_an_answer_from_the_web_is_seen(
    served: Server,
) -> None:
    async def main() -> None:
        async with client(served, "ana") as a2a:
            task = await send(a2a, text("deploy"), context_id=f"c-{uuid.uuid4()}")
            [request] = asked(task)
            task = await send(a2a, text("production"), task=task)
            assert task.status.state == TaskState.TASK_STATE_COMPLETED
            assert "to production" in get_message_text(task.status.message)

            # Asked again, answered from the web API this time: the task goes on from there.
            task = await send(a2a, text("deploy"), context_id=f"c-{uuid.uuid4()}")
            [request] = asked(task)
            with served.api("ana") as api:
                answered = api.post(
                    "/api/actions/respond_interaction",
                    json={"request_id": request["id"], "answer": "staging"},
                )
                assert answered.status_code == 200, answered.text
            task = await send(a2a, text("and now?"), task=task)
            assert task.status.state == TaskState.TASK_STATE_COMPLETED

    anyio.run(main)


def test_another_user_s_task_is_not_found_like_an_unknown_one(served: Server) -> None:
    async def main() -> None:
        async with client(served, "ana") as a2a:
            task = await send(a2a, text("deploy"))
            asked(task)
        async with client(served, "bob") as other:
            errors = []
            for task_id in (task.id, str(uuid.uuid4())):
                with pytest.raises(TaskNotFoundError) as raised:
                    await other.get_task(GetTaskRequest(id=task_id))
                errors.append(str(raised.value))
            assert errors[0] == errors[1]
            # Nor can bob answer on it.
            foreign = Task(id=task.id, context_id=task.context_id)
            with pytest.raises(TaskNotFoundError):
                await send(other, text("production"), task=foreign)
        assert len(served.pending("ana")) >= 1

    anyio.run(main)


def test_the_card_and_the_endpoint_want_a_token(served: Server) -> None:
    card = httpx.get(f"{served.url}/a2a/deployer/.well-known/agent-card.json")
    assert card.status_code == 401
    headers = {"Authorization": f"Bearer {served.tokens['ana']}"}
    card = httpx.get(f"{served.url}/a2a/deployer/.well-known/agent-card.json", headers=headers)
    assert card.json()["name"] == "deployer"
    unknown = httpx.get(f"{served.url}/a2a/nobody/.well-known/agent-card.json", headers=headers)
    assert unknown.status_code == 404
    assert httpx.post(f"{served.url}/a2a/deployer", json={}).status_code == 401


def test_a_streamed_message_ends_its_stream_input_required(served: Server) -> None:
    async def main() -> None:
        headers = {"Authorization": f"Bearer {served.tokens['ana']}"}
        async with httpx.AsyncClient(headers=headers, timeout=60) as http:
            factory = ClientFactory(ClientConfig(httpx_client=http, streaming=True))
            a2a = await factory.create_from_url(f"{served.url}/a2a/deployer")
            try:
                message = Message(
                    message_id=str(uuid.uuid4()), role=Role.ROLE_USER, parts=[text("deploy")]
                )
                states = []
                task_id = ""
                async for response in a2a.send_message(SendMessageRequest(message=message)):
                    if response.HasField("task"):
                        task_id = response.task.id
                        states.append(response.task.status.state)
                    elif response.HasField("status_update"):
                        states.append(response.status_update.status.state)
                assert states[-1] == TaskState.TASK_STATE_INPUT_REQUIRED
                task = await a2a.get_task(GetTaskRequest(id=task_id))
                [request] = asked(task)
                assert request["kind"] == "choice"
            finally:
                await a2a.close()

    anyio.run(main)


def test_cancelling_an_input_required_task_cancels_its_requests(served: Server) -> None:
    async def main() -> None:
        async with client(served, "ana") as a2a:
            task = await send(a2a, text("deploy"), context_id=f"c-{uuid.uuid4()}")
            [request] = asked(task)
            cancelled = await a2a.cancel_task(CancelTaskRequest(id=task.id))
            assert cancelled.status.state == TaskState.TASK_STATE_CANCELED
        assert request["id"] not in [r["id"] for r in served.pending("ana")]

    anyio.run(main)
