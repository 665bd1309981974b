"""A2A tasks and push notifications kept in PawFlow's store, behind the A2A SDK's interfaces.

- :class:`StoredTasks` is the SDK's ``TaskStore`` for one agent: a task is saved under the
  caller (the SDK's call context names them) and that agent, and found only by them; another
  user's task is ``None``, exactly like an unknown id. Tasks outlive the process: an
  input-required task is answered after a restart like before it.
- :class:`StoredPushConfigs` is its ``PushNotificationConfigStore``: each config the caller's
  own, read back only by them.
- :class:`OutboxPushes` is its ``PushNotificationSender``: an update of a task writes one
  delivery per push config, in one transaction, and the outbox's dispatcher sends them like
  webhook deliveries (SSRF checks, retries with backoff, a log), with the config's token.
- :func:`push_url_check` refuses a push URL a webhook could not have.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import anyio
from a2a.server.context import ServerCallContext
from a2a.server.owner_resolver import resolve_user_scope
from a2a.server.tasks.push_notification_config_store import (
    PushNotificationConfigStore,
    normalize_push_notification_config,
)
from a2a.server.tasks.push_notification_sender import (
    PushNotificationEvent,
    PushNotificationSender,
)
from a2a.server.tasks.task_store import TaskStore
from a2a.types.a2a_pb2 import (
    ListTasksRequest,
    ListTasksResponse,
    StreamResponse,
    Task,
    TaskPushNotificationConfig,
    TaskState,
    TaskStatusUpdateEvent,
)
from a2a.utils.constants import DEFAULT_LIST_TASKS_PAGE_SIZE
from a2a.utils.errors import InvalidParamsError
from a2a.utils.proto_utils import to_stream_response
from a2a.utils.task import ListTasksCursor, decode_list_tasks_cursor, encode_list_tasks_cursor
from google.protobuf.json_format import (  # type: ignore[import-untyped]
    MessageToJson,
    Parse,
)

from pawflow.channels.webhooks import check_url
from pawflow.egress import EgressRule
from pawflow.errors import InvalidInput
from pawflow.store import PushConfig, Store, StoredTask


def _json(message: Task | TaskPushNotificationConfig | StreamResponse) -> str:
    return str(MessageToJson(message, indent=None))


def _sort_key(task: Task) -> tuple[bool, int, str]:
    """The SDK's ``ListTasks`` order (descending): by the status's time, then by id."""
    stamped = task.HasField("status") and task.status.HasField("timestamp")
    return (stamped, task.status.timestamp.ToNanoseconds() if stamped else 0, task.id)


class StoredTasks(TaskStore):
    """The tasks of ``agent``, each its caller's, in the store."""

    def __init__(self, store: Store, agent: str) -> None:
        self.store = store
        self.agent = agent

    async def save(self, task: Task, context: ServerCallContext) -> None:
        user = resolve_user_scope(context)

        def write() -> bool:
            with self.store.unit() as u:
                return u.a2a_tasks.save(
                    task.id,
                    user=user,
                    agent=self.agent,
                    context_id=task.context_id,
                    state=TaskState.Name(task.status.state),
                    task=_json(task),
                )

        if not await anyio.to_thread.run_sync(write):
            raise InvalidParamsError(message="the task id is taken")

    async def get(self, task_id: str, context: ServerCallContext) -> Task | None:
        user = resolve_user_scope(context)

        def read() -> StoredTask | None:
            with self.store.unit(write=False) as u:
                return u.a2a_tasks.get(task_id, user=user, agent=self.agent)

        found = await anyio.to_thread.run_sync(read)
        return None if found is None else Parse(found.task, Task())

    async def list(self, params: ListTasksRequest, context: ServerCallContext) -> ListTasksResponse:
        user = resolve_user_scope(context)
        state = TaskState.Name(params.status) if params.status else None

        def read() -> list[StoredTask]:
            with self.store.unit(write=False) as u:
                return u.a2a_tasks.list_for(
                    user=user, agent=self.agent, context_id=params.context_id, state=state
                )

        tasks = [Parse(found.task, Task()) for found in await anyio.to_thread.run_sync(read)]
        if params.HasField("status_timestamp_after"):
            after = params.status_timestamp_after.ToNanoseconds()
            tasks = [t for t in tasks if _sort_key(t)[0] and _sort_key(t)[1] >= after]
        tasks.sort(key=_sort_key, reverse=True)
        start = 0
        if params.page_token:
            cursor = decode_list_tasks_cursor(params.page_token)
            if cursor is None:
                raise InvalidParamsError(message=f"Invalid page token: {params.page_token}")
            last = cursor.sort_key()
            start = next((i for i, t in enumerate(tasks) if _sort_key(t) < last), len(tasks))
        size = params.page_size or DEFAULT_LIST_TASKS_PAGE_SIZE
        end = start + size
        following = None
        if end < len(tasks):
            stamped, at, task_id = _sort_key(tasks[end - 1])
            following = encode_list_tasks_cursor(
                ListTasksCursor(timestamp_ns=at if stamped else None, task_id=task_id)
            )
        return ListTasksResponse(
            next_page_token=following,
            tasks=tasks[start:end],
            total_size=len(tasks),
            page_size=size,
        )

    async def delete(self, task_id: str, context: ServerCallContext) -> None:
        user = resolve_user_scope(context)

        def forget() -> None:
            with self.store.unit() as u:
                u.a2a_tasks.delete(task_id, user=user, agent=self.agent)

        await anyio.to_thread.run_sync(forget)


