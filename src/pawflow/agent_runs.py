"""An agent run driven by another protocol (AG-UI, A2A): one thread, one conversation.

A protocol's thread (AG-UI's ``threadId``, A2A's ``contextId``) is a conversation of the
caller's, found by its id or by its title (made on first use) and assigned to the agent the
caller named. A run posts the caller's message, or answers the requests the agent asked
(through ``respond_interaction``: the same validation, the same answer transaction as every
other channel), then waits until the conversation has no turn left to run, and reports what
the agent said since and what it still asks. A request answered meanwhile from anywhere else
is simply no longer pending: the first answer wins.

The agent runs in the server's chat service, as it does for the web chat: the run only waits
for it, handing on its messages as they are stored. Every store call runs on a worker
thread; waiting listens to the server's event hub.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import Any, Literal

import anyio
from starlette.requests import HTTPConnection

from pawflow.errors import NotFound, NotPending
from pawflow.records import Interaction, Message
from pawflow.server.auth import (
    CHALLENGE,
    Principal,
    bearer_principal,
    bearer_token,
    client_address,
    still_signed_in,
)
from pawflow.server.context import ServerContext
from pawflow.server.errors import HTTPProblem

RUN_TIMEOUT = 300.0
"""Seconds a run waits for the agent's turns before it gives up (the agent goes on)."""
_RECHECK = 0.5  # seconds between checks when no event woke the wait
REVOKED = "the token was revoked"


async def caller(ctx: ServerContext, connection: HTTPConnection) -> Principal:
    """Who sent the request's bearer token, under the API's rules (failed-authentication
    throttle, per-user rate), or an ``HTTPProblem``."""
    token = bearer_token(connection.headers.get("authorization"))
    if token is None:
        raise HTTPProblem(401, "use 'Authorization: Bearer <token>'", headers=CHALLENGE)
    address = client_address(connection)
    principal = await bearer_principal(ctx, address, token)
    ctx.limiter.check(principal.user)
    return principal


@dataclass
class Settled:
    """What a run ends with: the agent's messages the caller has not seen, its open requests."""

    messages: list[Message] = field(default_factory=list)
    pending: list[Interaction] = field(default_factory=list)
    finished: bool = True
    """False when the agent was still working at the timeout."""


@dataclass
class Resolved:
    """A request a run answered or cancelled, or found already resolved by another client."""

    request: Interaction
    by_this_run: bool


