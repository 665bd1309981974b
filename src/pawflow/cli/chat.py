"""``pawflow chat``: the conversation in a full-screen terminal app."""

from __future__ import annotations

import typer

from pawflow.cli.server import SERVER_OPTION, TOKEN_OPTION, _client


def chat(
    conversation: str | None = typer.Argument(None, help="Open this conversation (id)."),
    server: str = SERVER_OPTION,
    token: str | None = TOKEN_OPTION,
) -> None:
    """Talk to agents and answer every kind of request, live, in the terminal."""
    from pawflow.tui import ChatApp

    with _client(server, token) as client:
        ChatApp(client, conversation_id=conversation).run()


def register(app: typer.Typer) -> None:
    app.command("chat")(chat)
