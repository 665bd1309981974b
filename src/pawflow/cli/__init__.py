"""The ``pawflow`` command line: thin commands over the library."""

from __future__ import annotations

import os
import sys

from pawflow import __version__, extras

# Without its extra the command says which one to install, before anything imports typer.
with extras.needed("server", part="the pawflow command"):
    import typer

from pawflow.cli import (
    answers,
    approvals,
    chat,
    demo,
    flows,
    governance,
    login,
    mcp,
    server,
    sessions,
    users,
    webhooks,
)
from pawflow.cli.tokens import RefusesTokenGroup
from pawflow.errors import MissingExtra, StoreError
from pawflow.redaction import redact, remember_settings

# Every app of the CLI prints plain help (rich_markup_mode=None): typer's rich panels put a
# type after each flag ("--help <bool>"), as if it took a value.
# Every command refuses --token (a command line is readable by every local user).
app = typer.Typer(
    cls=RefusesTokenGroup,
    rich_markup_mode=None,
    name="pawflow",
    help="Ask a person something and wait for the answer durably.",
    no_args_is_help=True,
    add_completion=False,
)
demo.register(app)
server.register(app)
users.register(app)
login.register(app)
answers.register(app)
flows.register(app)
sessions.register(app)
mcp.register(app)
chat.register(app)
governance.register(app)
webhooks.register(app)
approvals.register(app)


def _version(shown: bool) -> None:
    if shown:
        typer.echo(f"pawflow {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False,
        "--version",
        callback=_version,
        is_eager=True,
        help="Print the version of PawFlow and exit.",
    ),
) -> None:
    """Ask a person something and wait for the answer durably."""
    # Keys, tokens and passwords this process is configured with are masked wherever
    # PawFlow stores or logs text it did not write itself (pawflow.redaction).
    remember_settings(os.environ)


def main() -> None:
    try:
        app()
    except StoreError as exc:
        # The store cannot be opened or used (unreachable, its disk full): one line saying
        # so, not a traceback.
        sys.stderr.write(f"Cannot use the store: {redact(str(exc))}\n")
        sys.exit(1)
    except MissingExtra as exc:  # a command whose part is not installed: which extra it is
        sys.stderr.write(f"{exc}\n")
        sys.exit(1)
