"""``pawflow flow …``: run a flow once, or deploy it for ``pawflow serve`` to run."""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from pawflow.cli.server import DB_HELP
from pawflow.errors import HopLimitReached, InvalidInput, NotFound, PawFlowError
from pawflow.redaction import redact_logs

if TYPE_CHECKING:
    from pawflow.store import Store

flow_app = typer.Typer(
    rich_markup_mode=None,
    name="flow",
    help="Run flows once, or deploy them to run continuously in pawflow serve.",
    no_args_is_help=True,
)


def _fail(message: str) -> typer.Exit:
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(1)


def _attributes(pairs: list[str]) -> dict[str, str]:
    attributes: dict[str, str] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name:
            raise _fail(f"--attr takes NAME=VALUE, not {pair!r}")
        attributes[name] = value
    return attributes


def _content(content: str | None, content_file: Path | None) -> bytes:
    if content is not None and content_file is not None:
        raise _fail("give --content or --content-file, not both")
    if content_file is not None:
        try:
            return content_file.read_bytes()
        except OSError as exc:
            raise _fail(f"cannot read {content_file}: {exc.strerror}") from exc
    return (content or "").encode()


def _open(db: str | None) -> Store:
    from pawflow.store import open_store

    try:
        return open_store(db)
    except PawFlowError as exc:
        raise _fail(str(exc)) from exc


def _imports(modules: list[str]) -> None:
    from pawflow.flow import import_tasks

    for module in modules:
        try:
            import_tasks(module, Path.cwd())
        except InvalidInput as exc:
            raise _fail(exc.message) from exc


@flow_app.command("run")
def run(
    file: Annotated[Path, typer.Argument(help="The flow's YAML file.")],
    attr: Annotated[
        list[str] | None, typer.Option("--attr", "-a", help="NAME=VALUE (repeat).")
    ] = None,
    content: Annotated[
        str | None, typer.Option("--content", help="Content of the FlowFile.")
    ] = None,
    content_file: Annotated[
        Path | None, typer.Option("--content-file", help="Content from a file.")
    ] = None,
    db: Annotated[str | None, typer.Option("--db", envvar="PAWFLOW_DB", help=DB_HELP)] = None,
    user: Annotated[
        str | None, typer.Option("--user", help="Act for this user (with --conversation).")
    ] = None,
    conversation: Annotated[
        str | None,
        typer.Option("--conversation", help="Publish requests and notifications here."),
    ] = None,
    modules: Annotated[
        list[str] | None, typer.Option("--import", help="Module or .py file of tasks.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the endings as JSON.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Do not print log lines.")] = False,
    max_hops: Annotated[
        int,
        typer.Option(
            "--max-hops", min=1, help="Tasks one FlowFile may pass before the run is refused."
        ),
    ] = 1000,  # pawflow.flow.engine.DEFAULT_MAX_HOPS, without loading the runtime
) -> None:
    """Run a flow once over one FlowFile and print where each FlowFile ended.

    The run is in memory: its queues live in this process only, and a FlowFile that passes
    more than --max-hops tasks stops it (a flow that loops without end). Deploy the flow for
    durable queues, waits and timers.
    """
    from pawflow.flow import FlowFile, deployments, load_flow, run_batch

    if not quiet:
        logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(message)s")
        redact_logs()
    _imports(modules or [])
    try:
        flow = load_flow(file)
    except InvalidInput as exc:
        raise _fail(str(exc)) from exc
    seed = FlowFile.create(_content(content, content_file), _attributes(attr or []))
    store = _open(db) if db or conversation else None
    try:
        scope = None
        if conversation is not None:
            assert store is not None
            try:
                scope = deployments.resolve_scope(store, conversation, user)
            except (InvalidInput, NotFound) as exc:
                raise _fail(f"{exc} ({conversation})") from exc
        try:
            result = run_batch(flow, [seed], store=store, scope=scope, max_hops=max_hops)
        except HopLimitReached as exc:
            raise _fail(f"{exc.message} (--max-hops)") from exc
    finally:
        if store is not None:
            store.close()
    if as_json:
        typer.echo(json.dumps([e.to_dict() for e in result.endings], indent=2))
    else:
        count = len(result.endings)
        typer.echo(f"flow {flow.name}: {count} FlowFile{'s' if count != 1 else ''} ended")
        for ending in result.endings:
            typer.echo(f"  {ending.flowfile.id}  at {ending.task_id} by {ending.relationship}")
            shown = {k: v for k, v in sorted(ending.flowfile.attributes.items())}
            reason = shown.pop("failure.reason", None)
            if shown:
                typer.echo("    " + "  ".join(f"{k}={v}" for k, v in shown.items()))
            if reason is not None:
                typer.echo(f"    failure.reason: {reason}")
    if result.failures:
        raise typer.Exit(1)


@flow_app.command("deploy")
def deploy(
    file: Annotated[Path, typer.Argument(help="The flow's YAML file.")],
    conversation: Annotated[
        str, typer.Option("--conversation", help="The conversation it asks in.")
    ],
    user: Annotated[
        str | None,
        typer.Option("--user", help="The deploying user (default: the conversation's owner)."),
    ] = None,
    db: Annotated[
        str | None, typer.Option("--db", envvar="PAWFLOW_DB", help=DB_HELP, show_default=False)
    ] = None,
) -> None:
    """Store a flow for pawflow serve to run continuously; prints its id last."""
    from pawflow.flow import deployments

    try:
        text = file.read_text(encoding="utf-8")
    except OSError as exc:
        raise _fail(f"cannot read {file}: {exc.strerror}") from exc
    with _open(db) as store:
        try:
            deployment, created = deployments.deploy(
                store, text, conversation_id=conversation, user=user, base_dir=file.parent
            )
        except InvalidInput as exc:
            raise _fail(str(exc)) from exc
        except NotFound as exc:
            raise _fail(f"{exc} ({conversation})") from exc
    what = "deployed" if created else f"updated (version {deployment.version})"
    typer.echo(
        f"{deployment.name} {what} for {deployment.user} in conversation"
        f" {deployment.conversation_id}; pawflow serve runs it"
    )
    typer.echo(deployment.id)


