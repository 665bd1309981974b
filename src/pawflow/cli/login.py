"""``pawflow login`` and ``pawflow logout``: keep (or forget) your API token for a server.

The token is read from ``--token-file``, ``PAWFLOW_TOKEN``, or typed at a hidden prompt (or
piped on standard input), checked with the server, and kept in the per-user config file
(mode 0600; :func:`pawflow.cli.tokens.config_file`) under the server's URL. Every command
that talks to that server then reads it from there.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import typer

from pawflow.cli.server import SERVER_OPTION, _fail, _say
from pawflow.cli.tokens import TOKEN_ENV, TOKEN_FILE_OPTION, keep_token, read_token_file
from pawflow.errors import PawFlowError


def login(server: str = SERVER_OPTION, token_file: Path | None = TOKEN_FILE_OPTION) -> None:
    """Keep your API token for a server (checked first), so that commands need no
    PAWFLOW_TOKEN; the token comes from --token-file, PAWFLOW_TOKEN, or a hidden prompt."""
    from pawflow.client import Client

    if token_file is not None:
        secret, source = read_token_file(token_file), f"the file {token_file}"
    elif os.environ.get(TOKEN_ENV, "").strip():
        secret, source = os.environ[TOKEN_ENV].strip(), TOKEN_ENV
    elif sys.stdin.isatty():
        secret = typer.prompt("API token (not shown)", hide_input=True).strip()
        source = "what you typed"
    else:
        secret, source = sys.stdin.readline().strip(), "standard input"
    if not secret:
        raise typer.BadParameter("no token given", param_hint="the token")
    with Client(server, secret, token_source=source) as client:
        try:
            user = client.whoami()
        except PawFlowError as exc:
            raise _fail(exc) from exc
    path = keep_token(server, secret)
    _say(f"Signed in to {client.server} as {user}; the token is kept in {path} (for you only).")


def logout(server: str = SERVER_OPTION) -> None:
    """Forget the token kept for a server (it stays valid: pawflow users token revoke ends it)."""
    path = keep_token(server, None)
    _say(f"No token kept for {server.rstrip('/')} any more ({path}).")


def register(app: typer.Typer) -> None:
    app.command("login")(login)
    app.command("logout")(logout)
