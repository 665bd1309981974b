"""The admins' API (``/api/admin/…``), which the web chat's admin page is drawn from.

Every route answers 403 to a caller who is not an admin (``role`` admin in the store, or
named in ``PAWFLOW_ADMINS``), before reading anything. Every change is audited in the same
transaction: who, what, to what, when, and from where (address, user agent, web or API).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Annotated, Any, Literal, TypeVar

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import StreamingResponse
from pydantic import Field

from pawflow.durations import parse_deadline
from pawflow.errors import Conflict, Forbidden, InvalidInput, NotFound
from pawflow.server import credentials
from pawflow.server import models as m
from pawflow.server.auth import Principal, caller, client_address
from pawflow.server.bodies import StrictJSONRoute
from pawflow.server.context import context_of
from pawflow.server.credentials import revoke_tokens
from pawflow.server.errors import ERROR_RESPONSES
from pawflow.server.signin import LINK_SIGNIN, link_signin_on
from pawflow.store import RoleAuditFilter, RoleOrigin, Store, Unit
from pawflow.store import Transaction as Tx

router = APIRouter(prefix="/api/admin", route_class=StrictJSONRoute, tags=["admin"])
_ERRORS: dict[int | str, dict[str, Any]] = {
    k: v for k, v in ERROR_RESPONSES.items() if k in (400, 401, 403, 404, 409, 422, 429)
}
ADMIN_ONLY = "only an admin may do this"


def is_admin(request: Request, user: str) -> bool:
    ctx = context_of(request)
    if user in ctx.settings.admins:
        return True
    with ctx.store.unit(write=False) as u:
        return u.roles.is_admin(user)


def require_admin(request: Request, principal: Principal) -> Store:
    """The store, for an admin; a 403 for anyone else."""
    if not is_admin(request, principal.user):
        raise Forbidden(ADMIN_ONLY)
    return context_of(request).store


class Admin:
    """An admin's request: the store, who, and where from (for the audit trail)."""

    def __init__(self, request: Request, principal: Principal) -> None:
        self.store = require_admin(request, principal)
        self.user = principal.user
        self.origin = RoleOrigin(
            address=client_address(request),
            user_agent=request.headers.get("user-agent", ""),
            via="web" if principal.via == "session" else "api",
        )

    def audit(self, tx: Tx, action: str, target: str | None, **detail: Any) -> None:
        u = Unit(tx, self.store.now)
        u.roles.record(
            self.user,
            action,
            target=target,
            detail=detail,
            origin=self.origin,
        )


def _admin(request: Request, principal: Annotated[Principal, Depends(caller)]) -> Admin:
    return Admin(request, principal)


AdminCaller = Annotated[Admin, Depends(_admin)]
UserName = Annotated[str, Field(min_length=1, max_length=200, pattern=m.NOT_BLANK)]
GroupName = Annotated[str, Field(pattern=m.GROUP_NAME)]


# -- reading ---------------------------------------------------------------------------------


class Overview(m.Out):
    """Everything the admin page shows but the audit trail."""

    users: list[dict[str, Any]]
    groups: list[dict[str, Any]]
    delegations: list[dict[str, str]]
    tokens: list[dict[str, Any]]
    webhooks: list[dict[str, Any]]
    approval_rules: list[dict[str, Any]]
    channels: list[dict[str, Any]]
    options: dict[str, bool]
    sso: dict[str, Any] | None


def _token(row: Any) -> dict[str, Any]:
    found: dict[str, Any] = row.to_dict()
    found["owner"] = found.pop("user")
    return found


def _channels(request: Request, counts: dict[str, dict[str, int]]) -> list[dict[str, Any]]:
    settings = context_of(request).settings
    configured = {
        "web": True,
        "email": bool(settings.smtp_url),
        "mail replies": bool(settings.imap_url),
        "slack": bool(settings.slack_bot_token),
    }
    names = list(configured) + sorted(set(counts) - set(configured))
    return [
        {"name": name, "configured": configured.get(name, True), "outbox": counts.get(name, {})}
        for name in names
    ]


