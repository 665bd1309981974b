"""Clearing a queue: one answer for several pending requests of one kind
(``respond_each``), each answered on its own (docs/governance.md#clearing-a-queue).

Every request is answered in its own transaction, through the same ``respond_interaction``
as one answer: validated, checked against who may answer it, audited and signalled on its
own. One that is refused changes nothing and is listed with the reason; the others are
answered. Nothing is half-done: a request is either answered (or voted on) or untouched.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request
from pydantic import Field

from pawflow.errors import AlreadyVoted, Forbidden, NotFound, NotPending, PawFlowError
from pawflow.records import ClientChannel, Interaction
from pawflow.server import models as m
from pawflow.server.auth import Principal, caller
from pawflow.server.bodies import StrictJSONRoute
from pawflow.server.context import context_of
from pawflow.server.errors import ERROR_RESPONSES, status_of

router = APIRouter(prefix="/api/actions", route_class=StrictJSONRoute, tags=["actions"])

Caller = Annotated[Principal, Depends(caller)]
MAX_EACH = 200
_ERRORS: dict[int | str, dict[str, Any]] = {
    k: v for k, v in ERROR_RESPONSES.items() if k in (400, 401, 403, 413, 422, 429, 503)
}


class RespondEach(m.Body):
    request_ids: Annotated[list[m.Id], Field(min_length=1, max_length=MAX_EACH)] = Field(
        description="The requests to answer, all of one kind (the first one's); each once."
    )
    answer: m.Answer = Field(description="The typed value for their kind, given to each.")
    answered_via: ClientChannel = "api"


class Refused(m.Out):
    request_id: str
    status: int = Field(description="The HTTP status one answer would have had (403, 409, …).")
    error: str = Field(description="Why, in words: whom it waits for, what it became, …")
    waiting_for: list[str] | None = None


class EachAnswered(m.Out):
    answered: list[Interaction] = Field(
        description="The requests answered (a quorum's vote leaves one pending), in order."
    )
    refused: list[Refused] = Field(description="The requests left as they were, with why.")


def _reason(exc: PawFlowError) -> str:
    if isinstance(exc, NotFound):
        return "not found"
    if isinstance(exc, NotPending):
        return f"already {exc.status}"
    if isinstance(exc, Forbidden | AlreadyVoted):
        return exc.message
    errors = getattr(exc, "errors", None)
    if errors:
        return "; ".join(dict.fromkeys(f"{e.path or 'answer'}: {e.message}" for e in errors))
    return str(exc) or type(exc).__name__


@router.post(
    "/respond_each",
    name="respond_each",
    summary="Answer several pending requests of one kind, each on its own",
    response_model=EachAnswered,
    responses=_ERRORS,
    operation_id="respond_each",
)
def respond_each(body: RespondEach, principal: Caller, request: Request) -> EachAnswered:
    store = context_of(request).store
    answered: list[Interaction] = []
    refused: list[Refused] = []
    kind: str | None = None
    for request_id in dict.fromkeys(body.request_ids):
        try:
            done = store.respond_interaction(
                request_id,
                body.answer,
                user=principal.user,
                via=body.answered_via,
                kinds=None if kind is None else [kind],
            )
        except PawFlowError as exc:
            if status_of(exc) >= 500:
                raise
            reason = _reason(exc)
            if isinstance(exc, NotFound) and kind is not None:
                reason = f"not found, or not a {kind} request"
            waiting = list(exc.waiting_for) if isinstance(exc, Forbidden) else None
            refused.append(
                Refused(
                    request_id=request_id, status=status_of(exc), error=reason, waiting_for=waiting
                )
            )
            continue
        kind = kind or done.kind.value
        answered.append(done)
    return EachAnswered(answered=answered, refused=refused)
