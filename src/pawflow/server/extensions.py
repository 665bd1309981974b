"""Serve-time extensions: how other parts of PawFlow plug into ``pawflow serve``.

A part appends a factory to :data:`EXTENSIONS` when its module is imported::

    from pawflow.server.extensions import EXTENSIONS, ServeExtension

    def _serve(store, settings):
        runtime = FlowRuntime(store)
        return ServeExtension("flows", services=[runtime], demo_setup=runtime.demo)

    EXTENSIONS.append(_serve)

``pawflow serve`` imports the modules of :data:`KNOWN_MODULES` that exist, calls every
factory once with the opened store, starts the services after the sweeper (and stops them
before it, in reverse order), hands each stored user message to every ``on_message``, and
with ``--demo`` calls every ``demo_setup``.
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from pawflow.records import Message
from pawflow.store import Store

if TYPE_CHECKING:
    from pawflow.server.settings import ServerSettings

log = logging.getLogger("pawflow.server")


@runtime_checkable
class Service(Protocol):
    """Something that runs for as long as the server does."""

    def start(self) -> None: ...

    def stop(self) -> None: ...


MessageHandler = Callable[[Store, str, Message], None]
"""``on_message(store, conversation_id, message)``, called off the request path."""

DemoSetup = Callable[[Store, str, str], None]
"""``demo_setup(store, user, conversation_id)``: fill the demo conversation."""


@dataclass(frozen=True)
class ServeExtension:
    name: str
    services: Sequence[Service] = ()
    on_message: MessageHandler | None = None
    demo_setup: DemoSetup | None = None


ExtensionFactory = Callable[[Store, "ServerSettings"], ServeExtension]

EXTENSIONS: list[ExtensionFactory] = []
"""Factories registered by the parts that were imported."""

KNOWN_MODULES: tuple[str, ...] = (
    "pawflow.flow",
    "pawflow.flow.serve",
    "pawflow.agent",
    "pawflow.agent.serve",
    "pawflow.chat",
    "pawflow.chat.serve",
    "pawflow.server.tour",
)
"""Modules ``pawflow serve`` imports when they exist, so that they can register."""


def register(factory: ExtensionFactory) -> ExtensionFactory:
    """Append ``factory`` once (usable as a decorator)."""
    if factory not in EXTENSIONS:
        EXTENSIONS.append(factory)
    return factory


def import_known(modules: Sequence[str] | None = None) -> list[str]:
    """Import the modules (default :data:`KNOWN_MODULES`) that exist; the names imported.
    A module that exists but fails to import is an error, not something to skip quietly."""
    imported = []
    for name in KNOWN_MODULES if modules is None else modules:
        try:
            importlib.import_module(name)
        except ModuleNotFoundError as exc:
            missing = exc.name or ""
            if name == missing or name.startswith(missing + "."):
                continue
            raise
        imported.append(name)
    return imported


def collect(store: Store, settings: ServerSettings) -> list[ServeExtension]:
    """One extension from each registered factory."""
    found = []
    for factory in list(EXTENSIONS):
        extension = factory(store, settings)
        if not isinstance(extension, ServeExtension):
            raise TypeError(f"{factory!r} returned {extension!r}, not a ServeExtension")
        found.append(extension)
    return found


def combined_on_message(extensions: Sequence[ServeExtension]) -> MessageHandler | None:
    """Every extension's ``on_message`` in order; one failing does not stop the next."""
    handlers = [ext.on_message for ext in extensions if ext.on_message is not None]
    if not handlers:
        return None
    if len(handlers) == 1:
        return handlers[0]

    def on_message(store: Store, conversation_id: str, message: Message) -> None:
        for handler in handlers:
            try:
                handler(store, conversation_id, message)
            except Exception:
                log.exception("on_message handler %r failed", handler)

    return on_message


def services_of(extensions: Sequence[ServeExtension]) -> list[Service]:
    return [service for ext in extensions for service in ext.services]
