"""An answer that is not the caller's to give, over A2A and AG-UI: a clean protocol error that
says whom the request waits for (or which vote stands), the request and the task as they
were, and no traceback in the log (both backends, in the test process to read its log)."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from a2a.helpers.proto_helpers import new_data_part
from a2a.types.a2a_pb2 import GetTaskRequest, Message, Role, SendMessageRequest, TaskState
from a2a.utils.errors import InvalidRequestError
from ag_ui.core import ResumeEntry, RunErrorEvent, RunStartedEvent

from pawflow.a2a import mount as mount_a2a
from pawflow.agui import mount as mount_agui
from pawflow.serve import chat_service
from pawflow.server.testing import live_server
from pawflow.testing import temporary_store
from tests.conftest import require_postgres
from tests.logs import tracebacks
from tests.protocols.conftest import Server
from tests.protocols.test_a2a import asked, client, send, text
from tests.protocols.test_agui import interrupted, resume, run
from tests.server.conftest import QUIET

pytestmark = pytest.mark.slow


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def served(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Server]:
    if request.param == "postgres":
        require_postgres()
    with temporary_store(str(request.param), tmp_path) as store:
        chat = chat_service(store, QUIET, demo=True)
        with live_server(
            store,
            settings=QUIET,
            services=[chat],
            on_message=chat.message_posted,
            agents=chat,
            endpoints=[mount_agui, mount_a2a],
        ) as server:
            yield Server(server.url, {user: server.token(user) for user in ("ana", "bob")})


def _ask(served: Server, conversation_id: str, **policy: Any) -> str:
    """Ana's confirm request in the thread's conversation, with ``policy``."""
    with served.api("ana") as api:
        made = api.post(
            "/api/actions/request_interaction",
            json={
                "conversation_id": conversation_id,
                "kind": "confirm",
                "message": "Ship it?",
                **policy,
            },
        )
    assert made.status_code == 200, made.text
    request_id: str = made.json()["interaction"]["id"]
    return request_id


def _status(served: Server, request_id: str) -> dict[str, Any]:
    with served.api("ana") as api:
        found: dict[str, Any] = api.post(
            "/api/actions/get_interaction", json={"request_id": request_id}
        ).json()
    return found


def test_a2a_keeps_the_task_input_required_and_names_whom_it_waits_for(
    served: Server, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)

    async def main() -> None:
        async with client(served, "ana") as a2a:
            task = await send(a2a, text("deploy please"))
            [first] = asked(task)
            theirs = _ask(
                served, first["conversation_id"], assignees=["bob"], requester_may_answer=False
            )
            with pytest.raises(InvalidRequestError) as refused:
                await send(a2a, new_data_part({"request_id": theirs, "answer": True}), task=task)
            assert "waits for bob" in refused.value.message
            found = await a2a.get_task(GetTaskRequest(id=task.id))
            assert found.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
            assert _status(served, theirs)["interaction"]["status"] == "pending"

            # A quorum: ana's vote counts once; a second is refused, the first stands.
            vote = _ask(
                served, first["conversation_id"], assignees=["ana", "bob"], required_approvals=2
            )
            part = new_data_part({"request_id": vote, "answer": True})
            task = await send(a2a, part, task=task)
            assert task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
            again = new_data_part({"request_id": vote, "answer": False})
            with pytest.raises(InvalidRequestError) as voted:
                await send(a2a, again, task=task)
            assert "ana has already voted yes" in voted.value.message
            found = await a2a.get_task(GetTaskRequest(id=task.id))
            assert found.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
            assert _status(served, vote)["policy"]["progress"] == "1 of 2 approvals"

    anyio.run(main)
    assert tracebacks(caplog.records) == []


def test_a2a_streamed_refusal_is_an_error_event(
    served: Server, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)

    async def main() -> None:
        async with client(served, "ana") as a2a:
            task = await send(a2a, text("deploy please"))
            [first] = asked(task)
            theirs = _ask(
                served, first["conversation_id"], assignees=["bob"], requester_may_answer=False
            )
        async with client(served, "ana", streaming=True) as a2a:
            part = new_data_part({"request_id": theirs, "answer": True})
            message = Message(
                message_id=str(uuid.uuid4()),
                role=Role.ROLE_USER,
                parts=[part],
                task_id=task.id,
                context_id=task.context_id,
            )
            updates = []
            with pytest.raises(InvalidRequestError) as refused:
                async for response in a2a.send_message(SendMessageRequest(message=message)):
                    updates.append(response)
            assert "waits for bob" in refused.value.message
            assert updates == []  # the refusal is the stream's only word
            found = await a2a.get_task(GetTaskRequest(id=task.id))
            assert found.status.state == TaskState.TASK_STATE_INPUT_REQUIRED

    anyio.run(main)
    assert tracebacks(caplog.records) == []


def test_agui_ends_the_run_with_run_error_naming_whom_it_waits_for(
    served: Server, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    thread = f"t-{uuid.uuid4()}"
    _, interrupt = interrupted(served, "ana", thread)
    conversation = interrupt.metadata["pawflow"]["conversation_id"]
    theirs = _ask(served, conversation, assignees=["bob"], requester_may_answer=False)
    entry = ResumeEntry(interrupt_id=theirs, status="resolved", payload=True)
    events = run(served, "ana", resume(thread, entry))
    assert isinstance(events[0], RunStartedEvent)
    error = events[-1]
    assert isinstance(error, RunErrorEvent)
    assert error.code == "forbidden" and "waits for bob" in error.message
    assert error.raw_event == {"waiting_for": ["bob"]}
    assert _status(served, theirs)["interaction"]["status"] == "pending"

    vote = _ask(served, conversation, assignees=["ana", "bob"], required_approvals=2)
    entry = ResumeEntry(interrupt_id=vote, status="resolved", payload=True)
    assert not isinstance(run(served, "ana", resume(thread, entry))[-1], RunErrorEvent)
    entry = ResumeEntry(interrupt_id=vote, status="resolved", payload=False)
    error = run(served, "ana", resume(thread, entry))[-1]
    assert isinstance(error, RunErrorEvent)
    assert error.code == "already_voted" and "ana has already voted yes" in error.message
    assert error.raw_event is not None and error.raw_event["vote"]["voter"] == "ana"
    assert _status(served, vote)["policy"]["progress"] == "1 of 2 approvals"
    assert tracebacks(caplog.records) == []
