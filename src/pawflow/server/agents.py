"""``list_agents`` and ``assign_agent``: which agents run here, and which one answers a
conversation.

An agent answers the messages of the conversations assigned to it; a conversation without
one gets no reply. ``list_agents`` with a ``conversation_id`` also says which agent answers
there (any member may ask). Assigning needs write access to the conversation; anything less
finds no conversation. The agents are the :class:`~pawflow.server.context.AgentDirectory`
handed to the app (``pawflow serve`` hands in its chat service; ``--agents agents.yaml``
adds to them).
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Depends, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel

from pawflow.errors import NotFound
from pawflow.server import models as m
from pawflow.server.auth import Principal, caller
from pawflow.server.bodies import StrictJSONRoute
from pawflow.server.context import context_of
from pawflow.server.errors import ERROR_RESPONSES

router = APIRouter(prefix="/api/actions", route_class=StrictJSONRoute, tags=["agents"])

Caller = Annotated[Principal, Depends(caller)]


class AssignAgent(m.Body):
    conversation_id: m.Id
    agent: m.Name


class ListAgents(m.Body):
    conversation_id: m.Id | None = None


class AgentList(BaseModel):
    agents: list[str]
    assigned: str | None = None
    """With a ``conversation_id``: the agent answering that conversation (None: no agent)."""


class Assignment(BaseModel):
    conversation_id: str
    agent: str


def _responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    return {k: v for k, v in ERROR_RESPONSES.items() if k in statuses}


@router.post(
    "/list_agents",
    name="list_agents",
    operation_id="list_agents",
    summary="The agents that can answer conversations here",
    response_model=AgentList,
    responses=_responses(400, 401, 404, 413, 422, 429, 503),
)
def list_agents(
    principal: Caller,
    request: Request,
    body: Annotated[ListAgents, Body()] = ListAgents(),  # noqa: B008
) -> JSONResponse:
    ctx = context_of(request)
    store = ctx.store
    assigned = None
    if body.conversation_id is not None:
        with store.unit(write=False) as u:
            if u.conversations.conversation_access(body.conversation_id, principal.user) is None:
                raise NotFound("conversation")
            assigned = u.turns.assigned_agent(body.conversation_id)
    agents = [] if ctx.agents is None else ctx.agents.agents
    return JSONResponse({"agents": agents, "assigned": assigned})


@router.post(
    "/assign_agent",
    name="assign_agent",
    operation_id="assign_agent",
    summary="Have an agent answer a conversation's messages from now on",
    response_model=Assignment,
    responses=_responses(400, 401, 404, 413, 422, 429, 503),
)
def assign_agent(body: AssignAgent, principal: Caller, request: Request) -> JSONResponse:
    ctx = context_of(request)
    with ctx.store.unit(write=False) as u:
        access = u.conversations.conversation_access(body.conversation_id, principal.user)
    if access not in ("owner", "write"):
        raise NotFound("conversation")
    directory = ctx.agents
    if directory is None or directory.agent(body.agent) is None:
        raise NotFound("agent")  # like an unknown id: list_agents names those here
    directory.assign(body.conversation_id, body.agent)
    return JSONResponse({"conversation_id": body.conversation_id, "agent": body.agent})
