"""``pawflow mcp``: the MCP server over stdio, speaking to a PawFlow server's HTTP API.

An MCP client (a desktop assistant, a coding agent) launches it as a subprocess; every
tool call becomes an action of the user whose token it was given.
"""

from __future__ import annotations

from typing import Any

import anyio
from mcp.server.context import ServerRequestContext
from mcp.server.stdio import stdio_server

from pawflow.client import Client
from pawflow.mcp.backend import DEFAULT_CONVERSATION
from pawflow.mcp.remote import RemoteBackend
from pawflow.mcp.server import build_server


async def serve_stdio(client: Client, *, conversation: str = DEFAULT_CONVERSATION) -> None:
    """Serve one MCP client on this process's stdin and stdout until it hangs up."""
    backend = RemoteBackend(client, conversation=conversation)

    def resolve(ctx: ServerRequestContext[Any, Any]) -> RemoteBackend:
        return backend

    server = build_server(resolve)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def run_stdio(client: Client, *, conversation: str = DEFAULT_CONVERSATION) -> None:
    """Serve on stdio until the MCP client hangs up; ``client`` stays open (the caller's)."""
    anyio.run(lambda: serve_stdio(client, conversation=conversation))
