"""The backend of the ``/mcp`` endpoint: the store of the server it is mounted in.

The store's calls block, so they run on worker threads; waiting is not a thread but a
subscription to the server's event hub, which wakes on every committed event. A wait (or
a watch of the pending list) lasts only as long as the caller's token: revoked, it ends
with an error and returns nothing it found.
"""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import anyio

from pawflow.errors import NotFound
from pawflow.mcp.backend import DEFAULT_CONVERSATION, chat_url
from pawflow.records import FileRef, Interaction
from pawflow.server.auth import Principal, still_signed_in, until_signed_out
from pawflow.server.context import ServerContext
from pawflow.server.errors import HTTPProblem
from pawflow.server.files import accept_upload
from pawflow.server.governance import interaction_details
from pawflow.store import POLICY_KEYS, Question

T = TypeVar("T")
REVOKED = "the token was revoked"


class ConversationCache:
    """Each user's default conversation id, found or made once per server."""

    def __init__(self, title: str = DEFAULT_CONVERSATION) -> None:
        self.title = title
        self._ids: dict[str, str] = {}
        self._lock = threading.Lock()

    def resolve(self, ctx: ServerContext, user: str) -> str:
        with self._lock:
            found = self._ids.get(user)
            if found is not None:
                return found
            for conversation in ctx.store.list_conversations(user=user):
                if conversation.owner == user and conversation.title == self.title:
                    found = conversation.id
                    break
            else:
                found = ctx.store.create_conversation(user, self.title).id
            self._ids[user] = found
            return found


