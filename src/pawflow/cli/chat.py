"""``pawflow chat``: the conversation in a full-screen terminal app."""

from __future__ import annotations

from pathlib import Path

import typer

from pawflow.cli.server import SERVER_OPTION, _client, errors
from pawflow.cli.tokens import TOKEN_FILE_OPTION


def chat(
    conversation: str | None = typer.Argument(None, help="Open this conversation (id)."),
    server: str = SERVER_OPTION,
    token_file: Path | None = TOKEN_FILE_OPTION,
) -> None:
    """Talk to agents and answer every kind of request, live, in the terminal."""
    from rich.markup import escape

    from pawflow.tui import ChatApp

    with _client(server, token_file) as client:
        app = ChatApp(client, conversation_id=conversation)
        app.run()
    if app.refusal is not None:  # said in the app, and again here where it can be copied
        errors.print(f"[red]Refused:[/] {escape(app.refusal)}", soft_wrap=True)
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.command("chat")(chat)
