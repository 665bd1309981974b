"""``pawflow mcp``: PawFlow as an MCP server over stdio, for MCP clients to launch.

The token never goes on the command line, which every local user can read (``ps``,
``/proc/PID/cmdline``): it comes from ``PAWFLOW_TOKEN`` (the MCP client's ``env``) or from
a file (``--token-file``). Standard input is the MCP connection itself, so it cannot carry
the token. ``--token`` is refused with a message saying so.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import typer

from pawflow.cli.server import SERVER_OPTION, errors
from pawflow.errors import ApiError, ServerUnreachable

TOKEN_FILE_OPTION = typer.Option(
    None,
    "--token-file",
    envvar="PAWFLOW_TOKEN_FILE",
    help="A file holding your API token (its first line); or set PAWFLOW_TOKEN.",
    dir_okay=False,
)
REFUSED_TOKEN_OPTION = typer.Option(
    None, "--token", hidden=True, help="Refused: use PAWFLOW_TOKEN or --token-file."
)


def read_token_file(path: Path) -> str:
    """The first line of ``path``; a file others may read gets a warning."""
    try:
        mode = path.stat().st_mode
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise typer.BadParameter(f"cannot read {path}: {exc}", param_hint="--token-file") from exc
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        errors.print(f"[yellow]Warning:[/] {path} can be read by others: chmod 600 {path}")
    return lines[0].strip() if lines else ""


def mcp(
    server: str = SERVER_OPTION,
    token_file: Path | None = TOKEN_FILE_OPTION,
    conversation: str = typer.Option(
        "MCP",  # pawflow.mcp.backend.DEFAULT_CONVERSATION, without loading the MCP SDK
        envvar="PAWFLOW_MCP_CONVERSATION",
        help="Title of your conversation that questions go to when a tool names none.",
    ),
    token: str | None = REFUSED_TOKEN_OPTION,
) -> None:
    """Serve the MCP tools over stdio (for an MCP client's configuration).

    The API token comes from PAWFLOW_TOKEN, or from a file (--token-file), never from the
    command line.
    """
    from rich.markup import escape

    from pawflow import extras
    from pawflow.client import TOKEN_ENV, Client

    extras.require("mcp", part="pawflow mcp")
    from pawflow.mcp.stdio import run_stdio

    if token is not None:
        errors.print(
            "[red]--token is refused:[/] every local user can read a command line. Put the"
            " token in PAWFLOW_TOKEN (the MCP client's env) or in a file (--token-file PATH)."
        )
        raise typer.Exit(2)
    if token_file is not None:
        secret, source = read_token_file(token_file), f"the file {token_file}"
    else:
        secret, source = os.environ.get(TOKEN_ENV, "").strip(), TOKEN_ENV
    if not secret:
        errors.print(
            "[red]No token:[/] set PAWFLOW_TOKEN or pass --token-file PATH"
            " (pawflow users add NAME makes one)."
        )
        raise typer.Exit(2)
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
