"""The accountability actions: a request's policy and audit trail, claims, reassignment and
the assignees' inbox (docs/governance.md). Publishing a request with a policy is
``request_interaction`` (its ``assignees``, ``on_expire``, … fields); answering one is
``respond_interaction``, which answers 403 to whoever may see the request but not decide it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Annotated, Any, Literal, TypeVar

from fastapi import APIRouter, Body, Depends, Request
from pydantic import Field

from pawflow.durations import parse_deadline
from pawflow.records import ClientChannel, Interaction
from pawflow.server import models as m
from pawflow.server.admin import Admin, require_admin
from pawflow.server.auth import Principal, caller
from pawflow.server.bodies import StrictJSONRoute
from pawflow.server.context import context_of
from pawflow.server.routes import action_route
from pawflow.store import OutboxRow, Store

router = APIRouter(prefix="/api/actions", route_class=StrictJSONRoute, tags=["actions"])

Caller = Annotated[Principal, Depends(caller)]
_STATUSES = (400, 401, 403, 404, 409, 413, 422, 429, 503)


class AuditEntry(m.Out):
    """One step of a request's audit trail."""

    seq: int
    request_id: str
    at: str
    action: str
    actor: str | None = Field(description="Who took the step; null: the system or a policy.")
    via: str | None = Field(description="The client, channel or policy it came through.")
    detail: dict[str, Any]


class InteractionDetails(m.Out):
    """A request with its policy's state (assignees, claim, quorum) and its audit trail."""

    interaction: Interaction
    policy: dict[str, Any] | None = Field(
        description="assignees, claimed_by, required_approvals, approvals, progress"
        " ('2 of 3 approvals'), on_expire…; null: anyone who may write answers."
    )
    audit: list[AuditEntry]
    deliveries: list[m.Delivery] = Field(description="The request's notifications so far.")


class ClaimBody(m.Body):
    request_id: m.Id
    via: ClientChannel = "api"


class ReassignBody(ClaimBody):
    to: m.Assignees


class InboxBody(m.Body):
    filter: Literal["all", "assigned", "own", "mine", "groups", "claimed", "others", "visible"] = (
        Field(
            default="all",
            description="all: every request the caller may answer now (what their badge"
            " counts); assigned: mine, groups and claimed; own: the caller's own requests"
            " without assignees; mine: assigned to the caller (or to whom they stand in for);"
            " groups: through a group; claimed: claimed by the caller; others: the caller's"
            " requests that wait for someone else; visible: all and others.",
        )
    )


class InboxItem(m.Out):
    interaction: Interaction
    why: Literal["own", "mine", "groups", "claimed", "others"]
    waiting_for: list[str] = Field(
        default_factory=list,
        description="others: whom the request waits for (its assignees, or who claimed it).",
    )


class Inbox(m.Out):
    items: list[InboxItem]


def _store(request: Request) -> Store:
    return context_of(request).store


_Handler = TypeVar("_Handler", bound=Callable[..., m.Out])


def _action(name: str, response: type[m.Out], summary: str) -> Callable[[_Handler], _Handler]:
    return action_route(router, name, response, summary, _STATUSES)


_NOT_CONFIGURED = re.compile(r"^the \w+ channel is not configured on this server$")


def delivery_text(row: OutboxRow, status: str) -> str:
    """One delivery in words, as a request's History says it: ``email to lee: failed — not
    configured``, ``slack to ada: sent, updated after the answer``, ``push to ada: sent``
    (``status``: the request's own)."""
    said = f"{row.channel} to {row.recipient}: {row.status}"
    if row.status == "sent" and row.settle == "done":
        said += (
            ", updated after the answer"
            if status == "answered"
            else f", updated after it was {status}"
        )
    elif row.status == "queued" and row.attempts:
        said += f" (tried {row.attempts} times)" if row.attempts > 1 else " (tried once)"
    error = row.last_error
    if error and row.status != "sent":
        said += " — " + ("not configured" if _NOT_CONFIGURED.match(error) else error)
    return said


def interaction_details(store: Store, found: dict[str, Any]) -> InteractionDetails:
    """What ``get_interaction`` (and a claim, a release, a reassignment) answers: the store's
    details of a request (``u.accountability.details``) and its deliveries,
    each with its outcome in words."""
    with store.unit(write=False) as u:
        sent = u.outbox.deliveries(found["interaction"].id)
    status = found["interaction"].status
    return InteractionDetails(
        **found,
        deliveries=[
            m.Delivery(
                **row.to_dict(), updated=row.settle == "done", text=delivery_text(row, status)
            )
            for row in sent
        ],
    )


def _details(request: Request, found: dict[str, Any]) -> InteractionDetails:
    return interaction_details(_store(request), found)


@_action("get_interaction", InteractionDetails, "Read a request, its policy and its audit trail")
def get_interaction(body: m.RequestRef, principal: Caller, request: Request) -> InteractionDetails:
    with _store(request).unit(write=False) as u:
        found = u.accountability.details(body.request_id, user=principal.user)
    return _details(request, found)


