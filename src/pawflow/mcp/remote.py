"""The backend of ``pawflow mcp``: a PawFlow server reached through its HTTP API.

:class:`pawflow.client.Client` blocks, so every call runs on a worker thread. Waiting
reads the user's event stream (``/api/events``) rather than polling: the request is
read once the stream is open, then again only when an event says it changed.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any

import anyio
import anyio.from_thread

from pawflow.client import Client, ServerUnreachable
from pawflow.mcp.backend import DEFAULT_CONVERSATION, chat_url
from pawflow.records import ClientChannel, FileRef, Interaction

STREAM_READ = 5.0
"""Longest a blocked stream read lasts, so a waiter that is no longer wanted ends soon."""
CHANGE_EVENTS = frozenset(
    {"interaction_request", "interaction_answered", "ready", "reset"},
)


class RemoteBackend:
    def __init__(self, client: Client, *, conversation: str = DEFAULT_CONVERSATION) -> None:
        self.client = client
        self.conversation_title = conversation
        self._conversation_id: str | None = None
        self._user: str | None = None
        self._lock = threading.Lock()
        self._rounds: dict[str, str] = {}

    @property
    def user(self) -> str:
        if self._user is None:
            self._user = self.client.whoami()
        return self._user

    async def _run(self, call: Callable[[], Any]) -> Any:
        return await anyio.to_thread.run_sync(call, abandon_on_cancel=True)

    def _resolve_conversation(self) -> str:
        with self._lock:
            if self._conversation_id is None:
                user = self.user
                for conversation in self.client.list_conversations():
                    if conversation.owner == user and conversation.title == self.conversation_title:
                        self._conversation_id = conversation.id
                        break
                else:
                    made = self.client.create_conversation(self.conversation_title)
                    self._conversation_id = made.id
            return self._conversation_id

    async def default_conversation(self) -> str:
        found: str = await self._run(self._resolve_conversation)
        return found

    async def request(
        self, conversation_id: str, kind: str, message: str, **optional: Any
    ) -> Interaction:
        found: Interaction = await self._run(
            lambda: self.client.request_interaction(conversation_id, kind, message, **optional)
        )
        return found

    async def get(self, request_id: str) -> Interaction:
        found: Interaction = await self._run(lambda: self.client.get_interaction(request_id))
        return found

    async def inbox(self) -> list[Interaction]:
        found: list[tuple[Interaction, str]] = await self._run(lambda: self.client.list_inbox())
        return [record for record, _ in found]

    async def page(
        self,
        *,
        status: str | None,
        conversation_id: str | None,
        kind: str | None,
        limit: int,
        cursor: str | None,
    ) -> tuple[list[Interaction], str | None]:
        found: tuple[list[Interaction], str | None] = await self._run(
            lambda: self.client.list_interactions(
                status=status,
                conversation_id=conversation_id,
                kind=kind,
                limit=limit,
                cursor=cursor,
            )
        )
        return found

    async def respond(self, request_id: str, answer: Any, *, via: str = "mcp") -> Interaction:
        # Over HTTP a client names only a client channel: ``mcp-app`` is one, ``mcp`` is the
        # server's own (an elicited answer relayed here is a plain API call).
        channel: ClientChannel = "mcp-app" if via == "mcp-app" else "api"
        found: Interaction = await self._run(
            lambda: self.client.respond_interaction(request_id, answer, via=channel)
        )
        return found

    async def details(self, request_id: str) -> dict[str, Any]:
        found: dict[str, Any] = await self._run(
            lambda: self.client.action("get_interaction", request_id=request_id)
        )
        return found

    async def claim(self, request_id: str, *, release: bool, via: str) -> dict[str, Any]:
        name = "release_interaction" if release else "claim_interaction"
        found: dict[str, Any] = await self._run(
            lambda: self.client.action(name, request_id=request_id, via=via)
        )
        return found

    async def upload(
        self,
        request_id: str,
        field: str | None,
        name: str,
        media_type: str | None,
        content: bytes,
    ) -> FileRef:
        found: FileRef = await self._run(
            lambda: self.client.upload(
                content, name=name, media_type=media_type, request_id=request_id, field=field
            )
        )
        return found

    async def cancel(self, request_id: str) -> Interaction:
        found: Interaction = await self._run(lambda: self.client.cancel_interaction(request_id))
        return found

    async def wait(self, request_id: str, seconds: float) -> Interaction:
        stop = threading.Event()
        try:
            found: Interaction = await self._run(
                lambda: self._wait_blocking(request_id, seconds, stop)
            )
        finally:
            stop.set()  # a cancelled wait ends its thread at the next read
        return found

    def _wait_blocking(self, request_id: str, seconds: float, stop: threading.Event) -> Interaction:
        deadline = time.monotonic() + seconds
        while not stop.is_set():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            try:
                for event in self.client.events(timeout=min(remaining, STREAM_READ)):
                    if stop.is_set():
                        break
                    data = event.data if isinstance(event.data, dict) else {}
                    if event.type in ("ready", "reset"):
                        # The stream is open: what happens from now on will be seen.
                        record = self.client.get_interaction(request_id)
                        if not record.pending:
                            return record
                    elif event.type == "interaction_answered" and data.get("id") == request_id:
                        return Interaction.model_validate(data)
                    if time.monotonic() >= deadline:
                        break
            except ServerUnreachable:
                continue  # a read timed out (or the stream broke): reopen while time remains
        return self.client.get_interaction(request_id)

    async def watch(self, on_change: Callable[[], Awaitable[None]]) -> None:
        stop = threading.Event()
        changed = anyio.Event()
        holder = [changed]

        def signal() -> None:
            holder[0].set()

        def read_events() -> None:
            while not stop.is_set():
                try:
                    for event in self.client.events(timeout=STREAM_READ):
                        if stop.is_set():
                            return
                        if event.type in CHANGE_EVENTS:
                            anyio.from_thread.run_sync(signal)
                except ServerUnreachable:
                    if not stop.is_set():
                        stop.wait(STREAM_READ / 5)  # the server is away: do not spin

        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(
                    partial(anyio.to_thread.run_sync, read_events, abandon_on_cancel=True)
                )
                while True:
                    await holder[0].wait()
                    holder[0] = anyio.Event()
                    await on_change()
        finally:
            stop.set()

    async def record_round(self, round_id: str, request_id: str, action: str) -> bool:
        """Rounds are this process's own (its ``requestState`` key is too): kept in memory."""
        await self.get(request_id)  # not the user's: not found
        with self._lock:
            if round_id in self._rounds:
                return False
            self._rounds[round_id] = action
            return True

    def answer_url(self, record: Interaction) -> str:
        return chat_url(self.client.server, record.conversation_id)