class LocalBackend:
    """One caller's view: ``principal`` is the user and the token they called with."""

    def __init__(
        self,
        ctx: ServerContext,
        principal: Principal,
        conversations: ConversationCache,
        client: str = "mcp",
    ) -> None:
        self.ctx = ctx
        self.principal = principal
        self.conversations = conversations
        self.client = client

    @property
    def user(self) -> str:
        return self.principal.user

    async def _while_signed_in(self, work: Callable[[], Awaitable[T]]) -> T:
        """``work``'s result, unless the caller's token is revoked first (then a 401): a
        wait that outlives its token never hands over what it waited for."""
        outcome: list[T] = []
        failure: Exception | None = None
        async with anyio.create_task_group() as tg:

            async def guard() -> None:
                await until_signed_out(self.ctx, self.principal)
                tg.cancel_scope.cancel()  # revoked, or the server is stopping

            tg.start_soon(guard)
            try:
                outcome.append(await work())
            except Exception as exc:  # raised as itself, not in a task group's exception group
                failure = exc
            tg.cancel_scope.cancel()
        if failure is not None:
            raise failure
        store = self.ctx.store
        if not await anyio.to_thread.run_sync(
            still_signed_in, store, self.principal, self.ctx.settings.session_idle
        ):
            raise HTTPProblem(401, REVOKED)
        if not outcome:
            raise HTTPProblem(503, "the server is stopping")
        return outcome[0]

    async def default_conversation(self) -> str:
        return await anyio.to_thread.run_sync(self.conversations.resolve, self.ctx, self.user)

    async def request(
        self, conversation_id: str, kind: str, message: str, **optional: Any
    ) -> Interaction:
        def publish() -> Interaction:
            # Publishing needs write access, as through the action API; less is not found.
            found = self.ctx.store.get_conversation(conversation_id, user=self.user)
            if found.access not in ("owner", "write"):
                raise NotFound("conversation")
            policy = {key: optional.pop(key) for key in POLICY_KEYS if key in optional}
            return self.ctx.store.ask(
                Question(
                    self.user,
                    conversation_id,
                    kind,
                    message,
                    requester={"type": "api", "name": self.client},
                    policy=policy or None,
                    **optional,
                )
            ).interaction

        return await anyio.to_thread.run_sync(publish)

    async def get(self, request_id: str) -> Interaction:
        store = self.ctx.store
        return await anyio.to_thread.run_sync(
            lambda: store.get_interaction(request_id, user=self.user)
        )

    async def inbox(self) -> list[Interaction]:
        store = self.ctx.store

        def read() -> list[Interaction]:
            with store.unit(write=False) as u:
                found = u.accountability.inbox(user=self.user, which="all")
            return [waiting.interaction for waiting in found]

        return await anyio.to_thread.run_sync(read)

    async def page(
        self,
        *,
        status: str | None,
        conversation_id: str | None,
        kind: str | None,
        limit: int,
        cursor: str | None,
    ) -> tuple[list[Interaction], str | None]:
        store = self.ctx.store
        return await anyio.to_thread.run_sync(
            lambda: store.page_interactions(
                user=self.user,
                status=status,
                conversation_id=conversation_id,
                kind=kind,
                limit=limit,
                cursor=cursor,
            )
        )

    async def respond(self, request_id: str, answer: Any, *, via: str = "mcp") -> Interaction:
        store = self.ctx.store
        return await anyio.to_thread.run_sync(
            lambda: store.respond_interaction(request_id, answer, user=self.user, via=via)
        )

    async def details(self, request_id: str) -> dict[str, Any]:
        store = self.ctx.store

        def read() -> dict[str, Any]:
            with store.unit(write=False) as u:
                found = u.accountability.details(request_id, user=self.user)
            return interaction_details(store, found).model_dump(mode="json")

        return await anyio.to_thread.run_sync(read)

    async def claim(self, request_id: str, *, release: bool, via: str) -> dict[str, Any]:
        store = self.ctx.store

        def claim() -> dict[str, Any]:
            with store.unit() as u:
                change = u.accountability.release if release else u.accountability.claim
                found = change(request_id, user=self.user, via=via)
            return interaction_details(store, found).model_dump(mode="json")

        return await anyio.to_thread.run_sync(claim)

    async def upload(
        self,
        request_id: str,
        field: str | None,
        name: str,
        media_type: str | None,
        content: bytes,
    ) -> FileRef:
        return await anyio.to_thread.run_sync(
            lambda: accept_upload(self.ctx, self.user, content, name, media_type, request_id, field)
        )

    async def cancel(self, request_id: str) -> Interaction:
        store = self.ctx.store
        return await anyio.to_thread.run_sync(
            lambda: store.cancel_interaction(request_id, user=self.user)
        )

    async def wait(self, request_id: str, seconds: float) -> Interaction:
        return await self._while_signed_in(lambda: self._wait(request_id, seconds))

    async def _wait(self, request_id: str, seconds: float) -> Interaction:
        hub = self.ctx.hub
        waiter = hub.subscribe(self.user)
        try:
            with anyio.move_on_after(seconds):
                while hub.running:
                    waiter.clear()  # before reading: a commit during the read wakes the wait
                    record = await self.get(request_id)
                    if not record.pending:
                        return record
                    await waiter.wait()
        finally:
            hub.unsubscribe(waiter)
        return await self.get(request_id)

    async def watch(self, on_change: Callable[[], Awaitable[None]]) -> None:
        await self._while_signed_in(lambda: self._watch(on_change))

    async def _watch(self, on_change: Callable[[], Awaitable[None]]) -> None:
        hub = self.ctx.hub
        waiter = hub.subscribe(self.user)
        try:
            while hub.running:
                waiter.clear()  # before reading: a commit during the read wakes the next wait
                await on_change()
                await waiter.wait()
        finally:
            hub.unsubscribe(waiter)

    async def record_round(self, round_id: str, request_id: str, action: str) -> bool:
        store = self.ctx.store

        def record() -> bool:
            store.get_interaction(request_id, user=self.user)  # not theirs: not found
            with store.unit() as u:
                return u.mcp_rounds.record(round_id, request_id, user=self.user, action=action)

        return await anyio.to_thread.run_sync(record)

    def answer_url(self, record: Interaction) -> str:
        return chat_url(self.ctx.settings.base_url, record.conversation_id)
