"""The tools' behaviour, over a :class:`~pawflow.mcp.backend.Backend`.

A question is always a durable request first. When the connected client can elicit and
the question fits a flat form, it is also asked through ``elicitation/create``, and
whichever answer comes first wins through ``respond_interaction``: the store lets exactly
one transition out of ``pending`` happen, so there is one answer and one resume. An answer
from elsewhere cancels the elicitation; an answer through elicitation closes the request
everywhere else (every client hears ``interaction_answered``).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import anyio
import mcp_types as types
from mcp.shared.exceptions import MCPError, UrlElicitationRequiredError
from pydantic import BaseModel, ValidationError

from pawflow.errors import (
    AlreadyVoted,
    FieldError,
    Forbidden,
    InvalidInput,
    NotFound,
    NotPending,
    PawFlowError,
)
from pawflow.mcp import schemas
from pawflow.mcp.backend import Backend
from pawflow.mcp.elicitation import ElicitationForm, form_for, retry_message
from pawflow.records import Interaction
from pawflow.server.models import in_words

log = logging.getLogger("pawflow.mcp")
R = TypeVar("R")

ELICIT_ATTEMPTS = 3
"""How many times an elicited answer the server refuses is asked again, errors shown."""

Elicit = Callable[[str, dict[str, Any]], Awaitable[types.ElicitResult]]
"""Sends ``elicitation/create`` (message, requested schema) to the connected client."""
ElicitUrl = Callable[[str, str, str], Awaitable[types.ElicitResult]]
"""Sends a URL-mode ``elicitation/create`` (message, url, elicitation id)."""
Complete = Callable[[str], Awaitable[None]]
"""Sends ``notifications/elicitation/complete`` for an elicitation id."""
RecordRound = Callable[[str, str], Awaitable[None]]
"""Records a client's reply to an elicitation of a request (request id, action)."""


@dataclass
class Elicitor:
    """How this call may ask the person directly, besides the durable request."""

    form: Elicit | None = None
    url: ElicitUrl | None = None
    complete: Complete | None = None
    url_required: bool = False
    """The client takes URL mode but this call cannot send it a request: answer -32042."""
    forms: bool = True
    """Whether the client takes form mode; one that takes only URL mode is sent to the
    answer page for every question."""
    app: bool = False
    """The host renders PawFlow's MCP App with the result (:mod:`pawflow.mcp.apps`): the
    person answers there, so the call returns the request at once, asking nothing else."""


@dataclass
class Outcome:
    record: Interaction
    errors: list[FieldError] | None = None
    elicitation: str | None = None
    """The client's reply to the last elicitation when it was no answer: decline or cancel."""
    in_app: bool = False
    """The request is shown to the person in the host's app."""


class _ToolError(Exception):
    """A tool call the caller must fix; its text is the tool result."""

    def __init__(self, message: str, errors: list[FieldError] | None = None) -> None:
        super().__init__(message)
        self.errors = errors or []


def _validation_errors(exc: ValidationError) -> list[FieldError]:
    return [
        FieldError(".".join(str(p) for p in error["loc"]), in_words(error))
        for error in exc.errors()
    ]


def parse(model: type[BaseModel], arguments: dict[str, Any] | None) -> Any:
    try:
        return model.model_validate(arguments or {})
    except ValidationError as exc:
        raise _ToolError("invalid arguments", _validation_errors(exc)) from None


