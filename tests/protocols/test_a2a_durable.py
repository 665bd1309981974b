"""A2A tasks outlive ``pawflow serve``, and their push notifications arrive through the outbox:
a real server process on SQLite and on PostgreSQL, driven by the A2A SDK's own client, the
pushes received by a local HTTP server."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest
from a2a.helpers.proto_helpers import get_message_text, new_data_part
from a2a.types.a2a_pb2 import (
    AuthenticationInfo,
    DeleteTaskPushNotificationConfigRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTasksRequest,
    Message,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    Task,
    TaskPushNotificationConfig,
    TaskState,
)
from a2a.utils.errors import InvalidParamsError, TaskNotFoundError

from pawflow.server.credentials import issue_token
from pawflow.store import open_store
from pawflow.testing import eventually, throwaway_postgres
from tests.channels.receiver import Received, receiver
from tests.conftest import require_postgres
from tests.protocols.conftest import Server
from tests.protocols.test_a2a import asked, client, send, text
from tests.served import Served

pytestmark = pytest.mark.slow


@dataclass
class Process:
    served: Served
    server: Server

    def restart(self) -> None:
        self.served.kill()
        self.served.start()


@pytest.fixture(
    scope="module", params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
)
def process(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Process]:
    """``pawflow serve --demo`` that may call loopback push URLs and sends its outbox often."""
    directory: Path = tmp_path_factory.mktemp("a2a-durable")
    if request.param == "postgres":
        require_postgres()
        with throwaway_postgres() as url:
            yield from _serve(url, directory)
    else:
        yield from _serve(f"sqlite:///{directory / 'pawflow.db'}", directory)


def _serve(db: str, directory: Path) -> Iterator[Process]:
    with open_store(db) as store:
        tokens = {user: issue_token(store, user) for user in ("ana", "bob")}
    env = {
        "PAWFLOW_LOG_LEVEL": "error",
        "PAWFLOW_WEBHOOK_ALLOWED_HOSTS": "127.0.0.1",
        "PAWFLOW_OUTBOX_INTERVAL": "0.2",
        # A restart's new process sends as soon as the old one's outbox lease ran out.
        "PAWFLOW_LEASE_TTL": "2",
        "PAWFLOW_MAX_CLOCK_SKEW": "0.5",
    }
    served = Served(db, directory, args=("--demo",), env=env)
    served.start()
    try:
        yield Process(served, Server(served.url, tokens))
    finally:
        served.kill()


def test_an_input_required_task_survives_a_restart_and_is_resumed_on_it(
    process: Process,
) -> None:
    server = process.server

    async def ask() -> Task:
        async with client(server, "ana") as a2a:
            return await send(a2a, text("deploy"), context_id=f"c-{uuid.uuid4()}")

    task = anyio.run(ask)
    [request] = asked(task)
    process.restart()

    async def resume() -> None:
        async with client(server, "bob") as other:
            with pytest.raises(TaskNotFoundError):
                await other.get_task(GetTaskRequest(id=task.id))
        async with client(server, "ana") as a2a:
            kept = await a2a.get_task(GetTaskRequest(id=task.id))
            assert [r["id"] for r in asked(kept)] == [request["id"]]
            listed = await a2a.list_tasks(ListTasksRequest(context_id=task.context_id))
            assert [t.id for t in listed.tasks] == [task.id]
            done = await send(
                a2a, new_data_part({"request_id": request["id"], "answer": "staging"}), task=task
            )
            assert done.id == task.id
            assert done.status.state == TaskState.TASK_STATE_COMPLETED
            assert "to staging" in get_message_text(done.status.message)

    anyio.run(resume)
    process.restart()

    async def still() -> None:
        async with client(server, "ana") as a2a:
            kept = await a2a.get_task(GetTaskRequest(id=task.id))
            assert kept.status.state == TaskState.TASK_STATE_COMPLETED

    anyio.run(still)


def _states(got: list[Received]) -> list[str]:
    """The task states the pushes carried (a Task or a status update, as A2A's
    ``StreamResponse`` JSON)."""
    states = []
    for item in got:
        body: dict[str, Any] = item.json()
        status = (body.get("task") or body.get("statusUpdate") or {}).get("status", {})
        states.append(str(status.get("state")))
    return states


def test_push_notifications_arrive_when_the_task_asks_and_when_it_completes(
    process: Process,
) -> None:
    server = process.server
    with receiver() as inbox, receiver() as second:

        async def main() -> None:
            async with client(server, "ana") as a2a:
                message = Message(
                    message_id=str(uuid.uuid4()),
                    role=Role.ROLE_USER,
                    parts=[text("deploy")],
                    context_id=f"c-{uuid.uuid4()}",
                )
                config = TaskPushNotificationConfig(
                    id="mine",
                    url=f"{inbox.url}/a2a-push",
                    token="tok-123",
                    authentication=AuthenticationInfo(scheme="Bearer", credentials="cred-9"),
                )
                request = SendMessageRequest(
                    message=message,
                    configuration=SendMessageConfiguration(task_push_notification_config=config),
                )
                tasks = [r.task async for r in a2a.send_message(request) if r.HasField("task")]
                task = tasks[-1]
                [asking] = asked(task)
                eventually(
                    lambda: "TASK_STATE_INPUT_REQUIRED" in _states(inbox.received()), timeout=30
                )

                # The config methods: a second config, listed, read back, deleted.
                made = await a2a.create_task_push_notification_config(
                    TaskPushNotificationConfig(
                        task_id=task.id, id="other", url=f"{second.url}/p", token="tok-2"
                    )
                )
                assert made.id == "other" and made.task_id == task.id
                listed = await a2a.list_task_push_notification_configs(
                    ListTaskPushNotificationConfigsRequest(task_id=task.id)
                )
                assert sorted(c.id for c in listed.configs) == ["mine", "other"]
                got = await a2a.get_task_push_notification_config(
                    GetTaskPushNotificationConfigRequest(task_id=task.id, id="mine")
                )
                assert got.url == f"{inbox.url}/a2a-push" and got.token == "tok-123"
                await a2a.delete_task_push_notification_config(
                    DeleteTaskPushNotificationConfigRequest(task_id=task.id, id="other")
                )
                listed = await a2a.list_task_push_notification_configs(
                    ListTaskPushNotificationConfigsRequest(task_id=task.id)
                )
                assert [c.id for c in listed.configs] == ["mine"]

                # A URL inside the network that the server does not allow is refused.
                with pytest.raises(InvalidParamsError) as refused:
                    await a2a.create_task_push_notification_config(
                        TaskPushNotificationConfig(
                            task_id=task.id, id="inside", url="http://10.1.2.3/hook"
                        )
                    )
                assert "PAWFLOW_EGRESS_ALLOWED_HOSTS" in str(refused.value)

                # Another user finds neither the task nor its configs.
                async with client(server, "bob") as other:
                    with pytest.raises(TaskNotFoundError):
                        await other.list_task_push_notification_configs(
                            ListTaskPushNotificationConfigsRequest(task_id=task.id)
                        )
                    with pytest.raises(TaskNotFoundError):
                        await other.create_task_push_notification_config(
                            TaskPushNotificationConfig(
                                task_id=task.id, id="spy", url=f"{second.url}/spy"
                            )
                        )

                done = await send(
                    a2a, new_data_part({"request_id": asking["id"], "answer": "staging"}), task=task
                )
                assert done.status.state == TaskState.TASK_STATE_COMPLETED

        anyio.run(main)
        eventually(lambda: "TASK_STATE_COMPLETED" in _states(inbox.received()), timeout=30)
        got = inbox.received()
        assert {item.path for item in got} == {"/a2a-push"}
        for item in got:
            assert item.headers["x-a2a-notification-token"] == "tok-123"
            assert item.headers["authorization"] == "Bearer cred-9"
            assert item.headers["webhook-id"].startswith("msg_")
        assert len({item.headers["webhook-id"] for item in got}) == len(got)
        states = _states(got)
        assert states.index("TASK_STATE_INPUT_REQUIRED") < states.index("TASK_STATE_COMPLETED")
        assert all(json.loads(item.body) for item in got)
        # The second config was deleted before the task went on; bob's was never made.
        assert second.received() == []
