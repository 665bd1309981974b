"""The one place where failures become HTTP responses.

Every error body has the same shape, ``{"error": …}``, plus ``errors`` (field-level, for
400/422), ``status`` (for 409 on a request that left ``pending``) or ``vote`` (for 409 on a
quorum's vote that stands already). A 404 depends only on
what was looked for, never on whether it exists, so unknown and forbidden ids answer alike.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping, Sequence
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, ConfigDict
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import JSONResponse

from pawflow.errors import (
    HTTP_MESSAGES,
    AlreadyVoted,
    Conflict,
    FieldError,
    Forbidden,
    InvalidInput,
    NotFound,
    NotPending,
    PawFlowError,
    PayloadTooLarge,
    StoreError,
    StoreUnavailable,
    Undeliverable,
)
from pawflow.errors import (
    HTTPProblem as HTTPProblem,
)
from pawflow.interactions.problems import join_path
from pawflow.server.models import in_words

log = logging.getLogger("pawflow.server")

# Most specific first: the first class an error is an instance of decides its status.
STATUS_OF: tuple[tuple[type[PawFlowError], int], ...] = (
    (NotPending, 409),
    (PayloadTooLarge, 413),
    (InvalidInput, 422),
    (NotFound, 404),
    (Forbidden, 403),
    (Conflict, 409),
    (StoreUnavailable, 503),
    (Undeliverable, 503),
    (StoreError, 500),
    (PawFlowError, 500),
)

MESSAGES = HTTP_MESSAGES


class FieldErrorBody(BaseModel):
    path: str
    message: str


class ErrorBody(BaseModel):
    """Every error response: a message, and field errors or a status where they apply."""

    model_config = ConfigDict(extra="forbid")

    error: str
    errors: list[FieldErrorBody] | None = None
    status: str | None = None
    waiting_for: list[str] | None = None
    vote: dict[str, Any] | None = None


def status_of(exc: PawFlowError) -> int:
    for cls, status in STATUS_OF:
        if isinstance(exc, cls):
            return status
    return 500  # pragma: no cover - PawFlowError closes the table


def respond(
    code: int,
    message: str,
    *,
    errors: Sequence[FieldError] | None = None,
    headers: Mapping[str, str] | None = None,
    **extra: Any,
) -> JSONResponse:
    content: dict[str, Any] = {"error": message}
    if errors is not None:
        content["errors"] = [e.to_dict() for e in errors]
    content.update(extra)
    return JSONResponse(content, status_code=code, headers=dict(headers or {}))


def pawflow_error_response(exc: PawFlowError) -> JSONResponse:
    status = status_of(exc)
    if isinstance(exc, NotPending):
        return respond(status, str(exc), status=exc.status)
    if isinstance(exc, AlreadyVoted):
        return respond(status, exc.message, vote=exc.vote)
    if isinstance(exc, InvalidInput):
        return respond(status, exc.message, errors=exc.errors)
    if isinstance(exc, NotFound):
        return respond(status, f"{exc.what} not found")
    if isinstance(exc, Forbidden):
        return respond(status, exc.message, waiting_for=exc.waiting_for)
    if status == 503:
        return respond(status, MESSAGES[503], headers={"Retry-After": "1"})
    if status >= 500:
        log.error("request failed: %s", exc, exc_info=exc)
        return respond(status, MESSAGES[500])
    return respond(status, str(exc))


def problem_response(exc: HTTPProblem) -> JSONResponse:
    return respond(exc.status_code, exc.message, errors=exc.errors, headers=exc.headers)


def validation_errors(raw: Sequence[Any]) -> list[FieldError]:
    """Pydantic's errors as FieldErrors, paths relative to the body (``options[0].value``)."""
    found = []
    for error in raw:
        loc = list(error.get("loc", ()))
        if loc and loc[0] in ("body", "query", "path", "header", "cookie"):
            loc = loc[1:]
        if error.get("type") == "json_invalid":
            found.append(FieldError("", "the body is not valid JSON"))
            continue
        # Union members add their type's name to the location ("str", "OptionIn"); field
        # names are all lower-case words, so those are easy to leave out.
        if error.get("type") != "extra_forbidden":
            loc = [p for p in loc if isinstance(p, int) or _is_field(p)]
        path = join_path("", [p if isinstance(p, int) else str(p) for p in loc])
        found.append(FieldError(path, in_words(error)))
    return found


_FIELD_NAME = re.compile(r"[a-z_][a-z0-9_]*")
_TYPE_NAMES = frozenset({"str", "int", "float", "bool", "list", "dict"})


def _is_field(part: object) -> bool:
    return isinstance(part, str) and bool(_FIELD_NAME.fullmatch(part)) and part not in _TYPE_NAMES


def install(app: FastAPI) -> None:
    async def on_pawflow_error(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, PawFlowError)
        return pawflow_error_response(exc)

    async def on_problem(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, HTTPProblem)
        return problem_response(exc)

    async def on_validation(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, RequestValidationError)
        errors = validation_errors(exc.errors())
        bad_json = any(e.get("type") == "json_invalid" for e in exc.errors())
        if bad_json:
            return respond(400, "the body is not valid JSON", errors=errors)
        summary = "; ".join(f"{e.path or 'body'}: {e.message}" for e in errors[:3])
        return respond(422, f"invalid request: {summary}", errors=errors)

    async def on_http(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, StarletteHTTPException)
        status = exc.status_code
        message = MESSAGES.get(status) or (str(exc.detail) if exc.detail else "error")
        if status == 400 and isinstance(exc.detail, str):
            message = exc.detail
        return respond(status, message, headers=exc.headers)

    async def on_unexpected(request: Request, exc: Exception) -> JSONResponse:
        log.error("unexpected error on %s %s", request.method, request.url.path, exc_info=exc)
        return respond(500, MESSAGES[500])

    app.add_exception_handler(PawFlowError, on_pawflow_error)
    app.add_exception_handler(HTTPProblem, on_problem)
    app.add_exception_handler(RequestValidationError, on_validation)
    app.add_exception_handler(StarletteHTTPException, on_http)
    app.add_exception_handler(Exception, on_unexpected)


ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    status: {"model": ErrorBody, "description": description}
    for status, description in (
        (400, "The body cannot be read (not JSON, not UTF-8, nested too deeply)."),
        (401, "No valid bearer token or session cookie."),
        (
            403,
            "A cookie-authenticated change without a CSRF token or a same-origin Origin;"
            " or a request that waits for others (`waiting_for` names them).",
        ),
        (404, "Unknown, or not visible to the caller: the two are indistinguishable."),
        (
            409,
            "The request is no longer pending (`status` says what it became), or a vote for"
            " that person stands already (`vote` is the one that stands).",
        ),
        (413, "The body is over the size limit."),
        (422, "Invalid input; `errors` lists each field's problem."),
        (429, "Over the per-user rate; retry after `Retry-After` seconds."),
        (503, "The store is busy or unreachable; retry shortly."),
    )
}
