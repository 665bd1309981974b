"""Single sign-on in the store: sign-ins under way, who a provider's subject is, and the
groups the provider keeps.

A sign-in under way (``oidc_attempts``) holds the PKCE verifier and the nonce of one trip to
the provider under the digest of its ``state``; coming back uses it up, so a ``state`` (and
the ``code`` that came with it) works once. ``provider_groups`` names the groups whose members
follow the provider's groups claim: :func:`sync_groups` puts a user in the provider's groups
they are in and takes them out of the others, at each sign-in; by hand they are not edited
(:func:`pawflow.store.people.groups.add_members` refuses them).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from pawflow.clock import to_millis
from pawflow.store.engine.database import Tx, sql
from pawflow.store.people.groups import _NAME, join, leave, members


@dataclass(frozen=True)
class Attempt:
    nonce: str
    code_verifier: str


def add_attempt(
    tx: Tx, state_hash: str, attempt: Attempt, *, now: datetime, expires_at: datetime
) -> None:
    sql(tx).execute(
        "INSERT INTO oidc_attempts (state_hash, nonce, code_verifier, created_at, expires_at)"
        " VALUES (?, ?, ?, ?, ?)",
        (state_hash, attempt.nonce, attempt.code_verifier, to_millis(now), to_millis(expires_at)),
    )


def use_attempt(tx: Tx, state_hash: str, *, now: datetime) -> Attempt | None:
    """Use up the live sign-in of ``state_hash`` (None: unknown, used or expired)."""
    row = sql(tx).one(
        "DELETE FROM oidc_attempts WHERE state_hash = ? RETURNING nonce, code_verifier, expires_at",
        (state_hash,),
    )
    if row is None or int(row["expires_at"]) <= to_millis(now):
        return None
    return Attempt(str(row["nonce"]), str(row["code_verifier"]))


def prune_attempts(tx: Tx, now: datetime) -> int:
    return sql(tx).execute("DELETE FROM oidc_attempts WHERE expires_at <= ?", (to_millis(now),))


def identity_user(tx: Tx, issuer: str, subject: str) -> str | None:
    row = sql(tx).one(
        "SELECT user_id FROM oidc_identities WHERE issuer = ? AND subject = ?", (issuer, subject)
    )
    return None if row is None else str(row["user_id"])


def link_identity(tx: Tx, issuer: str, subject: str, user: str, *, now: datetime) -> None:
    """Remember that ``subject`` at ``issuer`` is ``user`` (or note another sign-in)."""
    sql(tx).execute(
        "INSERT INTO oidc_identities (issuer, subject, user_id, created_at, last_signin_at)"
        " VALUES (?, ?, ?, ?, ?) ON CONFLICT (issuer, subject)"
        " DO UPDATE SET last_signin_at = excluded.last_signin_at",
        (issuer, subject, user, to_millis(now), to_millis(now)),
    )


def provider_groups(tx: Tx) -> set[str]:
    return {str(row["name"]) for row in sql(tx).all("SELECT name FROM provider_groups")}


def is_provider_group(tx: Tx, name: str) -> bool:
    found = sql(tx).one("SELECT 1 AS found FROM provider_groups WHERE name = ?", (name,))
    return found is not None


def usable_group_names(claimed: Iterable[object]) -> list[str]:
    """The names of a groups claim that can name a PawFlow group (others are left out)."""
    found: list[str] = []
    for name in claimed:
        if isinstance(name, str) and _NAME.fullmatch(name) and name not in found:
            found.append(name)
    return found


def sync_groups(
    tx: Tx, user: str, claimed: Iterable[str], *, issuer: str, now: datetime
) -> tuple[list[str], list[str]]:
    """Make ``user``'s provider groups those ``claimed``: (joined, left)."""
    wanted = usable_group_names(claimed)
    kept = provider_groups(tx)
    joined: list[str] = []
    for name in wanted:
        sql(tx).execute(
            "INSERT INTO provider_groups (name, issuer, synced_at) VALUES (?, ?, ?)"
            " ON CONFLICT (name) DO UPDATE SET synced_at = excluded.synced_at",
            (name, issuer, to_millis(now)),
        )
        if user not in members(tx, name):
            join(tx, name, user, now)
            joined.append(name)
    left: list[str] = []
    for name in sorted(kept - set(wanted)):
        if leave(tx, name, user):
            left.append(name)
    return joined, left