async def call_tool(
    backend: Backend,
    name: str,
    arguments: dict[str, Any] | None,
    elicit: Elicit | Elicitor | None,
    *,
    record_round: RecordRound | None = None,
) -> types.CallToolResult:
    """Run one tool call; every failure the caller can act on is an error result."""
    elicitor = elicit if isinstance(elicit, Elicitor) else Elicitor(form=elicit)
    spec = schemas.TOOLS_BY_NAME.get(name)
    if spec is None:
        return error_result(f"unknown tool {name!r}")

    async def run() -> types.CallToolResult:
        args = parse(spec.arguments, arguments)
        if name == "list_interactions":
            items, cursor = await backend.page(
                status=args.status,
                conversation_id=args.conversation_id,
                kind=None if args.kind is None else str(args.kind),
                limit=args.limit,
                cursor=args.cursor,
            )
            page = {"interactions": [i.to_dict() for i in items], "next_cursor": cursor}
            return result(page, f"{len(items)} request(s)" + (", more" if cursor else ""))
        if name in ASKING:
            outcome = await _ask(backend, args, elicitor, record_round)
        elif name == "get_interaction":
            outcome = Outcome(await backend.get(args.request_id))
        elif name == "cancel_interaction":
            outcome = Outcome(await backend.cancel(args.request_id))
        else:  # wait_for_answer
            outcome = Outcome(await backend.wait(args.request_id, args.seconds))
        return interaction_result(backend, outcome)

    return await guarded(run)


ASKING = frozenset({"request_confirmation", "request_user_input"})


async def guarded(run: Callable[[], Awaitable[R]]) -> R | types.CallToolResult:
    """``run``'s result, or the error result the caller can act on."""
    try:
        return await run()
    except _ToolError as exc:
        return error_result(str(exc), exc.errors)
    except InvalidInput as exc:
        return error_result(str(exc), exc.errors)
    except NotFound as exc:
        # The same words whether the id is unknown or another user's.
        return error_result(f"{exc.what} not found")
    except NotPending as exc:
        return error_result(f"the request is already {exc.status}")
    except PawFlowError as exc:
        return error_result(str(exc))


async def publish(backend: Backend, args: Any) -> Interaction:
    """The durable request an asking tool's arguments describe."""
    fields = args.model_dump(exclude_none=True, exclude={"wait_seconds", "conversation_id"})
    kind = fields.pop("mode", None) or str(fields.pop("kind"))
    message = fields.pop("message")
    conversation_id = args.conversation_id or await backend.default_conversation()
    return await backend.request(conversation_id, kind, message, **fields)


async def _ask(
    backend: Backend, args: Any, elicitor: Elicitor, record_round: RecordRound | None
) -> Outcome:
    record = await publish(backend, args)
    if elicitor.app:
        return Outcome(record, in_app=True)
    window = args.wait_seconds or schemas.MAX_WAIT
    form = form_for(record)
    if record.pending and elicitor.form is not None and form is not None:
        return await _race(backend, record, form, elicitor.form, window, record_round)
    by_url = form is None or not elicitor.forms
    if record.pending and by_url and elicitor.url_required:
        raise url_required(backend, record)
    if record.pending and by_url and elicitor.url is not None:
        return await _race_url(backend, record, elicitor, window, record_round)
    if args.wait_seconds > 0:
        record = await backend.wait(record.id, args.wait_seconds)
    return Outcome(record)


def url_required(backend: Backend, record: Interaction) -> MCPError:
    """The -32042 error sending the person to the request's answer page."""
    page = types.ElicitRequestURLParams(
        message=record.message, url=backend.answer_url(record), elicitation_id=record.id
    )
    return UrlElicitationRequiredError([page], f"answer request {record.id} at its page")


async def _race_url(
    backend: Backend,
    record: Interaction,
    elicitor: Elicitor,
    window: float,
    record_round: RecordRound | None,
) -> Outcome:
    """Send the person to the answer page (URL mode) and wait for the answer from anywhere;
    once it comes, tell the client the elicitation is complete."""
    ask = elicitor.url
    assert ask is not None
    outcome = Outcome(record)
    url = backend.answer_url(record)

    async def durable(scope: anyio.CancelScope) -> None:
        found = await backend.wait(record.id, window)
        if not found.pending:
            outcome.record = found
            if elicitor.complete is not None:
                await elicitor.complete(record.id)
        scope.cancel()

    async def elicited(scope: anyio.CancelScope) -> None:
        try:
            reply = await ask(record.message, url, record.id)
            if record_round is not None:
                await record_round(record.id, reply.action)
            if reply.action == "accept":
                return  # the person is on the page: keep waiting for the answer
            outcome.elicitation = reply.action
        except Exception:  # the client failed to elicit: the durable request still stands
            log.warning("URL elicitation failed for request %s", record.id, exc_info=True)
        scope.cancel()

    async with anyio.create_task_group() as tg:
        tg.start_soon(durable, tg.cancel_scope)
        tg.start_soon(elicited, tg.cancel_scope)
    if outcome.record.pending:
        outcome.record = await backend.get(record.id)
    return outcome


