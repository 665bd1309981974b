"""``pawflow serve`` and the terminal basics ``inbox`` and ``answer``.

Each command imports what it uses when it runs: ``pawflow --help`` loads none of the server,
``inbox`` and ``answer`` only the HTTP client (tests/test_startup.py pins both).
"""

from __future__ import annotations

import sys
from contextlib import ExitStack, closing
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from pawflow.cli.tokens import client_for
from pawflow.errors import (
    AlreadyVoted,
    ApiError,
    ConfigError,
    Forbidden,
    InvalidInput,
    NotFound,
    NotPending,
    PawFlowError,
    StoreError,
    TokenRefused,
)
from pawflow.redaction import redact_logs

if TYPE_CHECKING:
    from socket import socket

    from rich.console import Console

    from pawflow.client import Client
    from pawflow.server.settings import ServerSettings
    from pawflow.store import Store


class Printer:
    """A rich console made on first use, so that a command that prints nothing through it
    (``--help`` first) never loads rich."""

    def __init__(self, *, stderr: bool = False) -> None:
        self.stderr = stderr
        self._console: Console | None = None

    def print(self, *objects: Any, **options: Any) -> None:
        if self._console is None:
            from rich.console import Console

            self._console = Console(stderr=self.stderr)
        self._console.print(*objects, **options)


console = Printer()
errors = Printer(stderr=True)

DB_HELP = (
    "Store URL: sqlite:///path.db or postgresql://…; by default pawflow.db in your data folder"
    " (~/.local/share/pawflow on Linux, $XDG_DATA_HOME/pawflow when that is set,"
    " ~/Library/Application Support/pawflow on macOS), whatever the current folder."
)
DB_OPTION = typer.Option(None, "--db", envvar="PAWFLOW_DB", help=DB_HELP, show_default=False)
SERVER_OPTION = typer.Option(
    "http://127.0.0.1:8765", "--server", envvar="PAWFLOW_SERVER", help="Server URL."
)
AGENTS_OPTION = typer.Option(
    None, "--agents", envvar="PAWFLOW_AGENTS", help="A YAML file of agents (docs/agents.md)."
)
JSON_OPTION = typer.Option(
    False, "--json", help="Print the records as JSON (as the HTTP API returns them)."
)


def _say(text: str) -> None:
    """Print and flush at once: the operator (or a test) reads these lines while we serve."""
    typer.echo(text)
    sys.stdout.flush()


# -- serve -------------------------------------------------------------------------------------


def serve(
    host: str = typer.Option("127.0.0.1", envvar="PAWFLOW_HOST", help="Address to bind."),
    port: int = typer.Option(8765, envvar="PAWFLOW_PORT", help="Port to bind."),
    db: str | None = DB_OPTION,
    public_url: str | None = typer.Option(
        None, envvar="PAWFLOW_PUBLIC_URL", help="URL browsers use (sign-in links, Origin)."
    ),
    demo: bool = typer.Option(
        False,
        "--demo",
        help="The demos, as make run starts them: the deploy agent, a tour of every kind of"
        " question, an expense form from a deployed flow, the planner, organizer and inbox chat"
        " plugins, their conversations (made once) for the user local, and on each start a"
        " sign-in link and the lines that start pawflow chat.",
    ),
    log_level: str = typer.Option("info", envvar="PAWFLOW_LOG_LEVEL", help="Server log level."),
    agents: Path | None = AGENTS_OPTION,
    workers: int = typer.Option(
        1,
        "--workers",
        envvar="PAWFLOW_WORKERS",
        min=1,
        help="Server processes sharing the port and the store (about one per core); each"
        " runs the background work too, shared out by leases.",
    ),
    wait_for_db: str | None = typer.Option(
        None,
        "--wait-for-db",
        envvar="PAWFLOW_WAIT_FOR_DB",
        help="How long to wait at start for the database to be reachable (30s by default;"
        " 0: not at all).",
        show_default=False,
    ),
) -> None:
    """Run the server: web chat at /, the API under /api, /healthz, /openapi.json.

    With --workers N, N processes serve one port and one store under a supervisor that
    replaces a worker that dies and stops them all on SIGINT or SIGTERM.

    Other settings come from PAWFLOW_* variables (PAWFLOW_SWEEP_INTERVAL, PAWFLOW_MAX_BODY,
    PAWFLOW_RATE_LIMIT, PAWFLOW_EVENT_RETENTION, PAWFLOW_DB_TIMEOUT, PAWFLOW_METRICS,
    PAWFLOW_LOG_FORMAT, …; see pawflow.server.settings); traces from the OTEL_* variables
    (docs/operations.md).
    """
    from rich.markup import escape

    from pawflow.server.running import listen
    from pawflow.server.settings import ServerSettings
    from pawflow.telemetry import configure_logging

    try:
        settings = ServerSettings.from_env(
            host=host, port=port, db=db, public_url=public_url, wait_for_db=wait_for_db
        )
    except InvalidInput as exc:
        raise typer.BadParameter(str(exc)) from exc
    # The port first: a taken one ends here, before a sign-in link is printed.
    try:
        sock = listen(settings)
    except ConfigError as exc:
        errors.print(f"[red]Cannot serve:[/] {escape(exc.message)}")
        raise typer.Exit(1) from None
    configure_logging(log_level, settings.log_format)
    redact_logs()
    # Ctrl+C (SIGINT) is how a server run from a terminal is stopped: a normal stop, exit 0,
    # whether it comes while serving (uvicorn re-raises it once it has shut down) or while
    # starting (or waiting for its database). `make run` then prints no error.
    try:
        with closing(sock):
            _serve(settings, sock, workers, demo=demo, agents=agents, log_level=log_level)
    except KeyboardInterrupt:
        return


