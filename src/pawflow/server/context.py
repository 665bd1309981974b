"""What every request handler of one app reaches: the store, the settings, the live parts."""

from __future__ import annotations

import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from fastapi import Request

from pawflow.records import Message
from pawflow.server.hub import EventHub
from pawflow.server.limits import RateLimiter
from pawflow.server.settings import ServerSettings
from pawflow.server.throttle import FailureThrottle
from pawflow.store import Store
from pawflow.store.sweeper import Sweeper

log = logging.getLogger("pawflow.server")

MessageHandler = Callable[[Store, str, Message], object]
"""``on_message(store, conversation_id, message)``, called off the request path."""


@dataclass
class ServerContext:
    store: Store
    settings: ServerSettings
    hub: EventHub
    limiter: RateLimiter
    auth_failures: FailureThrottle
    on_message: MessageHandler | None = None
    executor: ThreadPoolExecutor | None = field(default=None, repr=False)
    sweeper: Sweeper | None = field(default=None, repr=False)

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
