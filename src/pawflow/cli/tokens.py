"""Where a command's API token comes from: never the command line.

Every local user can read a command line (``ps``, ``/proc/PID/cmdline``), so ``--token`` is
refused by every command with one message. A command that talks to a server reads its token
from ``--token-file PATH`` (``PAWFLOW_TOKEN_FILE``), else ``PAWFLOW_TOKEN``, else the file
``pawflow login`` wrote for that server (readable by its owner only, in the user's config
folder: ``~/.config/pawflow/credentials.json`` on Linux).
"""

from __future__ import annotations

import functools
import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from typer._click.core import Command, Context, Parameter
from typer.core import TyperGroup

if TYPE_CHECKING:
    from pawflow.client import Client

TOKEN_ENV = "PAWFLOW_TOKEN"
TOKEN_FILE_OPTION = typer.Option(
    None,
    "--token-file",
    envvar="PAWFLOW_TOKEN_FILE",
    help="A file holding your API token (its first line); by default PAWFLOW_TOKEN, else the"
    " token `pawflow login` kept for this server.",
    dir_okay=False,
    show_default=False,
)
REFUSED = (
    "[red]--token is refused:[/] every local user can read a command line. Put the token in"
    " PAWFLOW_TOKEN or in a file (--token-file PATH), or keep it with `pawflow login`."
)


def _complain(text: str) -> None:
    """Say ``text`` (rich markup) on standard error."""
    from rich.console import Console

    Console(stderr=True).print(text, soft_wrap=True)


# -- --token, refused by every command -------------------------------------------------------


def _refuse(ctx: Context, _: Parameter, value: str | None) -> None:
    if value is not None:
        _complain(REFUSED)
        ctx.exit(2)


@functools.cache
def _refusing_option() -> Parameter:
    """A hidden, eager ``--token`` that refuses any value (made as typer makes options)."""
    probe = typer.Typer()

    @probe.command()
    def take(
        token: str | None = typer.Option(
            None,
            "--token",
            hidden=True,
            is_eager=True,
            expose_value=False,
            callback=_refuse,
            help="Refused: use PAWFLOW_TOKEN, --token-file or pawflow login.",
        ),
    ) -> None: ...

    return typer.main.get_command(probe).params[0]


def _commands(command: Command) -> Iterator[Command]:
    yield command
    if isinstance(command, TyperGroup):
        for sub in command.commands.values():
            yield from _commands(sub)


class RefusesTokenGroup(TyperGroup):
    """The root group: every command under it takes ``--token`` only to refuse it."""

    def parse_args(self, ctx: Context, args: list[str]) -> list[str]:
        refusing = _refusing_option()
        for command in _commands(self):
            if not any(param.name == "token" for param in command.params):
                command.params.append(refusing)
        return super().parse_args(ctx, args)


# -- reading the token -------------------------------------------------------------------------


def config_file() -> Path:
    """Where ``pawflow login`` keeps tokens, one per server."""
    import platformdirs

    return Path(platformdirs.user_config_dir("pawflow", appauthor=False)) / "credentials.json"


def _kept() -> dict[str, str]:
    try:
        found = json.loads(config_file().read_text("utf-8"))
    except (OSError, ValueError):
        return {}
    servers = found.get("servers") if isinstance(found, dict) else None
    if not isinstance(servers, dict):
        return {}
    return {str(k): str(v) for k, v in servers.items() if isinstance(v, str)}


def _server_key(server: str) -> str:
    return server.strip().rstrip("/")


def kept_token(server: str) -> str | None:
    return _kept().get(_server_key(server))


def keep_token(server: str, token: str | None) -> Path:
    """Keep ``token`` for ``server`` (None: forget it), in a file readable by its owner only."""
    from pawflow.server.credentials import _save_secret

    kept = _kept()
    if token is None:
        kept.pop(_server_key(server), None)
    else:
        kept[_server_key(server)] = token
    path = config_file()
    _save_secret(path, json.dumps({"servers": kept}, indent=2))
    return path


def read_token_file(path: Path) -> str:
    """The first line of ``path``; a file others may read gets a warning."""
    try:
        mode = path.stat().st_mode
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise typer.BadParameter(f"cannot read {path}: {exc}", param_hint="--token-file") from exc
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        _complain(f"[yellow]Warning:[/] {path} can be read by others: chmod 600 {path}")
    return lines[0].strip() if lines else ""


NO_TOKEN = (
    "[red]No token:[/] set PAWFLOW_TOKEN, pass --token-file PATH, or run `pawflow login`"
    " (`pawflow users add NAME` makes a token where the server's store is)."
)


def find_token(server: str, token_file: Path | None) -> tuple[str, str]:
    """The token for ``server`` and where it was read from (for a refusal's message); exits
    saying how to give one when there is none."""
    if token_file is not None:
        secret, source = read_token_file(token_file), f"the file {token_file}"
    elif os.environ.get(TOKEN_ENV, "").strip():
        secret, source = os.environ[TOKEN_ENV].strip(), TOKEN_ENV
    else:
        secret = kept_token(server) or ""
        source = f"the file {config_file()} (pawflow login)"
    if not secret:
        _complain(NO_TOKEN)
        raise typer.Exit(2)
    return secret, source


def client_for(server: str, token_file: Path | None) -> Client:
    from pawflow.client import Client

    secret, source = find_token(server, token_file)
    return Client(server, secret, token_source=source)
