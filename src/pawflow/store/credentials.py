"""The credential tables: ``api_tokens``, ``signin_links`` and ``web_sessions``.

Each keeps a secret only as its digest (made by :mod:`pawflow.server.credentials`): every
function here takes the digest, never the secret.
"""

from __future__ import annotations

from datetime import datetime

from pawflow.clock import to_millis
from pawflow.store.database import Tx, sql

# -- API tokens -----------------------------------------------------------------------------


def add_token(tx: Tx, token_hash: str, user: str, *, label: str, now: datetime) -> None:
    sql(tx).execute(
        "INSERT INTO api_tokens (token_hash, user_id, label, created_at) VALUES (?, ?, ?, ?)",
        (token_hash, user, label, to_millis(now)),
    )


def token(tx: Tx, token_hash: str) -> tuple[str, str] | None:
    """The stored digest and its user, for a token's digest."""
    row = sql(tx).one(
        "SELECT token_hash, user_id FROM api_tokens WHERE token_hash = ?", (token_hash,)
    )
    return None if row is None else (str(row["token_hash"]), str(row["user_id"]))


def token_current(tx: Tx, token_hash: str, user: str) -> bool:
    row = sql(tx).one(
        "SELECT 1 AS found FROM api_tokens WHERE token_hash = ? AND user_id = ?",
        (token_hash, user),
    )
    return row is not None


def remove_tokens(tx: Tx, user: str) -> int:
    return sql(tx).execute("DELETE FROM api_tokens WHERE user_id = ?", (user,))


# -- one-time sign-in links ---------------------------------------------------------------


def add_signin_link(
    tx: Tx, link_hash: str, user: str, *, now: datetime, expires_at: datetime
) -> None:
    sql(tx).execute(
        "INSERT INTO signin_links (token_hash, user_id, created_at, expires_at)"
        " VALUES (?, ?, ?, ?)",
        (link_hash, user, to_millis(now), to_millis(expires_at)),
    )


def signin_link_user(tx: Tx, link_hash: str, *, now: datetime) -> str | None:
    """Whom a live link is for, leaving it unused."""
    row = sql(tx).one(
        "SELECT user_id FROM signin_links WHERE token_hash = ? AND expires_at > ?",
        (link_hash, to_millis(now)),
    )
    return None if row is None else str(row["user_id"])


def use_signin_link(tx: Tx, link_hash: str, *, now: datetime) -> str | None:
    """Use a live link up; whom it was for."""
    row = sql(tx).one(
        "DELETE FROM signin_links WHERE token_hash = ? AND expires_at > ? RETURNING user_id",
        (link_hash, to_millis(now)),
    )
    return None if row is None else str(row["user_id"])


# -- browser logins -------------------------------------------------------------------------


def add_login(
    tx: Tx, login_hash: str, user: str, csrf_token: str, *, now: datetime, expires_at: datetime
) -> None:
    sql(tx).execute(
        "INSERT INTO web_sessions (session_hash, user_id, csrf_token, created_at, expires_at)"
        " VALUES (?, ?, ?, ?, ?)",
        (login_hash, user, csrf_token, to_millis(now), to_millis(expires_at)),
    )


def login(tx: Tx, login_hash: str, *, now: datetime) -> tuple[str, str] | None:
    """The user and CSRF token of a live login."""
    row = sql(tx).one(
        "SELECT user_id, csrf_token FROM web_sessions WHERE session_hash = ? AND expires_at > ?",
        (login_hash, to_millis(now)),
    )
    return None if row is None else (str(row["user_id"]), str(row["csrf_token"]))


def login_current(tx: Tx, login_hash: str, user: str, *, now: datetime) -> bool:
    row = sql(tx).one(
        "SELECT 1 AS found FROM web_sessions"
        " WHERE session_hash = ? AND user_id = ? AND expires_at > ?",
        (login_hash, user, to_millis(now)),
    )
    return row is not None


def remove_login(tx: Tx, login_hash: str) -> str | None:
    """End a login; whose it was (None: there was none)."""
    row = sql(tx).one(
        "DELETE FROM web_sessions WHERE session_hash = ? RETURNING user_id", (login_hash,)
    )
    return None if row is None else str(row["user_id"])


def prune_expired(tx: Tx, now: datetime) -> int:
    """Remove the logins and sign-in links past their expiry; returns how many."""
    at = to_millis(now)
    removed = sql(tx).execute("DELETE FROM web_sessions WHERE expires_at <= ?", (at,))
    removed += sql(tx).execute("DELETE FROM signin_links WHERE expires_at <= ?", (at,))
    return removed