class StoredPushConfigs(PushNotificationConfigStore):
    """The tasks' push configs, each its caller's, in the store."""

    def __init__(self, store: Store) -> None:
        self.store = store

    async def set_info(
        self,
        task_id: str,
        notification_config: TaskPushNotificationConfig,
        context: ServerCallContext,
    ) -> TaskPushNotificationConfig | None:
        config = normalize_push_notification_config(task_id, notification_config)
        auth = config.authentication if config.HasField("authentication") else None
        row = PushConfig(
            task_id=task_id,
            id=config.id,
            user=resolve_user_scope(context),
            url=config.url,
            token=config.token or None,
            auth_scheme=(auth.scheme or None) if auth is not None else None,
            auth_credentials=(auth.credentials or None) if auth is not None else None,
            config=_json(config),
        )

        def write() -> bool:
            with self.store.unit() as u:
                return u.a2a_tasks.set_push(row)

        if not await anyio.to_thread.run_sync(write):
            raise InvalidParamsError(message="the push notification config id is taken")
        return config

    async def get_info(
        self, task_id: str, context: ServerCallContext
    ) -> list[TaskPushNotificationConfig]:
        return await self._read(task_id, resolve_user_scope(context))

    async def get_info_for_dispatch(self, task_id: str) -> list[TaskPushNotificationConfig]:
        return await self._read(task_id, None)

    async def _read(self, task_id: str, user: str | None) -> list[TaskPushNotificationConfig]:
        def read() -> list[PushConfig]:
            with self.store.unit(write=False) as u:
                return u.a2a_tasks.push_configs(task_id, user=user)

        rows = await anyio.to_thread.run_sync(read)
        return [Parse(row.config, TaskPushNotificationConfig()) for row in rows]

    async def delete_info(
        self, task_id: str, context: ServerCallContext, config_id: str | None = None
    ) -> None:
        user = resolve_user_scope(context)

        def forget() -> None:
            with self.store.unit() as u:
                u.a2a_tasks.delete_push(task_id, user=user, config_id=config_id)

        await anyio.to_thread.run_sync(forget)


class OutboxPushes(PushNotificationSender):
    """Each update of a task, queued for each of its push configs; the dispatcher sends."""

    def __init__(self, store: Store) -> None:
        self.store = store

    async def send_notification(self, task_id: str, event: PushNotificationEvent) -> None:
        if isinstance(event, Task | TaskStatusUpdateEvent):
            name = TaskState.Name(event.status.state)
        else:
            name = "TASK_ARTIFACT_UPDATE"
        payload = _json(to_stream_response(event))

        def write() -> int:
            with self.store.unit() as u:
                return u.a2a_push.enqueue(task_id, name, payload)

        await anyio.to_thread.run_sync(write)


def push_url_check(rule: EgressRule) -> Callable[[str], Awaitable[bool]]:
    """The SDK's push-URL validator: a URL a webhook may have, or the reason it may not."""

    async def check(url: str) -> bool:
        try:
            await anyio.to_thread.run_sync(check_url, url, rule)
        except InvalidInput as exc:
            raise InvalidParamsError(message=f"push notification {exc.message}") from exc
        return True

    return check
