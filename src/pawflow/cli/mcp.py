"""``pawflow mcp``: PawFlow as an MCP server over stdio, for MCP clients to launch.

The token never goes on the command line, which every local user can read (``ps``,
``/proc/PID/cmdline``): it comes from ``PAWFLOW_TOKEN`` (the MCP client's ``env``) or from
a file (``--token-file``), or the file ``pawflow login`` keeps. Standard input is the MCP
connection itself, so it cannot carry the token. ``--token`` is refused, as by every
command (:mod:`pawflow.cli.tokens`).
"""

from __future__ import annotations

from pathlib import Path

import typer

from pawflow.cli.server import SERVER_OPTION, errors
from pawflow.cli.tokens import TOKEN_FILE_OPTION, find_token
from pawflow.errors import ApiError, ServerUnreachable


def mcp(
    server: str = SERVER_OPTION,
    token_file: Path | None = TOKEN_FILE_OPTION,
    conversation: str = typer.Option(
        "MCP",  # pawflow.mcp.backend.DEFAULT_CONVERSATION, without loading the MCP SDK
        envvar="PAWFLOW_MCP_CONVERSATION",
        help="Title of your conversation that questions go to when a tool names none.",
    ),
) -> None:
    """Serve the MCP tools over stdio (for an MCP client's configuration).

    The API token comes from a file (--token-file), PAWFLOW_TOKEN, or what pawflow login
    kept, never from the command line.
    """
    from rich.markup import escape

    from pawflow import extras
    from pawflow.client import Client

    extras.require("mcp", part="pawflow mcp")
    from pawflow.mcp.stdio import run_stdio

    secret, source = find_token(server, token_file)
    with Client(server, secret, token_source=source) as client:
        try:
            client.whoami()
        except ApiError as exc:  # a TokenRefused says where the token came from, and the fix
            errors.print(f"[red]Refused:[/] {escape(exc.message)}", soft_wrap=True)
            raise typer.Exit(1) from None
        except ServerUnreachable as exc:
            # The tools fail until it can be reached; the MCP client may start first.
            errors.print(f"[yellow]Not checked:[/] {escape(str(exc))}")
        run_stdio(client, conversation=conversation)


def register(app: typer.Typer) -> None:
    app.command("mcp")(mcp)