@router.get("/overview", response_model=Overview, responses=_ERRORS, summary="The admin page")
def overview(admin: AdminCaller, request: Request) -> Overview:
    store = admin.store
    with store.unit(write=False) as u:
        users = []
        for row in u.roles.users():
            entry = row.to_dict()
            entry["groups"] = u.groups.groups_of(row.id)
            users.append(entry)
        kept = u.sign_in.provider_groups()
        group_list = [
            {"name": name, "members": members, "provider": name in kept}
            for name, members in u.groups.all_groups().items()
        ]
        found = Overview(
            users=users,
            groups=group_list,
            delegations=u.groups.delegations(),
            tokens=[_token(row) for row in credentials.list_tokens(u)],
            webhooks=u.administration.webhooks(),
            approval_rules=u.administration.approval_rules(),
            channels=_channels(request, u.administration.outbox_counts()),
            options={"link_signin": link_signin_on(u)},
            sso=None,
        )
    provider = context_of(request).oidc
    if provider is not None:
        found.sso = {
            "name": provider.config.name,
            "issuer": provider.config.issuer,
            "admin_group": provider.config.admin_group,
        }
    return found


AuditFormat = Literal["json", "jsonl", "csv"]
_TIME: dict[str, Any] = {"json_schema_extra": {"format": "date-time"}}
AUDIT_COLUMNS = ("at", "kind", "actor", "action", "target", "detail", "address", "user_agent")


def _time(value: str | None, name: str) -> datetime | None:
    if not value:
        return None
    try:
        return parse_deadline(value)
    except InvalidInput:
        raise InvalidInput(f"{name} must be an ISO-8601 time with a timezone") from None


def _trail(
    u: Unit,
    *,
    user: str | None,
    action: str | None,
    request_id: str | None,
    since: datetime | None,
    until: datetime | None,
) -> Iterator[dict[str, Any]]:
    """Admin actions and request steps, oldest first, as the filters pick them."""
    found: list[dict[str, Any]] = []
    if request_id is None:
        for entry in u.roles.trail(RoleAuditFilter(action=action, since=since, until=until)):
            if user and user not in (entry["actor"], entry["target"]):
                continue
            found.append({"kind": "admin", **entry})
    start = since or datetime.fromtimestamp(0, tz=UTC)
    steps = u.audit.trail(request_id) if request_id else u.audit.since(start)
    for step in steps:
        at = step["at"]
        if (action and step["action"] != action) or (user and step["actor"] != user):
            continue
        if until is not None and parse_deadline(at) >= until:
            continue
        if since is not None and parse_deadline(at) < since:
            continue
        found.append(
            {
                "kind": "request",
                "seq": step["seq"],
                "at": at,
                "actor": step["actor"],
                "action": step["action"],
                "target": step["request_id"],
                "detail": {**step["detail"], "via": step["via"]},
                "address": None,
                "user_agent": None,
            }
        )
    found.sort(key=lambda entry: (entry["at"], entry["kind"], entry["seq"]))
    yield from found


_AUDIT_RESPONSES: dict[int | str, dict[str, Any]] = {
    200: {
        "description": "The entries, oldest first: {entries: [...]}, one JSON object a line,"
        " or CSV with a header row.",
        "content": {"application/json": {}, "application/x-ndjson": {}, "text/csv": {}},
    },
    **_ERRORS,
}


