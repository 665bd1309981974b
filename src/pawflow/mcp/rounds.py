"""The 2026-07-28 generation: asking in multi round-trip requests, and the Tasks extension.

Servers no longer send requests of their own, so an asking tool answers a 2026 client with
an ``InputRequiredResult``: the question as an ``elicitation/create`` in ``inputRequests``
(a form when it fits one and the client takes forms, else a URL-mode elicitation whose URL
is the request's answer page) and a ``requestState``. The client retries the same call with
``inputResponses`` and the state. The durable request exists from the first round on; the
retry answers it through ``respond_interaction``, so the first answer from anywhere wins as
in the handshake era.

The state names the request, a fresh nonce and the attempt. The SDK's
:class:`~mcp.server.request_state.RequestStateBoundary` seals it (AES-GCM) with the caller,
an expiry and the tool call it belongs to, and refuses a state that is altered, expired,
another caller's or for another call. The nonce makes it single-use: each reply is recorded
as a round under it (with its action: accept, decline or cancel), and a state whose round
was recorded already is refused like a forged one. A declined or dismissed question leaves
the request pending.

A call with a ``task`` (the Tasks extension) returns the request as a task at once:
``input_required`` until it is answered anywhere, then ``completed`` (``cancelled``,
``failed`` when it expired); ``tasks/result`` gives the tool's result.
"""

from __future__ import annotations

import json
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.request_state import RequestStateSecurity
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from pawflow import ids
from pawflow.errors import AlreadyVoted, FieldError, Forbidden, InvalidInput, NotFound, NotPending
from pawflow.mcp import schemas
from pawflow.mcp.backend import Backend
from pawflow.mcp.elicitation import form_for, retry_message
from pawflow.mcp.tools import (
    ELICIT_ATTEMPTS,
    Outcome,
    guarded,
    interaction_result,
    parse,
    publish,
)
from pawflow.records import Interaction

TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
INPUT_KEY = "answer"
"""The key of the one input request a round carries."""
STATE_TTL = 900.0
"""How long a ``requestState`` stays valid, in seconds."""
POLL_INTERVAL_MS = 2000
INVALID_STATE = "Invalid or expired requestState"
STATE_KEYS_ENV = "PAWFLOW_MCP_STATE_KEYS"

ToolResult = types.CallToolResult | types.InputRequiredResult | dict[str, Any]


def state_security(
    principal: Callable[[ServerRequestContext[Any, Any]], str],
) -> RequestStateSecurity:
    """How ``requestState`` is sealed: under the keys in ``PAWFLOW_MCP_STATE_KEYS`` (comma
    separated, the first seals; for several processes behind one address), else under a key
    of this process's own. Bound to the caller (``principal``) for :data:`STATE_TTL`."""
    keys = [k for k in os.environ.get(STATE_KEYS_ENV, "").split(",") if k.strip()]
    ring: list[bytes | bytearray | str] = [k.strip() for k in keys] or [os.urandom(32)]
    return RequestStateSecurity(keys=ring, ttl=STATE_TTL, bind_principal=principal)


def is_modern(ctx: ServerRequestContext[Any, Any]) -> bool:
    """Whether the request speaks the stateless 2026 protocol (no server-sent requests)."""
    return ctx.protocol_version in MODERN_PROTOCOL_VERSIONS


@dataclass(frozen=True)
class Modes:
    """The elicitation modes the client declared on this request."""

    form: bool
    url: bool

    @classmethod
    def of(cls, ctx: ServerRequestContext[Any, Any]) -> Modes:
        capabilities = ctx.session.client_capabilities
        elicitation = None if capabilities is None else capabilities.elicitation
        if elicitation is None:
            return cls(form=False, url=False)
        # An empty elicitation capability means form mode (the spec's older shape).
        form = elicitation.form is not None or elicitation.url is None
        return cls(form=form, url=elicitation.url is not None)


@dataclass(frozen=True)
class RoundState:
    """What a ``requestState`` carries (sealed by the SDK's boundary, never seen in clear)."""

    request_id: str
    nonce: str
    attempt: int = 0

    def dump(self) -> str:
        return json.dumps({"r": self.request_id, "n": self.nonce, "a": self.attempt})

    @classmethod
    def load(cls, text: str) -> RoundState:
        try:
            raw = json.loads(text)
            found = cls(str(raw["r"]), str(raw["n"]), int(raw["a"]))
        except (ValueError, KeyError, TypeError):
            raise MCPError(types.INVALID_PARAMS, INVALID_STATE) from None
        return found


def _refused() -> MCPError:
    return MCPError(types.INVALID_PARAMS, INVALID_STATE, {"reason": "invalid_request_state"})


async def call_asking(
    backend: Backend, params: types.CallToolRequestParams, modes: Modes
) -> ToolResult:
    """One round of an asking tool for a 2026 client."""
    spec = schemas.TOOLS_BY_NAME[params.name]

    async def run() -> ToolResult:
        args = parse(spec.arguments, params.arguments)
        if params.request_state is not None:
            state = RoundState.load(params.request_state)
            return await _next_round(backend, args, state, params.input_responses, modes)
        record = await publish(backend, args)
        if params.task is not None:
            return task_created(record)
        return await _first_round(backend, args, record, modes)

    return await guarded(run)


def _input_required(
    record: Interaction, request: types.ElicitRequestParams, attempt: int = 0
) -> types.InputRequiredResult:
    state = RoundState(record.id, ids.new_id(), attempt)
    return types.InputRequiredResult(
        input_requests={INPUT_KEY: types.ElicitRequest(params=request)},
        request_state=state.dump(),
    )


