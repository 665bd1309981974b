"""PawFlow over the Model Context Protocol: tools to ask a person, and the pending list.

``pawflow mcp`` serves them over stdio (through a server's HTTP API); ``pawflow serve``
serves them over streamable HTTP at ``/mcp`` (see :func:`pawflow.mcp.http.mount`).
"""

from __future__ import annotations

from pawflow.mcp.server import PENDING_URI, build_server

__all__ = ["PENDING_URI", "build_server"]