@_action("claim_interaction", InteractionDetails, "Take a request on, for its claim time")
def claim_interaction(body: ClaimBody, principal: Caller, request: Request) -> InteractionDetails:
    store = _store(request)
    with store.unit() as u:
        found = u.accountability.claim(body.request_id, user=principal.user, via=body.via)
    return _details(request, found)


@_action("release_interaction", InteractionDetails, "Give a claimed request back")
def release_interaction(body: ClaimBody, principal: Caller, request: Request) -> InteractionDetails:
    store = _store(request)
    with store.unit() as u:
        found = u.accountability.release(body.request_id, user=principal.user, via=body.via)
    return _details(request, found)


@_action("reassign_interaction", InteractionDetails, "Hand a request to other assignees")
def reassign_interaction(
    body: ReassignBody, principal: Caller, request: Request
) -> InteractionDetails:
    store = _store(request)
    with store.unit() as u:
        found = u.accountability.reassign(
            body.request_id, list(body.to), user=principal.user, via=body.via
        )
    return _details(request, found)


@_action("list_inbox", Inbox, "The pending requests waiting for the caller, soonest due first")
def list_inbox(
    principal: Caller,
    request: Request,
    body: Annotated[InboxBody, Body()] = InboxBody(),  # noqa: B008
) -> Inbox:
    with _store(request).unit(write=False) as u:
        found = u.accountability.inbox(user=principal.user, which=body.filter)
    return Inbox(
        items=[
            InboxItem(interaction=item.interaction, why=item.why, waiting_for=item.waiting_for)
            for item in found
        ]
    )


# -- groups and delegations ------------------------------------------------------------------


UserName = Annotated[str, Field(min_length=1, max_length=200, pattern=m.NOT_BLANK)]


class GroupBody(m.Body):
    name: Annotated[str, Field(pattern=m.GROUP_NAME)]
    users: Annotated[list[UserName], Field(max_length=100)] = Field(
        default_factory=list, description="remove_from_group: none removes the whole group."
    )


class ListGroups(m.Body):
    """No fields: every group."""


class Groups(m.Out):
    groups: dict[str, list[str]]


class DelegateBody(m.Body):
    to: UserName
    until: Annotated[
        str,
        Field(max_length=60, pattern=m.DEADLINE, json_schema_extra={"format": "date-time"}),
    ] = Field(description="ISO-8601 with a timezone: the delegation ends then; a past one is 409.")
    principal: UserName | None = Field(
        default=None, description="Whom the delegate answers for: the caller unless an admin."
    )


class Delegation(m.Out):
    principal: str
    delegate: str
    until: str


class Delegations(m.Out):
    delegations: list[Delegation]


def _admin(request: Request, principal: Principal) -> Store:
    return require_admin(request, principal)


@_action("list_groups", Groups, "Every group and its members (admins)")
def list_groups(
    principal: Caller,
    request: Request,
    body: Annotated[ListGroups, Body()] = ListGroups(),  # noqa: B008
) -> Groups:
    with _admin(request, principal).unit(write=False) as u:
        return Groups(groups=u.groups.all_groups())


@_action("add_to_group", Groups, "Add users to a group, made on first use (admins)")
def add_to_group(body: GroupBody, principal: Caller, request: Request) -> Groups:
    admin = Admin(request, principal)
    with admin.store.unit() as u:
        u.groups.add_members(body.name, body.users)
        admin.audit(u.tx, "group.add", f"group:{body.name}", users=body.users)
        return Groups(groups=u.groups.all_groups())


@_action("remove_from_group", Groups, "Take users out of a group, or remove it (admins)")
def remove_from_group(body: GroupBody, principal: Caller, request: Request) -> Groups:
    admin = Admin(request, principal)
    with admin.store.unit() as u:
        u.groups.remove_members(body.name, body.users)
        admin.audit(u.tx, "group.remove", f"group:{body.name}", users=body.users)
        return Groups(groups=u.groups.all_groups())


@_action("delegate", Delegations, "Let another user answer for the caller until a moment")
def delegate(body: DelegateBody, principal: Caller, request: Request) -> Delegations:
    store = _store(request)
    whom = body.principal or principal.user
    until = parse_deadline(body.until)
    if whom != principal.user:  # for someone else: an admin's action, audited
        admin = Admin(request, principal)
        with store.unit() as u:
            u.groups.delegate(whom, body.to, until)
            admin.audit(u.tx, "delegation.add", whom, to=body.to, until=body.until)
    else:
        with store.unit() as u:
            u.groups.delegate(whom, to=body.to, until=until)
    with store.unit(write=False) as u:
        mine = [d for d in u.groups.delegations() if d["principal"] == whom]
    return Delegations(delegations=[Delegation(**d) for d in mine])
