"""Tools of external MCP servers, for a PawFlow agent, under the same approval rules.

An :class:`McpServerConfig` names a server (a command to launch over stdio, or a URL of
streamable HTTP), the tools an agent may use from it (an allow-list: a server that grows
a tool gives the agent nothing new), and which of them need the user's approval before
each call. :class:`McpToolset` connects once, keeps the session open on a thread of its
own, and turns each allowed tool into a :class:`~pawflow.agent.tools.Tool` whose schema is
the server's. An approved-only tool is ``consequential``: the agent's toolbox asks the
user first, exactly as for a built-in tool.

Tool names become ``<server>__<tool>``, so two servers' tools never collide. The MCP SDK is
the ``mcp`` extra, loaded when a toolset connects: an agents file reads without it, and an
agent with ``mcp_servers`` says which extra to install.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from contextlib import AbstractContextManager, ExitStack, asynccontextmanager
from typing import TYPE_CHECKING, Any, Literal

from anyio.from_thread import BlockingPortal, start_blocking_portal
from pydantic import BaseModel, ConfigDict, Field, model_validator

from pawflow import extras
from pawflow.agent.tools import Tool, ToolOutcome
from pawflow.errors import InvalidInput
from pawflow.redaction import remember_settings, remember_url

if TYPE_CHECKING:
    import mcp_types as types
    from mcp import Client
    from mcp.client._transport import TransportStreams

PART = "the MCP tools of agents (mcp_servers)"

SEPARATOR = "__"
_SERVER_NAME = r"^[A-Za-z][A-Za-z0-9_-]{0,30}$"
_TOOL_NAME = re.compile(r"^[A-Za-z0-9_-]{1,30}$")


class McpServerConfig(BaseModel):
    """One external MCP server, as an agents file describes it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=_SERVER_NAME, description="Prefix of its tools' names.")
    command: str | None = Field(default=None, description="Program to launch (stdio).")
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] | None = Field(
        default=None, description="Environment of the launched program (None: a minimal one)."
    )
    url: str | None = Field(default=None, description="Streamable HTTP endpoint.")
    headers: dict[str, str] = Field(
        default_factory=dict, description="HTTP headers, such as Authorization."
    )
    tools: list[str] = Field(min_length=1, description="The tools the agent may call.")
    approval: Literal["all", "none"] | list[str] = Field(
        default="all",
        description="Which tools need the user's approval before each call: all, none, "
        "or a list of tool names.",
    )
    timeout: float = Field(default=60.0, gt=0, le=3600, description="Seconds per call.")

    @model_validator(mode="after")
    def _one_transport(self) -> McpServerConfig:
        if (self.command is None) == (self.url is None):
            raise ValueError("give either command (stdio) or url (streamable HTTP)")
        if self.url is not None and not self.url.startswith(("http://", "https://")):
            raise ValueError("url must start with http:// or https://")
        for name in self.tools:
            if not _TOOL_NAME.match(name):
                raise ValueError(f"invalid tool name {name!r}")
        if isinstance(self.approval, list):
            unknown = sorted(set(self.approval) - set(self.tools))
            if unknown:
                raise ValueError(f"approval names tools not in the allow-list: {unknown}")
        return self

    def needs_approval(self, tool: str) -> bool:
        if self.approval == "all":
            return True
        if self.approval == "none":
            return False
        return tool in self.approval

    def client(self) -> Client:
        with extras.needed("mcp", part=PART):  # the SDK, once a toolset connects
            from mcp import Client, StdioServerParameters  # noqa: PLC0415

        if self.command is not None:
            params = StdioServerParameters(command=self.command, args=self.args, env=self.env)
            return Client(params, read_timeout_seconds=self.timeout, mode="legacy")
        return Client(_http(self), read_timeout_seconds=self.timeout, mode="legacy")


