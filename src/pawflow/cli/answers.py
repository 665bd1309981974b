"""``pawflow inbox`` and ``pawflow answer``: what waits for your answer, and answering it,
through a running server (:class:`pawflow.client.Client`)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from pawflow.cli.server import (
    JSON_OPTION,
    SERVER_OPTION,
    _client,
    _fail,
    _say,
    console,
)
from pawflow.cli.tokens import TOKEN_FILE_OPTION
from pawflow.errors import InvalidInput, PawFlowError

if TYPE_CHECKING:
    from pawflow.client import Client
    from pawflow.records import Interaction


def inbox(
    server: str = SERVER_OPTION,
    token_file: Path | None = TOKEN_FILE_OPTION,
    conversation: str | None = typer.Option(None, help="Only this conversation (id)."),
    everything: bool = typer.Option(
        False, "--all", help="Also the requests you asked that wait for someone else."
    ),
    assigned: str | None = typer.Option(
        None,
        "--assigned",
        help="Only what waits for you as an assignee: all, mine, groups (through a group)"
        " or claimed (claimed by you).",
    ),
    own: bool = typer.Option(
        False, "--mine", help="Only the requests you asked (whoever they wait for)."
    ),
    as_json: bool = JSON_OPTION,
) -> None:
    """List what waits for your answer: your own requests, those assigned to you, to your
    groups or to someone you stand in for; soonest due first."""
    from rich.markup import escape
    from rich.table import Table

    which = "visible" if everything or own else "all"
    if assigned is not None:
        which = "assigned" if assigned == "all" else assigned
    with _client(server, token_file) as client:
        try:
            found = client.list_waiting(which)
            titles = {c.id: c.title for c in client.list_conversations()}
            me = client.whoami() if own else None
        except PawFlowError as exc:
            raise _fail(exc) from exc
    shown = [
        (record, why, waiting)
        for record, why, waiting in found
        if (conversation is None or record.conversation_id == conversation)
        and (not own or record.owner == me)
    ]
    pending = [record for record, _, _ in shown]
    waits = {record.id: waiting for record, why, waiting in shown if why == "others"}
    if as_json:
        listed = [
            {**item.to_dict(), **({"waiting_for": waits[item.id]} if item.id in waits else {})}
            for item in pending
        ]
        _say(json.dumps({"interactions": listed}))
        return
    if not pending:
        console.print("Nothing is waiting for you.")
        return
    mine = len(pending) - len(waits)
    title = f"{mine} waiting for you" + (f" · {len(waits)} for others" if waits else "")
    table = Table(title=title, show_lines=True)
    table.add_column("id", no_wrap=True)  # copied into pawflow answer: never folded
    table.add_column("kind", no_wrap=True)
    table.add_column("question", overflow="fold")
    for item in pending:
        lines = [escape(item.message)]
        if item.title:
            lines.insert(0, f"[bold]{escape(item.title)}[/]")
        if item.options:
            lines.append("options: " + escape(", ".join(o["value"] for o in item.options)))
        surface = item.ui_surface or {}
        if surface.get("type") == "tool_approval":
            arguments = json.dumps(surface.get("arguments"), ensure_ascii=False)
            lines.append(f"{escape(str(surface.get('tool')))} {escape(arguments)}")
            lines.append("decide: yes · no · --edit JSON · --reject REASON · --respond TEXT")
        where = f"in {escape(titles.get(item.conversation_id) or item.conversation_id)}"
        if item.expires_at is not None:
            where += f" · expires {item.expires_at.strftime('%Y-%m-%d %H:%M')} UTC"
        lines.append(f"[dim]{where}[/]")
        if item.id in waits:
            lines.append(f"[yellow]Waiting for {escape(', '.join(waits[item.id]))}[/]")
        table.add_row(item.id, item.kind, "\n".join(lines))
    console.print(table)


EACH_OPTION = typer.Option(
    [],
    "--each",
    help="Give the same answer to these requests too (ids, comma-separated or repeated),"
    " all of the request's kind: each is answered on its own, the refused ones listed.",
)


def answer(
    request_id: str = typer.Argument(..., help="The request's id (see pawflow inbox)."),
    value: str | None = typer.Argument(
        None,
        help="confirm: yes/no; choice: a value; multi: a,b; form: JSON; file: a path; "
        "'-' reads the value from standard input.",
    ),
    edit: str | None = typer.Option(
        None, "--edit", help="A tool approval: run with these arguments (a JSON object)."
    ),
    reject: str | None = typer.Option(
        None, "--reject", help="A tool approval: do not run it; the reason the model reads."
    ),
    respond: str | None = typer.Option(
        None, "--respond", help="A tool approval: do not run it; this text is its result."
    ),
    always: str | None = typer.Option(
        None,
        "--always",
        help="A tool approval: allow this call from now on in this "
        "'conversation' or for this 'agent' (with yes or --edit).",
    ),
    each: list[str] = EACH_OPTION,
    server: str = SERVER_OPTION,
    token_file: Path | None = TOKEN_FILE_OPTION,
    as_json: bool = JSON_OPTION,
) -> None:
    """Answer a pending request (with --each, several of one kind); the value is read
    according to the request's kind."""
    if value == "-":
        value = sys.stdin.read().rstrip("\n")
    more = [part.strip() for entry in each for part in entry.split(",") if part.strip()]
    with _client(server, token_file) as client:
        try:
            record = client.get_interaction(request_id)
            decided = decision_of(
                record, value, edit=edit, reject=reject, respond=respond, always=always
            )
            if decided is None and value is None:
                raise InvalidInput("give the answer (or --edit, --reject, --respond)")
            typed = decided if decided is not None else typed_answer(record, value or "", client)
            if more:
                answered, refused = client.respond_each([request_id, *more], typed, via="cli")
                _each_said(answered, refused, as_json)
                return
            done = client.respond_interaction(request_id, typed, via="cli")
        except PawFlowError as exc:
            raise _fail(exc) from exc
    if as_json:
        _say(json.dumps({"interaction": done.to_dict()}))
        return
    if done.pending:  # a vote of a quorum (docs/governance.md)
        console.print(f"Voted on [bold]{done.id}[/]: the request waits for more approvals.")
        return
    console.print(f"Answered [bold]{done.id}[/]: {json.dumps(done.answer)}")


