"""Roles, the admins' audit trail and the settings admins change while the server runs.

Every user is a ``member``; an ``admin`` is a member who may also manage users, roles,
groups, other people's tokens and delegations, webhooks and channel settings. The first user
of a store is its admin (:func:`pawflow.store.ledger.conversations.ensure_user` makes them so);
``pawflow users add NAME --admin``, an admin, or the identity provider's admin group make more.

Each admin action leaves one row in ``admin_audit``, written in the transaction of the change
it records: who did it, what, to what, when, and from where (address and user agent).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from pawflow.clock import from_millis, iso, to_millis
from pawflow.errors import FieldError, InvalidInput, NotFound
from pawflow.store.engine.database import Tx, sql

Role = Literal["admin", "member"]
ROLES: tuple[Role, ...] = ("admin", "member")
RoleSource = Literal["local", "provider"]


@dataclass(frozen=True)
class UserRow:
    """A user as the admin page lists them."""

    id: str
    role: Role
    role_source: RoleSource
    email: str | None
    created_at: datetime
    disabled: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "role": self.role,
            "role_source": self.role_source,
            "email": self.email,
            "created_at": iso(self.created_at),
            "disabled": self.disabled,
        }


def _user(row: dict[str, Any]) -> UserRow:
    return UserRow(
        id=str(row["id"]),
        role="admin" if row["role"] == "admin" else "member",
        role_source="provider" if row["role_source"] == "provider" else "local",
        email=None if row["email"] is None else str(row["email"]),
        created_at=from_millis(int(row["created_at"])),
        disabled=row.get("disabled_at") is not None,
    )


def check_role(value: object) -> Role:
    if value not in ROLES:
        message = "admin or member"
        raise InvalidInput(f"role must be {message}", [FieldError("role", message)])
    return "admin" if value == "admin" else "member"


def role_of(tx: Tx, user: str) -> Role | None:
    """The user's role (None: no such user)."""
    row = sql(tx).one("SELECT role FROM users WHERE id = ?", (user,))
    if row is None:
        return None
    return "admin" if row["role"] == "admin" else "member"


def is_admin(tx: Tx, user: str) -> bool:
    return role_of(tx, user) == "admin"


def set_role(tx: Tx, user: str, role: Role, *, source: RoleSource = "local") -> UserRow:
    """Give ``user`` ``role``; NotFound for an unknown user."""
    check_role(role)
    found = sql(tx).one(
        "UPDATE users SET role = ?, role_source = ? WHERE id = ? RETURNING *",
        (role, source, user),
    )
    if found is None:
        raise NotFound(f"no user {user!r}")
    return _user(found)


def set_email(tx: Tx, user: str, email: str | None) -> None:
    sql(tx).execute("UPDATE users SET email = ? WHERE id = ?", (email, user))


def user(tx: Tx, user_id: str) -> UserRow | None:
    row = sql(tx).one("SELECT * FROM users WHERE id = ?", (user_id,))
    return None if row is None else _user(row)


def users(tx: Tx) -> list[UserRow]:
    """Every user, by name."""
    return [_user(row) for row in sql(tx).all("SELECT * FROM users ORDER BY id")]


def admins(tx: Tx) -> list[str]:
    rows = sql(tx).all("SELECT id FROM users WHERE role = 'admin' ORDER BY id")
    return [str(row["id"]) for row in rows]


# -- settings admins change at run time -------------------------------------------------------


def option(tx: Tx, name: str) -> str | None:
    row = sql(tx).one("SELECT value FROM server_options WHERE name = ?", (name,))
    return None if row is None else str(row["value"])


def set_option(tx: Tx, name: str, value: str, *, by: str, now: datetime) -> None:
    sql(tx).execute(
        "INSERT INTO server_options (name, value, changed_by, changed_at) VALUES (?, ?, ?, ?)"
        " ON CONFLICT (name) DO UPDATE SET value = excluded.value,"
        " changed_by = excluded.changed_by, changed_at = excluded.changed_at",
        (name, value, by, to_millis(now)),
    )


# -- the admins' audit trail ------------------------------------------------------------------


@dataclass(frozen=True)
class Origin:
    """Where an admin action came from."""

    address: str = ""
    user_agent: str = ""
    via: str = "api"
    """``api``, ``web`` (the admin page) or ``cli`` (a command on the server's machine)."""


def record(
    tx: Tx,
    actor: str,
    action: str,
    now: datetime,
    *,
    target: str | None = None,
    detail: dict[str, Any] | None = None,
    origin: Origin | None = None,
) -> None:
    """Append one admin action to the trail."""
    origin = origin or Origin(via="cli")
    detail = {**(detail or {}), "via": origin.via}
    sql(tx).execute(
        "INSERT INTO admin_audit (at, actor, action, target, detail, address, user_agent)"
        " VALUES (?, ?, ?, ?, ?, ?, ?)",
        (
            to_millis(now),
            actor,
            action,
            target,
            json.dumps(detail, sort_keys=True),
            origin.address or None,
            origin.user_agent[:300] or None,
        ),
    )


@dataclass(frozen=True)
class AuditFilter:
    """Which admin actions to read: all of them when every field is empty."""

    actor: str | None = None
    action: str | None = None
    target: str | None = None
    since: datetime | None = None
    until: datetime | None = None


def _entry(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "seq": int(row["seq"]),
        "at": iso(from_millis(int(row["at"]))),
        "actor": str(row["actor"]),
        "action": str(row["action"]),
        "target": row["target"],
        "detail": json.loads(row["detail"]) if row["detail"] else {},
        "address": row["address"],
        "user_agent": row["user_agent"],
    }


def trail(
    tx: Tx, chosen: AuditFilter, *, after: int = 0, batch: int = 1000
) -> Iterator[dict[str, Any]]:
    """The admin actions ``chosen`` picks, oldest first (read a batch at a time)."""
    where = ["seq > ?"]
    params: list[Any] = []
    for column, value in (
        ("actor", chosen.actor),
        ("action", chosen.action),
        ("target", chosen.target),
    ):
        if value:
            where.append(f"{column} = ?")
            params.append(value)
    if chosen.since is not None:
        where.append("at >= ?")
        params.append(to_millis(chosen.since))
    if chosen.until is not None:
        where.append("at < ?")
        params.append(to_millis(chosen.until))
    query = f"SELECT * FROM admin_audit WHERE {' AND '.join(where)} ORDER BY seq LIMIT ?"
    while True:
        rows = sql(tx).all(query, (after, *params, batch))
        for row in rows:
            yield _entry(row)
        if len(rows) < batch:
            return
        after = int(rows[-1]["seq"])