@router.get(
    "/audit",
    responses=_AUDIT_RESPONSES,
    response_class=StreamingResponse,
    summary="The audit trail: JSON, JSON Lines or CSV",
)
def audit_trail(
    admin: AdminCaller,
    user: Annotated[str | None, Query(max_length=200, pattern=m.NO_NUL)] = None,
    action: Annotated[str | None, Query(max_length=100, pattern=m.NO_NUL)] = None,
    request_id: Annotated[
        str | None, Query(max_length=100, alias="request", pattern=m.NO_NUL)
    ] = None,
    since: Annotated[str | None, Query(max_length=60, pattern=m.DEADLINE, **_TIME)] = None,
    until: Annotated[str | None, Query(max_length=60, pattern=m.DEADLINE, **_TIME)] = None,
    format: AuditFormat = "json",
    limit: Annotated[int, Query(ge=1, le=100_000)] = 500,
) -> StreamingResponse:
    store = admin.store
    start, end = _time(since, "since"), _time(until, "until")
    with store.unit(write=False) as u:
        entries = list(
            _trail(u, user=user, action=action, request_id=request_id, since=start, until=end)
        )
    if format == "json":
        body = json.dumps({"entries": entries[-limit:]})
        return StreamingResponse(iter([body]), media_type="application/json")
    with store.unit() as u:
        admin.audit(u.tx, "audit.export", None, format=format, entries=len(entries))
    name = f"pawflow-audit.{'jsonl' if format == 'jsonl' else 'csv'}"
    headers = {"Content-Disposition": f'attachment; filename="{name}"'}
    if format == "jsonl":
        lines = (json.dumps(entry, sort_keys=True) + "\n" for entry in entries)
        return StreamingResponse(lines, media_type="application/x-ndjson", headers=headers)
    return StreamingResponse(_csv(entries), media_type="text/csv", headers=headers)


def _csv(entries: list[dict[str, Any]]) -> Iterator[str]:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(AUDIT_COLUMNS)
    for entry in entries:
        row = [entry.get(column) for column in AUDIT_COLUMNS]
        row[AUDIT_COLUMNS.index("detail")] = json.dumps(entry["detail"], sort_keys=True)
        writer.writerow(["" if value is None else value for value in row])
        yield out.getvalue()
        out.seek(0)
        out.truncate()
    yield out.getvalue()


# -- changing ---------------------------------------------------------------------------------


class Done(m.Out):
    ok: bool = True


_Route = TypeVar("_Route", bound=Callable[..., Done])


def _changed(path: str, summary: str) -> Callable[[_Route], _Route]:
    return router.post(path, response_model=Done, responses=_ERRORS, summary=summary)


def _known(u: Unit, user: str) -> None:
    if not u.conversations.user_exists(user):
        raise NotFound(f"no user {user!r}")


class AddUser(m.Body):
    name: UserName
    role: Literal["admin", "member"] = "member"


@_changed("/users/add", "Add a user")
def add_user(body: AddUser, admin: AdminCaller) -> Done:
    name = body.name
    with admin.store.unit() as u:
        if u.conversations.user_exists(name):
            raise Conflict(f"user {name!r} exists already")
        u.conversations.ensure_user(name)
        u.roles.set_role(name, body.role)
        admin.audit(u.tx, "user.add", name, role=body.role)
    return Done()


class SetRole(m.Body):
    name: UserName
    role: Literal["admin", "member"]


@_changed("/users/role", "Make a user an admin, or a member only")
def set_role(body: SetRole, admin: AdminCaller) -> Done:
    with admin.store.unit() as u:
        _known(u, body.name)
        if body.role == "member" and u.roles.admins() == [body.name]:
            raise Conflict("this is the last admin: make another admin first")
        u.roles.set_role(body.name, body.role)
        admin.audit(u.tx, "user.role", body.name, role=body.role)
    return Done()


class UserRef(m.Body):
    name: UserName


@_changed("/users/revoke_tokens", "Revoke every API token of a user")
def revoke_user_tokens(body: UserRef, admin: AdminCaller) -> Done:
    with admin.store.unit() as u:
        _known(u, body.name)
        count = revoke_tokens(u.tx, body.name, now=admin.store.now())
        admin.audit(u.tx, "user.revoke_tokens", body.name, tokens=count)
    return Done()


class GroupChange(m.Body):
    name: GroupName
    users: Annotated[list[UserName], Field(min_length=1, max_length=100)]


