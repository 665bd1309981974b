"""The entry point the server calls for each stored user message."""

from __future__ import annotations

import logging

from pawflow.chat.pipeline import Turn
from pawflow.records import Message
from pawflow.store import Store

log = logging.getLogger("pawflow.chat")


def handle_message(store: Store, conversation_id: str, message: Message | str) -> Turn | None:
    """Run the conversation's agent on ``message``, through the store's started ``AgentService``.

    Returns the finished turn, or None when no agent answers (no service running, no agent
    assigned to the conversation, or not a user message).
    """
    # Imported here: the service runs turns through this package's pipeline.
    from pawflow.agent.service import running_service

    service = running_service(store)
    if service is None:
        log.warning(
            "no AgentService is running on this store; message %s is not answered",
            getattr(message, "id", "?"),
        )
        return None
    return service.handle_message(store, conversation_id, message)
