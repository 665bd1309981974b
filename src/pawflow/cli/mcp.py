"""``pawflow mcp``: PawFlow as an MCP server over stdio, for MCP clients to launch."""

from __future__ import annotations

import typer

from pawflow.cli.server import SERVER_OPTION, TOKEN_OPTION, errors
from pawflow.errors import ApiError, ServerUnreachable


def mcp(
    server: str = SERVER_OPTION,
    token: str | None = TOKEN_OPTION,
    conversation: str = typer.Option(
        "MCP",  # pawflow.mcp.backend.DEFAULT_CONVERSATION, without loading the MCP SDK
        envvar="PAWFLOW_MCP_CONVERSATION",
        help="Title of your conversation that questions go to when a tool names none.",
    ),
) -> None:
    """Serve the MCP tools over stdio (for an MCP client's configuration).

    The token is checked with the server first: one it refuses ends the command at once,
    with the reason on standard error (where MCP clients log what a server says).
    """
    from rich.markup import escape

    from pawflow.client import Client
    from pawflow.mcp.stdio import run_stdio

    if not token:
        errors.print(
            "[red]No token:[/] pass --token or set PAWFLOW_TOKEN (pawflow users add NAME)."
        )
        raise typer.Exit(2)
    with Client(server, token) as client:
        try:
            client.whoami()
        except ApiError as exc:
            errors.print(
                f"[red]Refused:[/] {escape(server)} does not accept this token"
                f" ({escape(exc.message)}). Make one with: pawflow users add NAME"
            )
            raise typer.Exit(1) from None
        except ServerUnreachable as exc:
            # The tools fail until it can be reached; the MCP client may start first.
            errors.print(f"[yellow]Not checked:[/] {escape(str(exc))}")
        run_stdio(client, conversation=conversation)


def register(app: typer.Typer) -> None:
    app.command("mcp")(mcp)