async def _race(
    backend: Backend,
    record: Interaction,
    form: ElicitationForm,
    elicit: Elicit,
    window: float,
    record_round: RecordRound | None = None,
) -> Outcome:
    """Ask through elicitation while waiting for an answer from anywhere else."""
    outcome = Outcome(record)

    async def durable(scope: anyio.CancelScope) -> None:
        found = await backend.wait(record.id, window)
        if not found.pending:
            outcome.record = found
        scope.cancel()  # answered elsewhere, or the window closed: stop asking

    async def elicited(scope: anyio.CancelScope) -> None:
        message = record.message
        try:
            for _ in range(ELICIT_ATTEMPTS):
                reply = await elicit(message, form.schema)
                if record_round is not None:
                    await record_round(record.id, reply.action)
                if reply.action != "accept":
                    outcome.elicitation = reply.action
                    break  # declined or dismissed: the request stays pending for later
                try:
                    outcome.record = await backend.respond(record.id, form.answer(reply.content))
                    outcome.errors = None
                    break
                except NotPending:
                    outcome.record = await backend.get(record.id)
                    break
                except InvalidInput as exc:
                    outcome.errors = exc.errors or [FieldError("", str(exc))]
                    message = retry_message(record, outcome.errors)
                except (Forbidden, AlreadyVoted) as exc:  # not the caller's to give: no retry
                    outcome.errors = [FieldError("", exc.message)]
                    break
        except Exception:  # the client failed to elicit: the durable request still stands
            log.warning("elicitation failed for request %s", record.id, exc_info=True)
        scope.cancel()

    async with anyio.create_task_group() as tg:
        tg.start_soon(durable, tg.cancel_scope)
        tg.start_soon(elicited, tg.cancel_scope)
    if outcome.record.pending:
        outcome.record = await backend.get(record.id)
    return outcome


def interaction_result(backend: Backend, outcome: Outcome) -> types.CallToolResult:
    record = outcome.record
    url = backend.answer_url(record)
    body: dict[str, Any] = {"interaction": record.to_dict(), "answer_url": url}
    if outcome.elicitation is not None:
        body["elicitation"] = outcome.elicitation
    if outcome.errors:
        body["errors"] = [e.to_dict() for e in outcome.errors]
    if record.status == "answered":
        summary = f"answered: {json.dumps(record.answer)}"
    elif record.pending and outcome.in_app:
        summary = (
            f"pending: request {record.id} is shown to the person in the app above (they can "
            f"also answer at {url}); call wait_for_answer or get_interaction later"
        )
    elif record.pending:
        summary = (
            f"pending: request {record.id} waits for an answer (the person can answer at "
            f"{url}); call wait_for_answer or get_interaction later"
        )
    else:
        summary = f"{record.status}: request {record.id} will get no answer"
    return result(body, summary)


def result(body: dict[str, Any], summary: str) -> types.CallToolResult:
    text = summary + "\n" + json.dumps(body, ensure_ascii=False)
    return types.CallToolResult(
        content=[types.TextContent(text=text)], structured_content=body, is_error=False
    )


def error_result(message: str, errors: list[FieldError] | None = None) -> types.CallToolResult:
    lines = [message] + [f"{e.path or 'answer'}: {e.message}" for e in errors or []]
    return types.CallToolResult(content=[types.TextContent(text="\n".join(lines))], is_error=True)
