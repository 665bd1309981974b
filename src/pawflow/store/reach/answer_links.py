"""Answer links: a capability to answer one request as one user, without signing in.

A link's secret (``pfa_`` and 43 random characters) is given out once, in the message that
carries it, and kept only as its SHA-256 digest. It is bound to its request and its user:
nothing a visitor sends can point it at another request. It expires with the request and
is spent by the answer it carries, in the answer's own transaction (:func:`spend`); opening
it (:func:`find`) changes nothing, so a mail scanner that fetches every link burns none.
It ends with its user's access: :func:`revoke` (revoking the user's tokens calls it) ends
every link of theirs not yet used.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import datetime

from pawflow.clock import from_millis, to_millis
from pawflow.store.engine.database import Tx, sql

PREFIX = "pfa_"
MAX_SECRET = 200


def digest(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True)
class AnswerLink:
    """What a link grants: answering ``request_id`` as ``user``, until it is spent."""

    request_id: str
    user: str
    expires_at: datetime | None
    used_at: datetime | None
    revoked_at: datetime | None = None

    def expired(self, now: datetime) -> bool:
        return self.expires_at is not None and self.expires_at <= now


def create(
    tx: Tx,
    request_id: str,
    user: str,
    *,
    now: datetime,
    expires_at: datetime | None,
    outbox_id: str | None = None,
) -> str:
    """A new link for ``user`` to answer ``request_id``; returns its secret (shown once)."""
    secret = PREFIX + secrets.token_urlsafe(32)
    sql(tx).execute(
        "INSERT INTO answer_links (token_hash, request_id, user_id, outbox_id, created_at,"
        " expires_at) VALUES (?, ?, ?, ?, ?, ?)",
        (
            digest(secret),
            request_id,
            user,
            outbox_id,
            to_millis(now),
            None if expires_at is None else to_millis(expires_at),
        ),
    )
    return secret


def find(tx: Tx, secret: str) -> AnswerLink | None:
    """What ``secret`` grants, spent or not; None for anything that is not a link."""
    if not isinstance(secret, str) or not secret.startswith(PREFIX) or len(secret) > MAX_SECRET:
        return None
    row = sql(tx).one("SELECT * FROM answer_links WHERE token_hash = ?", (digest(secret),))
    if row is None:
        return None
    return AnswerLink(
        request_id=str(row["request_id"]),
        user=str(row["user_id"]),
        expires_at=None if row["expires_at"] is None else from_millis(int(row["expires_at"])),
        used_at=None if row["used_at"] is None else from_millis(int(row["used_at"])),
        revoked_at=None if row["revoked_at"] is None else from_millis(int(row["revoked_at"])),
    )


def spend(tx: Tx, secret: str, now: datetime) -> bool:
    """Use the link up; False if it was spent already (another answer won) or revoked."""
    return (
        sql(tx).execute(
            "UPDATE answer_links SET used_at = ? WHERE token_hash = ? AND used_at IS NULL"
            " AND revoked_at IS NULL",
            (to_millis(now), digest(secret)),
        )
        > 0
    )


def revoke(tx: Tx, user: str, now: datetime) -> int:
    """End every link of ``user`` not used yet; how many."""
    return sql(tx).execute(
        "UPDATE answer_links SET revoked_at = ? WHERE user_id = ? AND used_at IS NULL"
        " AND revoked_at IS NULL",
        (to_millis(now), user),
    )


def forget_outbox(tx: Tx, outbox_ids: list[str]) -> int:
    """The links sent in the notifications ``outbox_ids`` no longer name them (the retention
    sweep forgets those notifications; the links stay theirs to spend); how many."""
    if not outbox_ids:
        return 0
    marks = ", ".join("?" for _ in outbox_ids)
    return sql(tx).execute(
        f"UPDATE answer_links SET outbox_id = NULL WHERE outbox_id IN ({marks})", outbox_ids
    )
