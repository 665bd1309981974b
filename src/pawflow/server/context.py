"""What every request handler of one app reaches: the store, the settings, the live parts."""

from __future__ import annotations

import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Protocol

from fastapi import Request

from pawflow.records import Message
from pawflow.server.hub import EventHub
from pawflow.server.limits import RateLimiter
from pawflow.server.oidc import OpenIDProvider
from pawflow.server.settings import ServerSettings
from pawflow.server.throttle import FailureThrottle
from pawflow.store import Store, Sweeper

log = logging.getLogger("pawflow.server")

MessageHandler = Callable[[Store, str, Message], object]
"""``on_message(store, conversation_id, message)``, called off the request path."""


class AgentEntry(Protocol):
    """One agent of the directory, as the server sees it."""

    @property
    def name(self) -> str: ...

    @property
    def instructions(self) -> str: ...


class AgentDirectory(Protocol):
    """The agents that answer conversations here (``pawflow serve`` hands in its chat
    service); ``list_agents`` and ``assign_agent`` reach them only through this."""

    @property
    def agents(self) -> list[str]:
        """The names of the agents running here."""
        ...

    def agent(self, name: str) -> AgentEntry | None:
        """The agent called ``name`` (None: none runs here)."""
        ...

    def assign(self, conversation_id: str, agent: str) -> None:
        """Have ``agent`` (one of :attr:`agents`) answer a conversation from now on."""
        ...


@dataclass
class ServerContext:
    store: Store
    settings: ServerSettings
    hub: EventHub
    limiter: RateLimiter
    auth_failures: FailureThrottle
    on_message: MessageHandler | None = None
    agents: AgentDirectory | None = None
    executor: ThreadPoolExecutor | None = field(default=None, repr=False)
    sweeper: Sweeper | None = field(default=None, repr=False)
    oidc: OpenIDProvider | None = field(default=None, repr=False)
    """Single sign-on's provider (None: not set up)."""
    body_limits: dict[str, int] = field(default_factory=dict)
    """The paths that take bodies larger than ``settings.max_body``, and how large: an
    endpoint added to the app says so when it is mounted (``/mcp`` carries app uploads)."""

    def dispatch_message(self, conversation_id: str, message: Message) -> None:
        """Hand a stored user message to ``on_message`` off the request path."""
        handler = self.on_message
        if handler is None or self.executor is None:
            return
        store = self.store

        def run() -> None:
            try:
                handler(store, conversation_id, message)
            except Exception:  # the message is stored either way; the handler logs its turn
                log.exception("on_message failed for conversation %s", conversation_id)

        try:
            self.executor.submit(run)
        except RuntimeError:  # shutting down: the message stays stored, unanswered
            log.warning("server is stopping; message %s not handed on", message.id)


def context_of(request: Request) -> ServerContext:
    ctx = request.app.state.pawflow
    assert isinstance(ctx, ServerContext)
    return ctx
