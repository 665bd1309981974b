"""``pawflow mcp``: PawFlow as an MCP server over stdio, for MCP clients to launch."""

from __future__ import annotations

import typer

from pawflow.cli.server import SERVER_OPTION, TOKEN_OPTION, errors
from pawflow.mcp.backend import DEFAULT_CONVERSATION
from pawflow.mcp.stdio import run_stdio


def mcp(
    server: str = SERVER_OPTION,
    token: str | None = TOKEN_OPTION,
    conversation: str = typer.Option(
        DEFAULT_CONVERSATION,
        envvar="PAWFLOW_MCP_CONVERSATION",
        help="Title of your conversation that questions go to when a tool names none.",
    ),
) -> None:
    """Serve the MCP tools over stdio (for an MCP client's configuration)."""

    if not token:
        errors.print(
            "[red]No token:[/] pass --token or set PAWFLOW_TOKEN (pawflow users add NAME)."
        )
        raise typer.Exit(2)
    run_stdio(server, token, conversation=conversation)


def register(app: typer.Typer) -> None:
    app.command("mcp")(mcp)