async def _first_round(
    backend: Backend, args: Any, record: Interaction, modes: Modes
) -> types.CallToolResult | types.InputRequiredResult:
    form = form_for(record)
    if record.pending and form is not None and modes.form:
        asked = types.ElicitRequestFormParams(message=record.message, requested_schema=form.schema)
        return _input_required(record, asked)
    if record.pending and (form is None or not modes.form) and modes.url:
        page = types.ElicitRequestURLParams(message=record.message, url=backend.answer_url(record))
        return _input_required(record, page)
    if args.wait_seconds > 0:
        record = await backend.wait(record.id, args.wait_seconds)
    return interaction_result(backend, Outcome(record))


async def _next_round(
    backend: Backend,
    args: Any,
    state: RoundState,
    responses: dict[str, Any] | None,
    modes: Modes,
) -> types.CallToolResult | types.InputRequiredResult:
    reply = (responses or {}).get(INPUT_KEY)
    if not isinstance(reply, types.ElicitResult):
        raise MCPError(types.INVALID_PARAMS, f"inputResponses must answer {INPUT_KEY!r}")
    try:
        fresh = await backend.record_round(state.nonce, state.request_id, reply.action)
    except NotFound:
        raise _refused() from None
    if not fresh:
        raise _refused()  # a replayed state: its round was used already
    record = await backend.get(state.request_id)
    if not record.pending:
        return interaction_result(backend, Outcome(record))
    if reply.action != "accept":
        return interaction_result(backend, Outcome(record, elicitation=reply.action))
    form = form_for(record) if modes.form else None
    if form is None:  # a URL round: the person went to the page; the answer comes from there
        if args.wait_seconds > 0:
            record = await backend.wait(record.id, args.wait_seconds)
        return interaction_result(backend, Outcome(record))
    try:
        record = await backend.respond(record.id, form.answer(reply.content))
    except NotPending:
        record = await backend.get(record.id)
    except (Forbidden, AlreadyVoted) as exc:  # not the caller's to give: no retry
        return interaction_result(backend, Outcome(record, errors=[FieldError("", exc.message)]))
    except InvalidInput as exc:
        errors = exc.errors or [FieldError("", str(exc))]
        if state.attempt + 1 < ELICIT_ATTEMPTS:
            again = types.ElicitRequestFormParams(
                message=retry_message(record, errors), requested_schema=form.schema
            )
            return _input_required(record, again, state.attempt + 1)
        return interaction_result(backend, Outcome(record, errors=errors))
    return interaction_result(backend, Outcome(record))


# --- the Tasks extension --------------------------------------------------------------------

_TASK_STATUS: dict[str, types.TaskStatus] = {
    "pending": "input_required",
    "answered": "completed",
    "cancelled": "cancelled",
    "expired": "failed",
}


def task_of(record: Interaction) -> types.Task:
    """A request as a task: its id is the request's."""
    updated = record.answered_at or record.created_at
    status = _TASK_STATUS.get(record.status, "failed")
    message = "waiting for the person's answer" if record.pending else f"request {record.status}"
    return types.Task(
        task_id=record.id,
        status=status,
        status_message=message,
        created_at=record.created_at.isoformat(),
        last_updated_at=updated.isoformat(),
        ttl=None,
        poll_interval=POLL_INTERVAL_MS,
    )


def task_created(record: Interaction) -> dict[str, Any]:
    """The result of a call made a task: a shape of the Tasks extension (``resultType: task``,
    outside the core vocabulary, so the SDK passes it through as the extension's own)."""
    return {"task": _task_wire(record), "resultType": "task"}


def _task_wire(record: Interaction) -> dict[str, Any]:
    """The task as JSON; ``ttl`` stays, null (kept as long as the request is)."""
    return task_of(record).model_dump(by_alias=True, mode="json")


Resolve = Callable[[ServerRequestContext[Any, Any]], Backend]


async def _task_record(
    backend: Backend, task_id: str, work: Callable[[str], Awaitable[Interaction]]
) -> Interaction:
    try:
        return await work(task_id)
    except NotFound:
        # Unknown and another user's alike.
        raise MCPError(types.INVALID_PARAMS, "task not found") from None
    except NotPending as exc:
        raise MCPError(types.INVALID_PARAMS, f"the task is already {exc.status}") from None


def task_handlers(resolve: Resolve) -> list[tuple[str, type[types.RequestParams], Any]]:
    """``tasks/get``, ``tasks/result`` and ``tasks/cancel`` over the caller's requests."""

    async def get(
        ctx: ServerRequestContext[Any, Any], params: types.GetTaskRequestParams
    ) -> dict[str, Any]:
        backend = resolve(ctx)
        return _task_wire(await _task_record(backend, params.task_id, backend.get))

    async def result(
        ctx: ServerRequestContext[Any, Any], params: types.GetTaskPayloadRequestParams
    ) -> types.CallToolResult:
        backend = resolve(ctx)

        async def waited(task_id: str) -> Interaction:
            return await backend.wait(task_id, schemas.MAX_WAIT)

        record = await _task_record(backend, params.task_id, waited)
        return interaction_result(backend, Outcome(record))

    async def cancel(
        ctx: ServerRequestContext[Any, Any], params: types.CancelTaskRequestParams
    ) -> dict[str, Any]:
        backend = resolve(ctx)
        return _task_wire(await _task_record(backend, params.task_id, backend.cancel))

    return [
        ("tasks/get", types.GetTaskRequestParams, get),
        ("tasks/result", types.GetTaskPayloadRequestParams, result),
        ("tasks/cancel", types.CancelTaskRequestParams, cancel),
    ]
