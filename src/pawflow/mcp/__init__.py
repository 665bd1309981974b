"""PawFlow over the Model Context Protocol: tools to ask a person, and the pending list.

``pawflow mcp`` serves them over stdio (through a server's HTTP API); ``pawflow serve``
serves them over streamable HTTP at ``/mcp`` (see :func:`pawflow.mcp.mounting.mount`).

The names below are loaded on first use (PEP 562): mounting ``/mcp`` does not load the
MCP SDK, its first request does.
"""

from __future__ import annotations

import typing

from pawflow import lazy

if typing.TYPE_CHECKING:
    from pawflow.mcp.server import PENDING_URI, build_server

__getattr__, __dir__ = lazy.exports(
    __name__, dict.fromkeys(("PENDING_URI", "build_server"), "pawflow.mcp.server")
)

__all__ = ["PENDING_URI", "build_server"]
