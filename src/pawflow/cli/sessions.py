"""``pawflow session inspect`` and ``pawflow run inspect``: what is waiting, and on what."""

from __future__ import annotations

import typer

from pawflow.cli.server import DB_OPTION
from pawflow.errors import NotFound

session_app = typer.Typer(
    rich_markup_mode=None, help="What a conversation is waiting on.", no_args_is_help=True
)
run_app = typer.Typer(
    rich_markup_mode=None, help="Agent runs: their checkpoints and questions.", no_args_is_help=True
)


@session_app.command("inspect")
def session_inspect(
    session_id: str = typer.Argument(..., help="The session (conversation) id."),
    db: str | None = DB_OPTION,
) -> None:
    """Print what the conversation is waiting on, the checkpoint behind it, and its history."""
    from pawflow.chat.inspect import describe_session
    from pawflow.store import open_store

    with open_store(db) as store:
        try:
            lines = describe_session(store, session_id)
        except NotFound:
            typer.echo(f"no session {session_id} in this store", err=True)
            raise typer.Exit(1) from None
    for line in lines:
        typer.echo(line)


@run_app.command("inspect")
def run_inspect(
    run_id: str = typer.Argument(..., help="The agent run id."),
    db: str | None = DB_OPTION,
) -> None:
    """Print a run's checkpoints, what it is waiting on, and the questions it asked."""
    from pawflow.chat.inspect import describe_run
    from pawflow.store import open_store

    with open_store(db) as store:
        try:
            lines = describe_run(store, run_id)
        except NotFound:
            typer.echo(f"no run {run_id} in this store", err=True)
            raise typer.Exit(1) from None
    for line in lines:
        typer.echo(line)


def register(app: typer.Typer) -> None:
    app.add_typer(session_app, name="session")
    app.add_typer(run_app, name="run")
