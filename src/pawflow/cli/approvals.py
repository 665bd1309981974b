"""Tool approvals from the terminal: deciding (``pawflow answer ID --edit/--reject/…``) and
the "always allow" rules (``pawflow approvals list``, ``show``, ``revoke``)."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from pawflow.cli.server import JSON_OPTION, SERVER_OPTION, _client, _fail, _say
from pawflow.cli.server import console as out
from pawflow.cli.tokens import TOKEN_FILE_OPTION
from pawflow.errors import PawFlowError

approvals_app = typer.Typer(
    rich_markup_mode=None,
    help="Tool approvals: the rules that allow a call without asking, and what ran.",
    no_args_is_help=True,
)


@approvals_app.command("list")
def list_rules(
    conversation: str | None = typer.Option(None, "--conversation", help="Only the rules here."),
    server: str = SERVER_OPTION,
    token_file: Path | None = TOKEN_FILE_OPTION,
    as_json: bool = JSON_OPTION,
) -> None:
    """The "always allow" rules you can see."""
    body = {} if conversation is None else {"conversation_id": conversation}
    with _client(server, token_file) as client:
        try:
            found = client.action("list_approval_rules", **body)
        except PawFlowError as exc:
            raise _fail(exc) from exc
    if as_json:
        _say(json.dumps(found))
        return
    rules = found.get("rules", [])
    if not rules:
        out.print("No approval rules.")
    for rule in rules:
        where = rule["conversation_id"] if rule["scope"] == "conversation" else "every conversation"
        arguments = json.dumps(rule["arguments"], ensure_ascii=False)
        out.print(f"{rule['id']}  {rule['agent']} may run {rule['tool']} {arguments} in {where}")


@approvals_app.command("revoke")
def revoke_rule(
    rule_id: str = typer.Argument(..., help="The rule's id (see pawflow approvals list)."),
    server: str = SERVER_OPTION,
    token_file: Path | None = TOKEN_FILE_OPTION,
    as_json: bool = JSON_OPTION,
) -> None:
    """Revoke an "always allow" rule: the call is asked again from now on."""
    with _client(server, token_file) as client:
        try:
            found = client.action("revoke_approval_rule", rule_id=rule_id)
        except PawFlowError as exc:
            raise _fail(exc) from exc
    if as_json:
        _say(json.dumps(found))
        return
    out.print(f"Revoked [bold]{rule_id}[/]")


@approvals_app.command("show")
def show(
    request_id: str = typer.Argument(..., help="The approval request's id."),
    server: str = SERVER_OPTION,
    token_file: Path | None = TOKEN_FILE_OPTION,
) -> None:
    """A tool approval as JSON: proposed, approved and executed arguments, who decided."""
    with _client(server, token_file) as client:
        try:
            found = client.action("get_tool_approval", request_id=request_id)
        except PawFlowError as exc:
            raise _fail(exc) from exc
    _say(json.dumps(found))


def register(app: typer.Typer) -> None:
    app.add_typer(approvals_app, name="approvals")
