"""A tiny MCP server for tests: tools over a log file given as its one argument."""

from __future__ import annotations

import sys
from pathlib import Path

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

LOG = Path(sys.argv[1])
server = MCPServer("files")


@server.tool()
def delete_files(pattern: str) -> str:
    """Delete the files matching a pattern."""
    with LOG.open("a") as log:
        log.write(pattern + "\n")
    return f"deleted 3 files matching {pattern}"


@server.tool()
def count_files(folder: str) -> int:
    """Count the files in a folder."""
    return len(folder)


@server.tool()
def format_disk() -> str:
    """Never offered to an agent: it is not in any allow-list."""
    LOG.write_text("formatted\n")
    return "formatted"


@server.tool()
def fail(reason: str) -> str:
    """Always fails."""
    raise ToolError(reason)


if __name__ == "__main__":
    server.run()