@_changed("/groups/add", "Add users to a group (made on first use)")
def add_to_group(body: GroupChange, admin: AdminCaller) -> Done:
    with admin.store.unit() as u:
        for name in body.users:
            _known(u, name)
        u.groups.add_members(body.name, body.users)
        admin.audit(u.tx, "group.add", f"group:{body.name}", users=body.users)
    return Done()


@_changed("/groups/remove", "Take users out of a group")
def remove_from_group(body: GroupChange, admin: AdminCaller) -> Done:
    with admin.store.unit() as u:
        u.groups.remove_members(body.name, body.users)
        admin.audit(u.tx, "group.remove", f"group:{body.name}", users=body.users)
    return Done()


class DelegationEnd(m.Body):
    principal: UserName
    to: UserName


class DelegationAdd(DelegationEnd):
    until: Annotated[str, Field(max_length=60, pattern=m.DEADLINE, **_TIME)]


@_changed("/delegations/add", "Let a user answer for another until a moment")
def add_delegation(body: DelegationAdd, admin: AdminCaller) -> Done:
    with admin.store.unit() as u:
        u.groups.delegate(body.principal, body.to, parse_deadline(body.until))
        admin.audit(u.tx, "delegation.add", body.principal, to=body.to, until=body.until)
    return Done()


@_changed("/delegations/revoke", "End a delegation now")
def revoke_delegation(body: DelegationEnd, admin: AdminCaller) -> Done:
    with admin.store.unit() as u:
        u.groups.revoke_delegation(body.principal, body.to)
        admin.audit(u.tx, "delegation.revoke", body.principal, to=body.to)
    return Done()


class ItemRef(m.Body):
    id: Annotated[str, Field(min_length=1, max_length=100, pattern=m.NOT_BLANK)]


@_changed("/tokens/revoke", "Revoke one API token")
def revoke_token(body: ItemRef, admin: AdminCaller) -> Done:
    with admin.store.unit() as u:
        found = credentials.revoke_token(u, body.id)
        if found is None:
            raise NotFound("token")
        admin.audit(u.tx, "token.revoke", found.user_id, token=body.id)
    return Done()


@_changed("/users/disable", "Disable a user: every credential of theirs stops at once")
def disable_user(body: UserRef, admin: AdminCaller) -> Done:
    with admin.store.unit() as u:
        credentials.set_user_disabled(u.tx, body.name, True, now=admin.store.now())
        admin.audit(u.tx, "user.disable", body.name)
    return Done()


@_changed("/users/enable", "Enable a disabled user again")
def enable_user(body: UserRef, admin: AdminCaller) -> Done:
    with admin.store.unit() as u:
        credentials.set_user_disabled(u.tx, body.name, False, now=admin.store.now())
        admin.audit(u.tx, "user.enable", body.name)
    return Done()


@_changed("/webhooks/remove", "Remove anyone's webhook")
def remove_webhook(body: ItemRef, admin: AdminCaller) -> Done:
    with admin.store.unit() as u:
        owner = u.administration.remove_webhook(body.id)
        admin.audit(u.tx, "webhook.remove", owner, webhook=body.id)
    return Done()


@_changed("/approval_rules/revoke", "Revoke anyone's approval rule")
def revoke_rule(body: ItemRef, admin: AdminCaller) -> Done:
    with admin.store.unit() as u:
        owner = u.administration.revoke_rule(body.id, admin.user)
        admin.audit(u.tx, "approval_rule.revoke", owner, rule=body.id)
    return Done()


class Options(m.Body):
    link_signin: bool


@_changed("/options", "Turn sign-in by one-time link on or off")
def set_options(body: Options, admin: AdminCaller) -> Done:
    with admin.store.unit() as u:
        value = "on" if body.link_signin else "off"
        u.roles.set_option(LINK_SIGNIN, value, by=admin.user)
        admin.audit(u.tx, "options.link_signin", None, value=value)
    return Done()