@flow_app.command("list")
def list_(
    db: Annotated[
        str | None, typer.Option("--db", envvar="PAWFLOW_DB", help=DB_HELP, show_default=False)
    ] = None,
    user: Annotated[
        str | None, typer.Option("--user", help="Only this user's deployments.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """List deployed flows, with the FlowFiles queued, running and parked at each task."""
    from pawflow.flow.status import deployment_statuses

    with _open(db) as store:
        found = deployment_statuses(store, user=user)
    if as_json:
        typer.echo(json.dumps([s.to_dict() for s in found], indent=2))
        return
    if not found:
        typer.echo("no deployed flows")
        return
    for state in found:
        d = state.deployment
        status = d.status + (f" ({d.status_reason})" if d.status_reason else "")
        typer.echo(
            f"{d.id}  {d.name}  {status}  v{d.version}  user={d.user}"
            f"  conversation={d.conversation_id}"
        )
        if d.last_error:
            typer.echo(f"    error: {d.last_error.splitlines()[0]}")
        for task, counts in state.tasks.items():
            if any(counts.values()):
                typer.echo(f"    {task}: {_counts(counts)}")
        if state.incoming:
            typer.echo(f"    {state.incoming} handed over, not queued yet")


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{counts[name]} {name}" for name in ("queued", "running", "parked"))


@flow_app.command("status")
def status(
    deployment_id: Annotated[str, typer.Argument(help="The deployment id.")],
    db: Annotated[
        str | None, typer.Option("--db", envvar="PAWFLOW_DB", help=DB_HELP, show_default=False)
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Show a deployment: where it runs, and the FlowFiles queued, running, parked per task."""
    from pawflow.flow.status import deployment_status

    with _open(db) as store:
        try:
            state = deployment_status(store, deployment_id)
        except NotFound as exc:
            raise _fail(f"{exc}: {deployment_id}") from exc
    if as_json:
        typer.echo(json.dumps(state.to_dict(), indent=2))
        return
    d = state.deployment
    status = d.status + (f" ({d.status_reason})" if d.status_reason else "")
    typer.echo(f"{d.name} ({d.id}) {status}, version {d.version}")
    typer.echo(f"runs in: {state.runner or 'no process now'}")
    width = max([len("task"), *(len(task) for task in state.tasks)])
    typer.echo(f"{'task':<{width}}  queued  running  parked")
    for task, counts in state.tasks.items():
        typer.echo(
            f"{task:<{width}}  {counts['queued']:>6}  {counts['running']:>7}  {counts['parked']:>6}"
        )
    if state.incoming:
        typer.echo(f"{state.incoming} FlowFile(s) handed over, not queued yet")


def _set_status(deployment_id: str, db: str | None, status: str) -> None:
    from pawflow.flow import deployments

    with _open(db) as store:
        try:
            found = deployments.change_status(
                store,
                deployment_id,
                "running" if status == "running" else "stopped",
                reason=None if status == "running" else "stopped by a user",
            )
        except NotFound as exc:
            raise _fail(f"{exc}: {deployment_id}") from exc
    typer.echo(f"{found.name} ({found.id}) {found.status}")


@flow_app.command("stop")
def stop(
    deployment_id: Annotated[str, typer.Argument(help="The deployment id.")],
    db: Annotated[
        str | None, typer.Option("--db", envvar="PAWFLOW_DB", help=DB_HELP, show_default=False)
    ] = None,
) -> None:
    """Stop a deployed flow; what it parked stays parked until it starts again."""
    _set_status(deployment_id, db, "stopped")


@flow_app.command("start")
def start(
    deployment_id: Annotated[str, typer.Argument(help="The deployment id.")],
    db: Annotated[
        str | None, typer.Option("--db", envvar="PAWFLOW_DB", help=DB_HELP, show_default=False)
    ] = None,
) -> None:
    """Start a stopped flow again; what resolved meanwhile is delivered to it."""
    _set_status(deployment_id, db, "running")


@flow_app.command("inject")
def inject(
    deployment_id: Annotated[str, typer.Argument(help="The deployment id.")],
    task: Annotated[
        str | None, typer.Option("--task", help="Entry task (default: the start).")
    ] = None,
    attr: Annotated[
        list[str] | None, typer.Option("--attr", "-a", help="NAME=VALUE (repeat).")
    ] = None,
    content: Annotated[
        str | None, typer.Option("--content", help="Content of the FlowFile.")
    ] = None,
    content_file: Annotated[
        Path | None, typer.Option("--content-file", help="Content from a file.")
    ] = None,
    db: Annotated[
        str | None, typer.Option("--db", envvar="PAWFLOW_DB", help=DB_HELP, show_default=False)
    ] = None,
) -> None:
    """Send a FlowFile into a deployed flow (delivered when and where it runs)."""
    from pawflow.flow import FlowFile, deployments

    flowfile = FlowFile.create(_content(content, content_file), _attributes(attr or []))
    with _open(db) as store:
        try:
            entry = deployments.inject(store, deployment_id, flowfile, task)
        except (InvalidInput, NotFound) as exc:
            raise _fail(str(exc)) from exc
    typer.echo(f"FlowFile {flowfile.id} queued for task {entry} of {deployment_id}")


def register(app: typer.Typer) -> None:
    """Add this part's commands to the ``pawflow`` app."""
    app.add_typer(flow_app, name="flow")
