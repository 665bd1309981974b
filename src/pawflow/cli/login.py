"""``pawflow login`` and ``pawflow logout``: keep (or forget) your API token for a server;
``pawflow tokens``: your own tokens on that server, through its API (an admin's: anyone's).

The token is read from ``--token-file``, ``PAWFLOW_TOKEN``, or typed at a hidden prompt (or
piped on standard input), checked with the server, and kept in the per-user config file
(mode 0600; :func:`pawflow.cli.tokens.config_file`) under the server's URL. Every command
that talks to that server then reads it from there.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import typer

from pawflow.cli.server import JSON_OPTION, SERVER_OPTION, _client, _fail, _say
from pawflow.cli.tokens import TOKEN_ENV, TOKEN_FILE_OPTION, keep_token, read_token_file
from pawflow.errors import PawFlowError

tokens_app = typer.Typer(
    rich_markup_mode=None,
    help="Your API tokens on a server: list, create, rotate, revoke (an admin: anyone's).",
    no_args_is_help=True,
)


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


# -- your tokens, through the API ----------------------------------------------------------


def _act(server: str, token_file: Path | None, action: str, **body: Any) -> dict[str, Any]:
    with _client(server, token_file) as client:
        try:
            return client.action(action, **body)
        except PawFlowError as exc:
            raise _fail(exc) from exc


def _line(token: dict[str, Any]) -> str:
    used = (token["last_used_at"] or "never")[:16].replace("T", " ")
    until = token["expires_at"]
    ends = "does not expire" if until is None else f"expires {until[:16].replace('T', ' ')} UTC"
    return (
        f"{token['id']}  {token['user']}  {token['name'] or '-'}  made {token['created_at'][:10]}"
        f"  last used {used}  {ends}"
    )


def _made(found: dict[str, Any], as_json: bool) -> None:
    if as_json:
        _say(json.dumps(found))
        return
    _say(_line(found["info"]))
    _say("Shown once; keep it with pawflow login, or in a file for --token-file:")
    _say(found["token"])


@tokens_app.command("list")
def tokens_list(
    everyone: bool = typer.Option(False, "--all", help="Everyone's tokens (admins)."),
    user: str | None = typer.Option(None, "--user", help="Another user's tokens (admins)."),
    server: str = SERVER_OPTION,
    token_file: Path | None = TOKEN_FILE_OPTION,
    as_json: bool = JSON_OPTION,
) -> None:
    """List your tokens: id, owner, name, made, last used, expiry (never a secret)."""
    found = _act(server, token_file, "list_tokens", all=everyone or None, user=user)
    if as_json:
        _say(json.dumps(found))
        return
    for token in found["tokens"]:
        _say(_line(token))
    if not found["tokens"]:
        _say("no tokens")


@tokens_app.command("create")
def tokens_create(
    name: str = typer.Option("", "--name", help="The token's name, shown in listings."),
    expires: str | None = typer.Option(
        None, "--expires", help="90d, 12h…; by default the server's PAWFLOW_TOKEN_MAX_AGE."
    ),
    server: str = SERVER_OPTION,
    token_file: Path | None = TOKEN_FILE_OPTION,
    as_json: bool = JSON_OPTION,
) -> None:
    """Make another token of yours; the token is the last line printed."""
    _made(_act(server, token_file, "create_token", name=name, expires=expires), as_json)


@tokens_app.command("rotate")
def tokens_rotate(
    token_id: str = typer.Argument(..., help="The token's id (tok_…, see pawflow tokens list)."),
    expires: str | None = typer.Option(
        None, "--expires", help="By default as long as the old one was."
    ),
    server: str = SERVER_OPTION,
    token_file: Path | None = TOKEN_FILE_OPTION,
    as_json: bool = JSON_OPTION,
) -> None:
    """Replace a token by a new one; the old one stops at once. The token is the last line."""
    found = _act(server, token_file, "rotate_token", token_id=token_id, expires=expires)
    _made(found, as_json)


@tokens_app.command("revoke")
def tokens_revoke(
    token_id: str = typer.Argument(..., help="The token's id (tok_…)."),
    server: str = SERVER_OPTION,
    token_file: Path | None = TOKEN_FILE_OPTION,
) -> None:
    """Revoke a token: it stops at once."""
    gone = _act(server, token_file, "revoke_token", token_id=token_id)
    _say(f"revoked {gone['id']} of {gone['user']}")


def register(app: typer.Typer) -> None:
    app.command("login")(login)
    app.command("logout")(logout)
    app.add_typer(tokens_app, name="tokens")
