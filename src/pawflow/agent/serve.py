"""The agents' part of ``pawflow serve``: the service, the message handler, the demo agents.

Imported by the server (``pawflow.server.extensions.KNOWN_MODULES``); importing it registers
:func:`agent_extension`. Its settings come from ``ServerSettings.extra["agents"]``:
``poll_interval`` (seconds between wakeup passes, default 1). The chat plugins (planner,
organizer, inbox) come from ``extra["chat"]``: see :mod:`pawflow.chat.demo`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pawflow.agent.demo import DEMO_AGENT, demo_agent
from pawflow.agent.service import AgentService
from pawflow.chat import demo as chat_demo
from pawflow.errors import InvalidInput
from pawflow.records import Message
from pawflow.server.extensions import ServeExtension, register
from pawflow.store import Store

if TYPE_CHECKING:
    from pawflow.server.settings import ServerSettings

_KNOWN_SETTINGS = {"poll_interval"}


def agent_extension(store: Store, settings: ServerSettings | None = None) -> ServeExtension:
    """An ``AgentService`` with the demo agent, answering each conversation's messages."""
    extra: Any = {} if settings is None else settings.extra.get("agents", {})
    if not isinstance(extra, dict) or set(extra) - _KNOWN_SETTINGS:
        raise InvalidInput(f"agents settings accept only {sorted(_KNOWN_SETTINGS)}")
    service = AgentService(
        store, [demo_agent()], poll_interval=float(extra.get("poll_interval", 1.0))
    )
    chat_demo.install_plugins(service.chat, settings)

    def on_message(store: Store, conversation_id: str, message: Message) -> None:
        service.handle_message(store, conversation_id, message)

    def demo_setup(store: Store, user: str, conversation_id: str) -> None:
        service.assign(conversation_id, DEMO_AGENT)
        chat_demo.demo_setup(service.chat, store, user, settings)

    return ServeExtension(
        "agents",
        services=[service],
        on_message=on_message,
        demo_setup=demo_setup,
    )


register(agent_extension)