class AgentThread:
    """The caller's conversation ``conversation_id``, answered by ``agent``."""

    def __init__(
        self, ctx: ServerContext, principal: Principal, agent: str, conversation_id: str
    ) -> None:
        self.ctx = ctx
        self.principal = principal
        self.agent = agent
        self.conversation_id = conversation_id
        self.finished = False
        """Whether the last :meth:`follow` saw the agent's turns end."""

    @property
    def user(self) -> str:
        return self.principal.user

    @classmethod
    async def open(
        cls, ctx: ServerContext, principal: Principal, agent: str, thread: str, *, title: str
    ) -> AgentThread:
        """The thread ``thread`` of ``user``: the conversation of that id they may write in,
        else theirs titled ``title`` (made if new); ``agent`` answers it from now on."""

        user = principal.user

        def find() -> str:
            agents = ctx.agents
            if agents is None or agents.agent(agent) is None:
                raise NotFound("agent")
            store = ctx.store
            conversation_id: str | None = None
            for conversation in store.list_conversations(user=user):
                writable = conversation.access in ("owner", "write")
                if writable and conversation.id == thread:
                    conversation_id = conversation.id
                    break
                if conversation.owner == user and conversation.title == title:
                    conversation_id = conversation.id
            if conversation_id is None:
                conversation_id = store.create_conversation(user, title).id
            with store.unit(write=False) as u:
                assigned = u.turns.assigned_agent(conversation_id)
            if assigned != agent:
                agents.assign(conversation_id, agent)
            return conversation_id

        return cls(ctx, principal, agent, await anyio.to_thread.run_sync(find))

    async def post(self, text: str) -> Message:
        """The caller's message, and the agent's turn that answers it."""
        ctx = self.ctx

        def post() -> Message:
            message = ctx.store.post_message(self.conversation_id, text, user=self.user)
            ctx.dispatch_message(self.conversation_id, message)
            return message

        return await anyio.to_thread.run_sync(post)

    async def resolve(
        self,
        request_id: str,
        status: Literal["resolved", "cancelled"],
        payload: Any,
        *,
        via: str,
    ) -> Resolved:
        """Answer (``resolved``) or cancel a request of this thread, as ``via``. An invalid
        answer raises ``InvalidAnswer`` and leaves it pending; one not in this thread, or not
        the caller's, is not found; one already resolved is reported as it is."""
        store = self.ctx.store

        def act() -> Resolved:
            found = store.answerable_interaction(request_id, user=self.user)
            if found.conversation_id != self.conversation_id:
                raise NotFound
            try:
                if status == "resolved":
                    record = store.respond_interaction(request_id, payload, user=self.user, via=via)
                else:
                    record = store.cancel_interaction(request_id, user=self.user)
            except NotPending:
                return Resolved(store.get_interaction(request_id, user=self.user), False)
            return Resolved(record, True)

        return await anyio.to_thread.run_sync(act)

    async def get(self, request_id: str) -> Interaction:
        store = self.ctx.store
        return await anyio.to_thread.run_sync(
            lambda: store.get_interaction(request_id, user=self.user)
        )

    async def last_seq(self) -> int:
        history = await self._history(0)
        return history[-1].seq if history else 0

    async def settle(
        self,
        *,
        after_seq: int = 0,
        seen: frozenset[str] = frozenset(),
        timeout: float = RUN_TIMEOUT,
    ) -> Settled:
        """What :meth:`follow` finds, all at once, and the requests still pending."""
        following = self.follow(after_seq=after_seq, seen=seen, timeout=timeout)
        async with aclosing(following):
            said = [message async for message in following]
        return Settled(said, await self.pending(), self.finished)

    async def follow(
        self,
        *,
        after_seq: int = 0,
        seen: frozenset[str] = frozenset(),
        timeout: float = RUN_TIMEOUT,
    ) -> AsyncGenerator[Message, None]:
        """The agent's messages after ``after_seq`` not in ``seen``, as they are stored, until
        the thread has no turn left to run (then :attr:`finished` is True) or ``timeout``
        seconds pass. Once the caller's token is revoked it ends with a 401 and hands over
        nothing more: checked at once on a revocation this process hears of, else every
        ``credential_check`` seconds."""
        self.finished = False
        hub = self.ctx.hub
        waiter = hub.subscribe(self.user)
        started = checked = anyio.current_time()
        try:
            while hub.running:
                now = anyio.current_time()
                if waiter.recheck or now - checked >= self.ctx.settings.credential_check:
                    waiter.recheck, checked = False, now
                    await self._still_signed_in()
                waiter.clear()  # before reading: a commit during the read wakes the wait
                idle = not await self._busy()  # first: a turn ending meanwhile is read below
                for message in await self._history(after_seq):
                    after_seq = message.seq
                    if message.role == "assistant" and message.content and message.id not in seen:
                        yield message
                if idle:
                    self.finished = True
                    return
                left = timeout - (anyio.current_time() - started)
                if left <= 0:
                    return
                with anyio.move_on_after(min(_RECHECK, left)):
                    await waiter.wait()
        finally:
            hub.unsubscribe(waiter)

    async def _still_signed_in(self) -> None:
        store = self.ctx.store
        if not await anyio.to_thread.run_sync(
            still_signed_in, store, self.principal, self.ctx.settings.session_idle
        ):
            raise HTTPProblem(401, REVOKED, headers=CHALLENGE)

    async def pending(self) -> list[Interaction]:
        """The thread's pending requests, oldest first."""
        store = self.ctx.store

        def read() -> list[Interaction]:
            found: list[Interaction] = []
            cursor: str | None = None
            while True:
                page, cursor = store.page_interactions(
                    user=self.user,
                    status="pending",
                    conversation_id=self.conversation_id,
                    cursor=cursor,
                )
                found += page
                if cursor is None:
                    return found

        return await anyio.to_thread.run_sync(read)

    async def _busy(self) -> bool:
        store = self.ctx.store

        def busy() -> bool:
            with store.unit(write=False) as u:
                return bool(u.turns.open_turns(self.conversation_id))

        return await anyio.to_thread.run_sync(busy)

    async def _history(self, after_seq: int) -> list[Message]:
        store = self.ctx.store

        def read() -> list[Message]:
            found: list[Message] = []
            seq = after_seq
            while True:
                with store.unit(write=False) as u:
                    page = u.messages.history(self.conversation_id, user=self.user, after_seq=seq)
                found += page
                if len(page) < 500:
                    return found
                seq = page[-1].seq

        return await anyio.to_thread.run_sync(read)
