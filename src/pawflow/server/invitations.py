"""The invitation actions: a shared conversation is joined only by accepting it.

``share_conversation`` (in the action module) offers; these list, accept and decline what
was offered to the caller. See ``docs/security.md`` for the sharing model.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Body, Depends, Request
from fastapi.responses import JSONResponse, Response

from pawflow.server import models as m
from pawflow.server.auth import Principal, caller
from pawflow.server.bodies import StrictJSONRoute
from pawflow.server.context import context_of
from pawflow.server.errors import ERROR_RESPONSES

router = APIRouter(prefix="/api/actions", route_class=StrictJSONRoute, tags=["actions"])

Caller = Annotated[Principal, Depends(caller)]
_ERRORS: dict[int | str, dict[str, Any]] = {
    k: v for k, v in ERROR_RESPONSES.items() if k in (400, 401, 403, 404, 413, 422, 429)
}


class InvitationOut(m.Out):
    conversation_id: str
    title: str
    invited_by: str
    access: Literal["read", "write"]
    created_at: str


class InvitationList(m.Out):
    invitations: list[InvitationOut]


class ListInvitations(m.Body):
    pass


class InvitationRef(m.Body):
    conversation_id: m.Id


@router.post(
    "/list_invitations",
    name="list_invitations",
    operation_id="list_invitations",
    summary="List the conversations offered to the caller",
    response_model=InvitationList,
    responses=_ERRORS,
)
def list_invitations(
    principal: Caller,
    request: Request,
    body: Annotated[ListInvitations, Body()] = ListInvitations(),  # noqa: B008
) -> JSONResponse:
    found = context_of(request).store.list_invitations(user=principal.user)
    return JSONResponse({"invitations": found})


@router.post(
    "/accept_invitation",
    name="accept_invitation",
    operation_id="accept_invitation",
    summary="Join a conversation offered to the caller",
    response_model=m.ConversationEnvelope,
    responses=_ERRORS,
)
def accept_invitation(body: InvitationRef, principal: Caller, request: Request) -> JSONResponse:
    store = context_of(request).store
    conversation = store.accept_invitation(body.conversation_id, user=principal.user)
    return JSONResponse({"conversation": conversation.to_dict()})


@router.post(
    "/decline_invitation",
    name="decline_invitation",
    operation_id="decline_invitation",
    summary="Refuse a conversation offered to the caller",
    status_code=204,
    response_class=Response,
    responses=_ERRORS,
)
def decline_invitation(body: InvitationRef, principal: Caller, request: Request) -> Response:
    context_of(request).store.decline_invitation(body.conversation_id, user=principal.user)
    return Response(status_code=204)