def _serve(
    settings: ServerSettings,
    sock: socket,
    workers: int,
    *,
    demo: bool,
    agents: Path | None,
    log_level: str,
) -> None:
    """``serve`` until interrupted: the store opened (waiting for its database), then this
    process's app, or the workers'."""
    from rich.markup import escape

    from pawflow import serve as serving

    try:
        store = serving.open_waiting(
            settings, lambda line: errors.print(escape(line), soft_wrap=True)
        )
    except StoreError as exc:  # one line naming the problem and the setting, no traceback
        errors.print(f"[red]Cannot serve:[/] {escape(str(exc))}", soft_wrap=True)
        raise typer.Exit(1) from None
    if workers > 1:
        _serve_workers(
            settings, sock, workers, demo=demo, agents=agents, log_level=log_level, store=store
        )
        return
    # The agents' MCP sessions stay open while the server runs.
    with ExitStack() as connections:
        try:
            specs = []
            if agents is not None:  # the agents' MCP client, only for agents that use one
                from pawflow.agent.config import load_agents

                specs = load_agents(agents, connections=connections)
            prepared = serving.prepare(settings, demo=demo, agents=specs, store=store)
        except InvalidInput as exc:  # e.g. an agent named like the demo agent
            store.close()
            raise typer.BadParameter(exc.message, param_hint="--agents") from exc
        except StoreError as exc:
            errors.print(f"[red]Cannot serve:[/] {escape(str(exc))}", soft_wrap=True)
            raise typer.Exit(1) from None
        except BaseException:
            store.close()
            raise
        for line in prepared.lines:
            _say(line)
        serving.run(prepared, settings, log_level=log_level, sock=sock)


def _serve_workers(
    settings: ServerSettings,
    sock: socket,
    workers: int,
    *,
    demo: bool,
    agents: Path | None,
    log_level: str,
    store: Store,
) -> None:
    """``serve --workers N``: the agents file read and the greeting made here, once (on
    ``store``, closed after it); each worker then opens the agents' sessions and builds its
    app itself."""
    from rich.markup import escape

    from pawflow import serve as serving

    if agents is not None:
        from pawflow.agent.config import parse

        try:
            parse(agents.read_text("utf-8"), source=agents.name)
        except OSError as exc:
            store.close()
            raise typer.BadParameter(f"cannot read {agents}: {exc}", param_hint="--agents") from exc
        except InvalidInput as exc:
            store.close()
            raise typer.BadParameter(exc.message, param_hint="--agents") from exc
    try:
        lines = serving.greet_once(settings, demo=demo, store=store)
    except StoreError as exc:
        errors.print(f"[red]Cannot serve:[/] {escape(str(exc))}", soft_wrap=True)
        raise typer.Exit(1) from None
    for line in lines:
        _say(line)
    if not serving.run_workers(
        settings,
        workers=workers,
        sock=sock,
        demo=demo,
        agents=None if agents is None else str(agents.resolve()),
        log_level=log_level,
    ):
        errors.print("[red]Cannot serve:[/] a server process could not start (see its log).")
        raise typer.Exit(1)


# -- inbox and answer --------------------------------------------------------------------------


def _client(server: str, token_file: Path | None) -> Client:
    """A client of ``server`` with the caller's token (docs/security.md: never given on the
    command line), which knows where the token was read from for a refusal's message."""
    return client_for(server, token_file)


def _fail(exc: PawFlowError) -> typer.Exit:
    from rich.markup import escape

    if isinstance(exc, TokenRefused):
        errors.print(f"[red]Refused:[/] {escape(exc.message)}", soft_wrap=True)
    elif isinstance(exc, InvalidInput):
        errors.print("[red]Refused:[/] fix this and try again:")
        for error in exc.errors:
            errors.print(f"  {error.path or 'answer'}: {error.message}")
    elif isinstance(exc, NotPending):
        errors.print(f"[yellow]Too late:[/] that request is already {exc.status}.")
    elif isinstance(exc, NotFound):
        errors.print(f"[red]Not found:[/] no such {exc.what} for you.")
    elif isinstance(exc, AlreadyVoted):
        errors.print(f"[yellow]Already voted:[/] {escape(exc.message)}.")
    elif isinstance(exc, Forbidden):
        errors.print(f"[red]Not yours to answer:[/] {escape(exc.message)}.")
    elif isinstance(exc, ApiError):
        errors.print(f"[red]Server said {exc.status}:[/] {exc.message}")
    else:
        errors.print(f"[red]Error:[/] {exc}")
    return typer.Exit(1)


def register(app: typer.Typer) -> None:
    """Add this part's commands to the ``pawflow`` app."""
    app.command("serve")(serve)
