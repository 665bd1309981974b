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
from typing import Any

import anyio
import mcp_types as types
from pydantic import BaseModel, ValidationError

from pawflow.errors import FieldError, InvalidInput, NotFound, NotPending, PawFlowError
from pawflow.mcp import schemas
from pawflow.mcp.backend import Backend
from pawflow.mcp.elicitation import ElicitationForm, form_for, retry_message
from pawflow.records import Interaction
from pawflow.server.models import in_words

log = logging.getLogger("pawflow.mcp")

ELICIT_ATTEMPTS = 3
"""How many times an elicited answer the server refuses is asked again, errors shown."""

Elicit = Callable[[str, dict[str, Any]], Awaitable[types.ElicitResult]]
"""Sends ``elicitation/create`` (message, requested schema) to the connected client."""


@dataclass
class Outcome:
    record: Interaction
    errors: list[FieldError] | None = None


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


def _parse(model: type[BaseModel], arguments: dict[str, Any] | None) -> Any:
    try:
        return model.model_validate(arguments or {})
    except ValidationError as exc:
        raise _ToolError("invalid arguments", _validation_errors(exc)) from None


async def call_tool(
    backend: Backend, name: str, arguments: dict[str, Any] | None, elicit: Elicit | None
) -> types.CallToolResult:
    """Run one tool call; every failure the caller can act on is an error result."""
    spec = schemas.TOOLS_BY_NAME.get(name)
    if spec is None:
        return _error(f"unknown tool {name!r}")
    try:
        args = _parse(spec.arguments, arguments)
        if name == "list_interactions":
            items, cursor = await backend.page(
                status=args.status,
                conversation_id=args.conversation_id,
                kind=None if args.kind is None else str(args.kind),
                limit=args.limit,
                cursor=args.cursor,
            )
            page = {"interactions": [i.to_dict() for i in items], "next_cursor": cursor}
            return _result(page, f"{len(items)} request(s)" + (", more" if cursor else ""))
        if name in ("request_confirmation", "request_user_input"):
            outcome = await _ask(backend, args, elicit)
        elif name == "get_interaction":
            outcome = Outcome(await backend.get(args.request_id))
        elif name == "cancel_interaction":
            outcome = Outcome(await backend.cancel(args.request_id))
        else:  # wait_for_answer
            outcome = Outcome(await backend.wait(args.request_id, args.seconds))
        return _interaction_result(backend, outcome)
    except _ToolError as exc:
        return _error(str(exc), exc.errors)
    except InvalidInput as exc:
        return _error(str(exc), exc.errors)
    except NotFound as exc:
        # The same words whether the id is unknown or another user's.
        return _error(f"{exc.what} not found")
    except NotPending as exc:
        return _error(f"the request is already {exc.status}")
    except PawFlowError as exc:
        return _error(str(exc))


async def _ask(backend: Backend, args: Any, elicit: Elicit | None) -> Outcome:
    fields = args.model_dump(exclude_none=True, exclude={"wait_seconds", "conversation_id"})
    kind = fields.pop("mode", None) or str(fields.pop("kind"))
    message = fields.pop("message")
    conversation_id = args.conversation_id or await backend.default_conversation()
    record = await backend.request(conversation_id, kind, message, **fields)
    form = form_for(record) if elicit is not None else None
    if elicit is not None and form is not None:
        window = args.wait_seconds or schemas.MAX_WAIT
        return await _race(backend, record, form, elicit, window)
    if args.wait_seconds > 0:
        record = await backend.wait(record.id, args.wait_seconds)
    return Outcome(record)


async def _race(
    backend: Backend, record: Interaction, form: ElicitationForm, elicit: Elicit, window: float
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
                if reply.action != "accept":
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
        except Exception:  # the client failed to elicit: the durable request still stands
            log.warning("elicitation failed for request %s", record.id, exc_info=True)
        scope.cancel()

    async with anyio.create_task_group() as tg:
        tg.start_soon(durable, tg.cancel_scope)
        tg.start_soon(elicited, tg.cancel_scope)
    if outcome.record.pending:
        outcome.record = await backend.get(record.id)
    return outcome


def _interaction_result(backend: Backend, outcome: Outcome) -> types.CallToolResult:
    record = outcome.record
    url = backend.answer_url(record)
    body: dict[str, Any] = {"interaction": record.to_dict(), "answer_url": url}
    if outcome.errors:
        body["errors"] = [e.to_dict() for e in outcome.errors]
    if record.status == "answered":
        summary = f"answered: {json.dumps(record.answer)}"
    elif record.pending:
        summary = (
            f"pending: request {record.id} waits for an answer (the person can answer at "
            f"{url}); call wait_for_answer or get_interaction later"
        )
    else:
        summary = f"{record.status}: request {record.id} will get no answer"
    return _result(body, summary)


def _result(body: dict[str, Any], summary: str) -> types.CallToolResult:
    text = summary + "\n" + json.dumps(body, ensure_ascii=False)
    return types.CallToolResult(
        content=[types.TextContent(text=text)], structured_content=body, is_error=False
    )


def _error(message: str, errors: list[FieldError] | None = None) -> types.CallToolResult:
    lines = [message] + [f"{e.path or 'answer'}: {e.message}" for e in errors or []]
    return types.CallToolResult(content=[types.TextContent(text="\n".join(lines))], is_error=True)
