"""Groups of users and delegations: whom ``group:NAME`` names, and who answers for whom.

A request's assignees are users and ``group:NAME`` entries; :func:`expand` turns them into
the people they name now (a group's members are read when someone answers, so a member added
later may answer too). A delegation lets its ``delegate`` answer for the ``principal``
until a moment.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import datetime

from pawflow.clock import from_millis, iso, to_millis
from pawflow.errors import Conflict, FieldError, InvalidInput, NotFound
from pawflow.store.engine.database import Tx, sql
from pawflow.store.ledger.conversations import ensure_user

GROUP_PREFIX = "group:"
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.\-]{0,99}")
MAX_ASSIGNEES = 100


def check_group_name(name: object) -> str:
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        message = "a group name is 1 to 100 letters, digits, '.', '_' or '-'"
        raise InvalidInput(message, [FieldError("name", message)])
    return name


def check_assignees(value: object, field: str = "assignees") -> list[str]:
    """A list of user names and ``group:NAME`` entries, without repeats, in order."""
    if not isinstance(value, list) or not value or len(value) > MAX_ASSIGNEES:
        message = f"a list of 1 to {MAX_ASSIGNEES} users or group:NAME entries"
        raise InvalidInput(f"{field} is invalid", [FieldError(field, message)])
    found: list[str] = []
    for index, entry in enumerate(value):
        if not isinstance(entry, str) or not entry or len(entry) > 200 or "\x00" in entry:
            message = "a user name or group:NAME"
            raise InvalidInput(f"{field} is invalid", [FieldError(f"{field}[{index}]", message)])
        if entry not in found:  # a group of no one, or no group, stands for no one
            found.append(entry)
    return found


def check_kept_here(tx: Tx, name: str) -> None:
    """Refuse to edit by hand a group the identity provider keeps (``provider_groups``)."""
    found = sql(tx).one("SELECT 1 AS found FROM provider_groups WHERE name = ?", (name,))
    if found is not None:
        raise Conflict(
            f"group {name!r} is kept by the identity provider: change it there"
            " (its members follow the groups claim at each sign-in)"
        )


def add_members(tx: Tx, name: str, users: Iterable[str], now: datetime) -> list[str]:
    """Add users to a group (made on first use); returns its members."""
    check_group_name(name)
    check_kept_here(tx, name)
    for user in users:
        ensure_user(tx, user, now)
        sql(tx).execute(
            "INSERT INTO user_groups (name, member, added_at) VALUES (?, ?, ?)"
            " ON CONFLICT (name, member) DO NOTHING",
            (name, user, to_millis(now)),
        )
    return members(tx, name)


def join(tx: Tx, name: str, user: str, now: datetime) -> None:
    """Put ``user`` in group ``name`` as its provider says (no check of where it is kept)."""
    sql(tx).execute(
        "INSERT INTO user_groups (name, member, added_at) VALUES (?, ?, ?)",
        (name, user, to_millis(now)),
    )


def leave(tx: Tx, name: str, user: str) -> bool:
    """Take ``user`` out of group ``name``; whether they were in it."""
    return (
        sql(tx).execute("DELETE FROM user_groups WHERE name = ? AND member = ?", (name, user)) > 0
    )


def remove_members(tx: Tx, name: str, users: Iterable[str]) -> list[str]:
    """Take users out of a group (all of them when ``users`` is empty); returns who is left."""
    check_group_name(name)
    check_kept_here(tx, name)
    chosen = list(users)
    if not chosen:
        sql(tx).execute("DELETE FROM user_groups WHERE name = ?", (name,))
    for user in chosen:
        sql(tx).execute("DELETE FROM user_groups WHERE name = ? AND member = ?", (name, user))
    return members(tx, name)


def members(tx: Tx, name: str) -> list[str]:
    rows = sql(tx).all("SELECT member FROM user_groups WHERE name = ? ORDER BY member", (name,))
    return [str(row["member"]) for row in rows]


def all_groups(tx: Tx) -> dict[str, list[str]]:
    """Every group and its members, by name."""
    found: dict[str, list[str]] = {}
    for row in sql(tx).all("SELECT name, member FROM user_groups ORDER BY name, member"):
        found.setdefault(str(row["name"]), []).append(str(row["member"]))
    return found


def groups_of(tx: Tx, user: str) -> list[str]:
    rows = sql(tx).all("SELECT name FROM user_groups WHERE member = ? ORDER BY name", (user,))
    return [str(row["name"]) for row in rows]


def expand(tx: Tx, assignees: Iterable[str]) -> list[str]:
    """The people ``assignees`` name now: users as themselves, groups as their members."""
    people: list[str] = []
    for entry in assignees:
        named = (
            members(tx, entry.removeprefix(GROUP_PREFIX))
            if entry.startswith(GROUP_PREFIX)
            else [entry]
        )
        people.extend(person for person in named if person not in people)
    return people


def delegate(tx: Tx, principal: str, to: str, until: datetime, now: datetime) -> dict[str, str]:
    """Let ``to`` answer for ``principal`` until ``until`` (again: moves the end)."""
    if principal == to:
        raise Conflict("a user cannot delegate to themselves")
    if until <= now:  # like a deadline already past
        raise Conflict("the delegation would already be over: until is past")
    ensure_user(tx, principal, now)
    ensure_user(tx, to, now)
    sql(tx).execute(
        "INSERT INTO delegations (principal, delegate, until_at, created_at) VALUES (?, ?, ?, ?)"
        " ON CONFLICT (principal, delegate) DO UPDATE SET until_at = excluded.until_at",
        (principal, to, to_millis(until), to_millis(now)),
    )
    return {"principal": principal, "delegate": to, "until": iso(until)}


def revoke_delegation(tx: Tx, principal: str, to: str) -> None:
    found = sql(tx).one(
        "DELETE FROM delegations WHERE principal = ? AND delegate = ? RETURNING principal",
        (principal, to),
    )
    if found is None:
        raise NotFound()


def delegations(tx: Tx, now: datetime) -> list[dict[str, str]]:
    """The delegations in force, by principal."""
    rows = sql(tx).all(
        "SELECT * FROM delegations WHERE until_at > ? ORDER BY principal, delegate",
        (to_millis(now),),
    )
    return [
        {
            "principal": str(row["principal"]),
            "delegate": str(row["delegate"]),
            "until": iso(from_millis(int(row["until_at"]))),
        }
        for row in rows
    ]


def principals_of(tx: Tx, delegate_user: str, now: datetime) -> list[str]:
    """Whom ``delegate_user`` answers for now."""
    rows = sql(tx).all(
        "SELECT principal FROM delegations WHERE delegate = ? AND until_at > ? ORDER BY principal",
        (delegate_user, to_millis(now)),
    )
    return [str(row["principal"]) for row in rows]
