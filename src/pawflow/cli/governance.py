"""``pawflow groups``, ``pawflow users delegate``, ``pawflow audit export`` (on the store, like
``pawflow users``) and ``pawflow claim`` / ``release`` / ``reassign`` (over the HTTP API, like
``pawflow answer``). See docs/governance.md."""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path
from typing import Any

import typer

from pawflow.cli.server import (
    DB_OPTION,
    JSON_OPTION,
    SERVER_OPTION,
    _client,
    _fail,
    _say,
    errors,
)
from pawflow.cli.tokens import TOKEN_FILE_OPTION
from pawflow.cli.users import users_app
from pawflow.errors import Forbidden, InvalidInput, PawFlowError

groups_app = typer.Typer(
    rich_markup_mode=None,
    help="Groups of users that requests are assigned to.",
    no_args_is_help=True,
)
audit_app = typer.Typer(
    rich_markup_mode=None, help="The audit trail of requests.", no_args_is_help=True
)


def _refused(exc: InvalidInput) -> typer.Exit:
    errors.print(f"[red]Refused:[/] {exc.message}")
    return typer.Exit(2)


@groups_app.command("add")
def groups_add(
    name: str = typer.Argument(..., help="The group (assign to it as group:NAME)."),
    users: list[str] = typer.Argument(..., help="Users to add."),  # noqa: B008
    db: str | None = DB_OPTION,
) -> None:
    """Add users to a group (made on first use)."""
    from pawflow.store import open_store

    try:
        with open_store(db) as store, store.unit() as u:
            members = u.groups.add_members(name, users)
    except InvalidInput as exc:
        raise _refused(exc) from exc
    _say(f"{name}: {', '.join(members)}")


@groups_app.command("remove")
def groups_remove(
    name: str = typer.Argument(..., help="The group."),
    users: list[str] = typer.Argument(None, help="Users to take out; none: the whole group."),  # noqa: B008
    db: str | None = DB_OPTION,
) -> None:
    """Take users out of a group (or remove the group)."""
    from pawflow.store import open_store

    try:
        with open_store(db) as store, store.unit() as u:
            members = u.groups.remove_members(name, users or [])
    except InvalidInput as exc:
        raise _refused(exc) from exc
    _say(f"{name}: {', '.join(members) or '(empty)'}")


@groups_app.command("list")
def groups_list(db: str | None = DB_OPTION, as_json: bool = JSON_OPTION) -> None:
    """Every group and its members."""
    from pawflow.store import open_store

    with open_store(db) as store, store.unit(write=False) as u:
        found = u.groups.all_groups()
    if as_json:
        _say(json.dumps({"groups": found}))
        return
    for name, members in found.items():
        _say(f"{name}: {', '.join(members)}")


@users_app.command("delegate")
def users_delegate(
    principal: str = typer.Argument(..., help="Who is away."),
    to: str = typer.Option(..., "--to", help="Who answers for them meanwhile."),
    until: str = typer.Option(..., "--until", help="Until when: an ISO date or date and time."),
    db: str | None = DB_OPTION,
) -> None:
    """Let another user answer the requests assigned to PRINCIPAL until a date."""
    from pawflow.store import open_store

    try:
        with open_store(db) as store, store.unit() as u:
            done = u.groups.delegate(principal, to=to, until=_moment(until))
    except InvalidInput as exc:
        raise _refused(exc) from exc
    _say(f"{done['delegate']} answers for {done['principal']} until {done['until']}")


def _moment(text: str) -> Any:
    from datetime import UTC, datetime

    from pawflow import durations

    if len(text) == 10:  # a date alone: its start, in UTC
        try:
            return datetime.fromisoformat(text).replace(tzinfo=UTC)
        except ValueError as exc:
            raise typer.BadParameter(f"not a date: {text}") from exc
    try:
        return durations.parse_deadline(text)
    except InvalidInput as exc:
        raise typer.BadParameter(exc.message) from exc


@audit_app.command("export")
def audit_export(
    since: str = typer.Option(..., "--since", help="From this date (or date and time) on."),
    output_format: str = typer.Option("jsonl", "--format", help="jsonl or csv."),
    db: str | None = DB_OPTION,
) -> None:
    """Write every audit step since a date to standard output, oldest first."""
    from pawflow.store import open_store

    if output_format not in ("jsonl", "csv"):
        raise typer.BadParameter("jsonl or csv", param_hint="--format")
    with open_store(db) as store, store.unit(write=False) as u:
        entries = list(u.audit.since(_moment(since)))
    if output_format == "jsonl":
        for entry in entries:
            sys.stdout.write(json.dumps(entry, sort_keys=True) + "\n")
        return
    columns = ["seq", "at", "request_id", "action", "actor", "via", "detail"]
    writer = csv.DictWriter(sys.stdout, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    for entry in entries:
        row = {key: entry[key] for key in columns}
        row["detail"] = json.dumps(entry["detail"], sort_keys=True) if entry["detail"] else ""
        writer.writerow(row)


def _act(name: str, as_json: bool, server: str, token_file: Path | None, **body: Any) -> None:
    with _client(server, token_file) as client:
        try:
            found = client.action(name, via="cli", **body)
        except Forbidden as exc:
            errors.print(f"[red]Forbidden:[/] {exc.message}")
            raise typer.Exit(1) from exc
        except PawFlowError as exc:
            raise _fail(exc) from exc
    if as_json:
        _say(json.dumps(found))
        return
    policy = found.get("policy") or {}
    holder = policy.get("claimed_by")
    state = f"being handled by {holder}" if holder else "not claimed"
    _say(f"{found['interaction']['id']}: {state}; assignees {', '.join(policy['assignees'])}")


def claim(
    request_id: str = typer.Argument(...),
    server: str = SERVER_OPTION,
    token_file: Path | None = TOKEN_FILE_OPTION,
    as_json: bool = JSON_OPTION,
) -> None:
    """Take a request on: the other assignees see you handle it until the claim runs out."""
    _act("claim_interaction", as_json, server, token_file, request_id=request_id)


def release(
    request_id: str = typer.Argument(...),
    server: str = SERVER_OPTION,
    token_file: Path | None = TOKEN_FILE_OPTION,
    as_json: bool = JSON_OPTION,
) -> None:
    """Give a request you claimed back to all of its assignees."""
    _act("release_interaction", as_json, server, token_file, request_id=request_id)


def reassign(
    request_id: str = typer.Argument(...),
    to: list[str] = typer.Option(..., "--to", help="A user or group:NAME (repeat for more)."),  # noqa: B008
    server: str = SERVER_OPTION,
    token_file: Path | None = TOKEN_FILE_OPTION,
    as_json: bool = JSON_OPTION,
) -> None:
    """Hand a request to others, within what its requester allowed."""
    _act("reassign_interaction", as_json, server, token_file, request_id=request_id, to=to)


def register(app: typer.Typer) -> None:
    """Add this part's commands to the ``pawflow`` app."""
    app.add_typer(groups_app, name="groups")
    app.add_typer(audit_app, name="audit")
    app.command("claim")(claim)
    app.command("release")(release)
    app.command("reassign")(reassign)