@asynccontextmanager
async def _http(config: McpServerConfig) -> AsyncIterator[TransportStreams]:
    """Streamable HTTP with the configured headers; the HTTP client closes with it."""
    assert config.url is not None
    import httpx2  # noqa: PLC0415 - the MCP SDK's HTTP client, with the SDK
    from mcp.client.streamable_http import streamable_http_client  # noqa: PLC0415

    async with (
        httpx2.AsyncClient(headers=config.headers, timeout=config.timeout) as http,
        streamable_http_client(config.url, http_client=http) as streams,
    ):
        yield streams


def _text_of(result: types.CallToolResult) -> str:
    import mcp_types as types  # noqa: PLC0415 - loaded with the SDK by then

    parts = [block.text for block in result.content if isinstance(block, types.TextContent)]
    if not parts and result.structured_content is not None:
        parts.append(json.dumps(result.structured_content, default=str))
    return "\n".join(parts) or "(no content)"


class McpToolset(AbstractContextManager["McpToolset"]):
    """A live connection to one MCP server and the agent tools it gives."""

    def __init__(self, config: McpServerConfig) -> None:
        self.config = config
        # What the server is given to sign in with is masked in outputs and logs.
        remember_settings(config.headers)
        remember_settings(config.env or {})
        remember_url(config.url)
        self._stack = ExitStack()
        self._portal: BlockingPortal | None = None
        self._client: Client | None = None
        self.tools: list[Tool] = []

    def open(self) -> McpToolset:
        """Connect and list the allowed tools; a tool the server lacks is an error."""
        try:
            portal = self._stack.enter_context(start_blocking_portal())
            client = self._stack.enter_context(
                portal.wrap_async_context_manager(self.config.client())
            )
            self._portal, self._client = portal, client
            listed = portal.call(client.list_tools)
        except InvalidInput:
            self.close()
            raise
        except Exception as exc:
            self.close()
            raise InvalidInput(f"cannot reach MCP server {self.config.name!r}: {exc}") from exc
        offered = {tool.name: tool for tool in listed.tools}
        missing = [name for name in self.config.tools if name not in offered]
        if missing:
            self.close()
            raise InvalidInput(f"MCP server {self.config.name!r} has no tool {missing[0]!r}")
        self.tools = [self._tool(offered[name]) for name in self.config.tools]
        return self

    def _tool(self, remote: types.Tool) -> Tool:
        name = remote.name

        def call(**arguments: Any) -> ToolOutcome:
            return self.call(name, arguments)

        return Tool(
            name=f"{self.config.name}{SEPARATOR}{name}",
            description=remote.description or remote.title or name,
            parameters=dict(remote.input_schema),
            function=call,
            consequential=self.config.needs_approval(name),
        )

    def call(self, name: str, arguments: dict[str, Any]) -> ToolOutcome:
        """Call one allowed tool; its failures are the model's to read, never exceptions."""
        if name not in self.config.tools:
            return ToolOutcome.failure(f"{name!r} is not allowed on {self.config.name!r}")
        portal, client = self._portal, self._client
        if portal is None or client is None:
            return ToolOutcome.failure(f"MCP server {self.config.name!r} is not connected")
        try:
            result = portal.call(lambda: client.call_tool(name, arguments))
        except Exception as exc:
            return ToolOutcome.failure(f"MCP server {self.config.name!r}: {exc}")
        text = _text_of(result)
        if result.is_error:
            return ToolOutcome.failure(text)
        data = {} if not isinstance(result.structured_content, dict) else result.structured_content
        return ToolOutcome(text, data=data)

    def close(self) -> None:
        self._portal = self._client = None
        self._stack.close()

    def __enter__(self) -> McpToolset:
        return self.open()

    def __exit__(self, *exc: object) -> None:
        self.close()


def mcp_tools(configs: list[McpServerConfig]) -> tuple[ExitStack, list[Tool]]:
    """Connect to every configured server: its tools, and the stack that closes them all."""
    stack = ExitStack()
    found: list[Tool] = []
    try:
        for config in configs:
            found.extend(stack.enter_context(McpToolset(config)).tools)
    except BaseException:
        stack.close()
        raise
    return stack, found