# Besides the words of the one reader (pawflow.reading): what a script passes.
_LITERAL = {"true": True, "1": True, "allow": True, "false": False, "0": False}


def _each_said(answered: list[Interaction], refused: list[dict[str, Any]], as_json: bool) -> None:
    """What ``answer --each`` did: the answered, then each refused one with why (exit 1)."""
    from rich.markup import escape

    if as_json:
        listed = [item.to_dict() for item in answered]
        _say(json.dumps({"answered": listed, "refused": refused}))
    else:
        voted = sum(1 for item in answered if item.pending)
        line = f"Answered {len(answered) - voted} of {len(answered) + len(refused)}"
        console.print(line + (f" (and voted on {voted})" if voted else "") + ".")
        for item in refused:
            request_id, error = escape(str(item["request_id"])), escape(str(item["error"]))
            console.print(f"[red]Not answered[/] [bold]{request_id}[/]: {error}.")
    if refused:
        raise typer.Exit(1)


def _yes_no(value: str) -> bool | None:
    from pawflow.reading.words import read_yes_no

    literal = _LITERAL.get(value.strip().lower())
    return literal if literal is not None else read_yes_no(value)


def decision_of(
    record: Interaction,
    value: str | None,
    *,
    edit: str | None,
    reject: str | None,
    respond: str | None,
    always: str | None,
) -> dict[str, Any] | None:
    """The decision the options give on a tool approval (None: not one, read as usual)."""
    given = [
        flag
        for flag, v in (("--edit", edit), ("--reject", reject), ("--respond", respond))
        if v is not None
    ]
    surface = record.ui_surface or {}
    if surface.get("type") != "tool_approval":
        if given or always is not None:
            raise InvalidInput(f"{(given or ['--always'])[0]} answers a tool approval only")
        return None
    if len(given) > 1 or (given and value is not None):
        raise InvalidInput("give one decision: a yes or no, --edit, --reject or --respond")
    decision: dict[str, Any]
    if edit is not None:
        try:
            arguments = json.loads(edit)
        except ValueError as exc:
            raise InvalidInput("--edit takes a JSON object, such as '{\"a\": 1}'") from exc
        decision = {"decision": "edit", "arguments": arguments}
    elif reject is not None:
        decision = {"decision": "reject", **({"reason": reject} if reject.strip() else {})}
    elif respond is not None:
        decision = {"decision": "respond", "text": respond}
    elif value is not None and _yes_no(value) is not None:
        decision = {"decision": "approve" if _yes_no(value) else "reject"}
    else:
        return None
    if always is not None:
        decision["always"] = always
    return decision


def typed_answer(record: Interaction, value: str, client: Client) -> Any:
    """The JSON value for ``value`` as text typed for a request of ``record``'s kind.

    The words are read by the one reader of typed answers (:mod:`pawflow.reading`): "yse"
    is a yes, "the 2nd one" a pick; what it cannot read goes to the server as typed, which
    validates and normalizes (and says what would do).
    """
    from pawflow import reading
    from pawflow.interactions import Kind

    kind = Kind(record.kind)
    if kind is Kind.CONFIRM:
        said = _yes_no(value)
        return value if said is None else said
    values = [o["value"] for o in record.options or []]
    if kind is Kind.CHOICE:
        if value.strip() in values:
            return value.strip()
        typed = reading.read(record, value)
        return _option(record, value.strip()) if typed is None else typed.value
    if kind is Kind.MULTI:
        parts = [part.strip() for part in value.split(",") if part.strip()]
        if all(part in values for part in parts):
            return parts
        typed = reading.read(record, value)
        return [_option(record, part) for part in parts] if typed is None else typed.value
    if kind is Kind.INTEGER:
        text = value.strip()
        return int(text) if text.lstrip("+-").isdigit() else text
    if kind is Kind.FORM:
        try:
            return json.loads(value)
        except ValueError as exc:
            raise InvalidInput(
                'a form answer is a JSON object, such as \'{"name": "Ada"}\''
            ) from exc
    if kind is Kind.FILE:
        path = Path(value).expanduser()
        if not path.is_file():
            raise InvalidInput(f"no such file: {value}")
        return client.upload(path, request_id=record.id).to_dict()
    return value


def _option(record: Interaction, text: str) -> str:
    """An option's value from its value, its label, or its 1-based position."""
    options = record.options or []
    values = [o["value"] for o in options]
    if text in values:
        return text
    for option in options:
        if option["label"].casefold() == text.casefold():
            return option["value"]
    if text.isdigit() and 1 <= int(text) <= len(values):
        return values[int(text) - 1]
    return text


def register(app: typer.Typer) -> None:
    """Add ``inbox`` and ``answer`` to the ``pawflow`` app."""
    app.command("inbox")(inbox)
    app.command("answer")(answer)
