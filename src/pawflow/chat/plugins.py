"""``PluginAPI``: the one typed object through which plugins plug into the chat.

A plugin is a function ``register(services, config)``. It registers intercepts (and their
rows of the intercept chain), agents, and tools for agents; it may open continuations in a
session and read what a session waits on. It never reaches into the runtime: everything it
may use is a method here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime, timedelta
from importlib.metadata import entry_points
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from pawflow.chat.intercepts import Intercept, InterceptChain, InterceptRow
from pawflow.chat.sessions import ContinuationKind, Origin, SessionContinuation, SessionRegistry
from pawflow.errors import ConfigError

if TYPE_CHECKING:
    from pawflow.agent.spec import AgentSpec
    from pawflow.agent.tools import Tool
    from pawflow.store import Store

Plugin = Callable[["PluginAPI", Mapping[str, Any]], None]

PLUGIN_GROUP = "pawflow.chat_plugins"
"""The entry-point group chat plugins are found in (``name = "module:register"``)."""


class AgentHost(Protocol):
    """What ``PluginAPI`` registers agents with (``ChatService``)."""

    def add_agent(self, spec: AgentSpec) -> AgentSpec: ...

    def agent(self, name: str) -> AgentSpec | None: ...

    def assign(self, conversation_id: str, agent: str) -> None: ...


class PluginAPI:
    def __init__(
        self,
        store: Store,
        *,
        host: AgentHost,
        intercepts: InterceptChain,
        sessions: SessionRegistry,
    ) -> None:
        self.store = store
        self.sessions = sessions
        self._host = host
        self._chain = intercepts
        self._tools_waiting: dict[str, list[Tool]] = {}
        self.plugins: list[str] = []

    # -- registering ------------------------------------------------------------------------

    def register_intercept(
        self,
        intercept: Intercept,
        *,
        resolves_confirmation: bool = False,
        before: str | None = None,
        after: str | None = None,
    ) -> None:
        """Add an intercept to the chain: in its declared row, or a new row (placed)."""
        self._chain.register(
            intercept, resolves_confirmation=resolves_confirmation, before=before, after=after
        )

    def declare_intercepts(self, yaml_text: str, where: str = "plugin intercepts") -> None:
        """Add or override rows of the chain (``resolves_confirmation`` is only ever added)."""
        self._chain.load(yaml_text, where)

    def intercept_rows(self) -> list[InterceptRow]:
        return list(self._chain.rows)

    def register_agent(self, spec: AgentSpec) -> AgentSpec:
        added = self._host.add_agent(spec)
        for tool in self._tools_waiting.pop(spec.name, []):
            added.toolbox.add(tool)
        return added

    def register_tool(self, tool: Tool, *, agent: str) -> None:
        """Give ``agent`` a tool (now, or when that agent is registered)."""
        spec = self._host.agent(agent)
        if spec is None:
            self._tools_waiting.setdefault(agent, []).append(tool)
        else:
            spec.toolbox.add(tool)

    def agent(self, name: str) -> AgentSpec | None:
        return self._host.agent(name)

    def assign(self, conversation_id: str, agent: str) -> None:
        """Have ``agent`` answer a conversation's messages (demo set-ups use this)."""
        self._host.assign(conversation_id, agent)

    # -- sessions ------------------------------------------------------------------------

    def now(self) -> datetime:
        return self.store.now()

    def ask(
        self,
        session_id: str,
        owner: str,
        kind: ContinuationKind,
        question: str,
        *,
        origin: Origin = "explicit",
        intent: str | None = None,
        payload: Any = None,
        ttl: str | timedelta | None = None,
    ) -> SessionContinuation:
        """Open what ``session_id`` waits on (superseding what it waited on before)."""
        return self.sessions.ask(
            session_id,
            owner,
            kind,
            question,
            origin=origin,
            intent=intent,
            payload=payload,
            ttl=ttl,
        )

    def pending(self, session_id: str) -> SessionContinuation | None:
        return self.sessions.pending(session_id)

    def answered(self, continuation_id: str, reply: str) -> SessionContinuation:
        """Close one's own continuation as answered (``Conflict`` if it was not pending)."""
        return self.sessions.answered(continuation_id, reply)

    # -- plugins ------------------------------------------------------------------------------

    def install(
        self,
        plugin: str | Plugin,
        config: Mapping[str, Any] | None = None,
        *,
        name: str | None = None,
    ) -> None:
        """Run a plugin's ``register`` (by its entry-point name, or the function itself,
        known as ``name``)."""
        if name is None:
            name = plugin if isinstance(plugin, str) else getattr(plugin, "__module__", "plugin")
        function = resolve_plugin(plugin) if isinstance(plugin, str) else plugin
        function(self, dict(config or {}))
        self.plugins.append(name)


def plugin_names() -> list[str]:
    """The chat plugins installed as entry points."""
    return sorted({point.name for point in entry_points(group=PLUGIN_GROUP)})


def resolve_plugin(name: str) -> Plugin:
    found = [point for point in entry_points(group=PLUGIN_GROUP) if point.name == name]
    if not found:
        raise ConfigError(f"unknown chat plugin {name!r}: use one of {plugin_names()}")
    function = found[0].load()
    if not callable(function):
        raise ConfigError(f"chat plugin {name!r}: {found[0].value} is not a function")
    plugin: Plugin = function
    return plugin


def data_path(config: Mapping[str, Any], key: str, default: Path) -> Path:
    """A path setting of a plugin's config (``~`` expanded), or the default."""
    value = config.get(key)
    if value is None:
        return default
    if not isinstance(value, str | Path) or not str(value):
        raise ConfigError(f"{key} must be a path")
    return Path(value).expanduser()
