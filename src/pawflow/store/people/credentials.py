"""The credential tables: ``api_tokens``, ``signin_links`` and ``web_sessions``, and
whether a user is disabled (``users.disabled_at``), which refuses all three.

Each keeps a secret only as its digest (made by :mod:`pawflow.server.credentials`): every
function here takes the digest, never the secret. A token is named by its ``id`` (``tok_…``)
wherever it is listed or revoked.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from pawflow.clock import from_millis, iso, to_millis
from pawflow.ids import new_id
from pawflow.store.engine.database import Tx, sql
from pawflow.store.engine.rows import decode, decode_all

TOKEN_ID_PREFIX = "tok_"

# -- API tokens -----------------------------------------------------------------------------

TOUCH_EVERY = timedelta(minutes=1)
"""How stale a token's ``last_used_at`` (or a login's ``last_seen_at``) may be before a use
writes it again: at most one write a minute per credential, never one per request."""


@dataclass(frozen=True)
class TokenRow:
    """A personal access token as listed: everything but its secret (and its digest)."""

    id: str
    user_id: str
    name: str
    created_at: datetime
    expires_at: datetime | None
    last_used_at: datetime | None

    def expired(self, now: datetime) -> bool:
        return self.expires_at is not None and self.expires_at <= now

    def to_dict(self) -> dict[str, object]:
        return {
            "id": self.id,
            "user": self.user_id,
            "name": self.name,
            "created_at": iso(self.created_at),
            "expires_at": None if self.expires_at is None else iso(self.expires_at),
            "last_used_at": None if self.last_used_at is None else iso(self.last_used_at),
        }


@dataclass(frozen=True)
class TokenCheck:
    """What a token's digest finds: its row, its stored digest, and whether its user is
    disabled (one read, on every request made with a token)."""

    token: TokenRow
    token_hash: str
    user_disabled: bool


_TOKEN_COLUMNS = "id, user_id, name, created_at, expires_at, last_used_at"


def add_token(
    tx: Tx,
    token_hash: str,
    user: str,
    *,
    name: str,
    now: datetime,
    expires_at: datetime | None,
) -> TokenRow:
    row = sql(tx).one(
        "INSERT INTO api_tokens (token_hash, id, user_id, name, created_at, expires_at)"
        f" VALUES (?, ?, ?, ?, ?, ?) RETURNING {_TOKEN_COLUMNS}",
        (
            token_hash,
            TOKEN_ID_PREFIX + new_id(9),
            user,
            name,
            to_millis(now),
            None if expires_at is None else to_millis(expires_at),
        ),
    )
    assert row is not None
    return decode(TokenRow, row)


def check_token(tx: Tx, token_hash: str) -> TokenCheck | None:
    """The token of a digest with its user's state, expired or not (None: no such token)."""
    row = sql(tx).one(
        "SELECT t.id, t.user_id, t.name, t.created_at, t.expires_at, t.last_used_at,"
        " t.token_hash, u.disabled_at FROM api_tokens t JOIN users u ON u.id = t.user_id"
        " WHERE t.token_hash = ?",
        (token_hash,),
    )
    if row is None:
        return None
    return TokenCheck(decode(TokenRow, row), str(row["token_hash"]), row["disabled_at"] is not None)


def token_current(tx: Tx, token_hash: str, user: str, *, now: datetime) -> bool:
    """Whether the token still lets ``user`` in: not revoked, not expired, user enabled."""
    row = sql(tx).one(
        "SELECT 1 AS found FROM api_tokens t JOIN users u ON u.id = t.user_id"
        " WHERE t.token_hash = ? AND t.user_id = ? AND u.disabled_at IS NULL"
        " AND (t.expires_at IS NULL OR t.expires_at > ?)",
        (token_hash, user, to_millis(now)),
    )
    return row is not None


def touch_token(tx: Tx, token_hash: str, now: datetime) -> None:
    """Note a use of the token (callers write it at most once per :data:`TOUCH_EVERY`)."""
    sql(tx).execute(
        "UPDATE api_tokens SET last_used_at = ? WHERE token_hash = ?",
        (to_millis(now), token_hash),
    )


def tokens(tx: Tx, user: str | None = None) -> list[TokenRow]:
    """The tokens of ``user`` (None: everyone's), by owner then newest first."""
    where, params = ("WHERE user_id = ?", (user,)) if user is not None else ("", ())
    rows = sql(tx).all(
        f"SELECT {_TOKEN_COLUMNS} FROM api_tokens {where} ORDER BY user_id, created_at DESC, id",
        params,
    )
    return decode_all(TokenRow, rows)


def token_by_id(tx: Tx, token_id: str) -> TokenRow | None:
    row = sql(tx).one(f"SELECT {_TOKEN_COLUMNS} FROM api_tokens WHERE id = ?", (token_id,))
    return None if row is None else decode(TokenRow, row)


def remove_token(tx: Tx, token_id: str) -> TokenRow | None:
    """Delete one token by its id; what it was (None: no such token)."""
    row = sql(tx).one(
        f"DELETE FROM api_tokens WHERE id = ? RETURNING {_TOKEN_COLUMNS}", (token_id,)
    )
    return None if row is None else decode(TokenRow, row)


def remove_tokens(tx: Tx, user: str) -> int:
    return sql(tx).execute("DELETE FROM api_tokens WHERE user_id = ?", (user,))


# -- users' access ----------------------------------------------------------------------------


def set_disabled(tx: Tx, user: str, disabled: bool, *, now: datetime) -> bool:
    """Disable (or enable again) a user; False when nothing changed (unknown, or already so)."""
    if disabled:
        query = "UPDATE users SET disabled_at = ? WHERE id = ? AND disabled_at IS NULL"
        params: tuple[object, ...] = (to_millis(now), user)
    else:
        query = "UPDATE users SET disabled_at = NULL WHERE id = ? AND disabled_at IS NOT NULL"
        params = (user,)
    return sql(tx).execute(query, params) > 0


def disabled_at(tx: Tx, user: str) -> datetime | None:
    row = sql(tx).one("SELECT disabled_at FROM users WHERE id = ?", (user,))
    if row is None or row["disabled_at"] is None:
        return None
    return from_millis(int(row["disabled_at"]))


def user_enabled(tx: Tx, user: str) -> bool:
    """Whether ``user`` exists and is not disabled."""
    row = sql(tx).one("SELECT disabled_at FROM users WHERE id = ?", (user,))
    return row is not None and row["disabled_at"] is None


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


@dataclass(frozen=True)
class LoginCheck:
    user: str
    csrf_token: str
    last_seen_at: datetime


def add_login(
    tx: Tx, login_hash: str, user: str, csrf_token: str, *, now: datetime, expires_at: datetime
) -> None:
    sql(tx).execute(
        "INSERT INTO web_sessions (session_hash, user_id, csrf_token, created_at, expires_at,"
        " last_seen_at) VALUES (?, ?, ?, ?, ?, ?)",
        (login_hash, user, csrf_token, to_millis(now), to_millis(expires_at), to_millis(now)),
    )


_LIVE_LOGIN = (
    " FROM web_sessions s JOIN users u ON u.id = s.user_id WHERE s.session_hash = ?"
    " AND s.expires_at > ? AND s.last_seen_at > ? AND u.disabled_at IS NULL"
)


def login(tx: Tx, login_hash: str, *, now: datetime, idle: timedelta) -> LoginCheck | None:
    """A live login: before its expiry, used within ``idle``, its user enabled."""
    row = sql(tx).one(
        "SELECT s.user_id, s.csrf_token, s.last_seen_at" + _LIVE_LOGIN,
        (login_hash, to_millis(now), to_millis(now - idle)),
    )
    if row is None:
        return None
    return LoginCheck(
        str(row["user_id"]), str(row["csrf_token"]), from_millis(int(row["last_seen_at"]))
    )


def login_current(tx: Tx, login_hash: str, user: str, *, now: datetime, idle: timedelta) -> bool:
    row = sql(tx).one(
        "SELECT 1 AS found" + _LIVE_LOGIN + " AND s.user_id = ?",
        (login_hash, to_millis(now), to_millis(now - idle), user),
    )
    return row is not None


def touch_login(tx: Tx, login_hash: str, now: datetime) -> None:
    """Note a use of the login (callers write it at most once per :data:`TOUCH_EVERY`)."""
    sql(tx).execute(
        "UPDATE web_sessions SET last_seen_at = ? WHERE session_hash = ?",
        (to_millis(now), login_hash),
    )


def remove_login(tx: Tx, login_hash: str) -> str | None:
    """End a login; whose it was (None: there was none)."""
    row = sql(tx).one(
        "DELETE FROM web_sessions WHERE session_hash = ? RETURNING user_id", (login_hash,)
    )
    return None if row is None else str(row["user_id"])


def remove_logins(tx: Tx, user: str) -> int:
    """End every browser login of ``user``; how many."""
    return sql(tx).execute("DELETE FROM web_sessions WHERE user_id = ?", (user,))


def prune_expired(tx: Tx, now: datetime) -> int:
    """Remove the logins and sign-in links past their expiry; returns how many."""
    at = to_millis(now)
    removed = sql(tx).execute("DELETE FROM web_sessions WHERE expires_at <= ?", (at,))
    removed += sql(tx).execute("DELETE FROM signin_links WHERE expires_at <= ?", (at,))
    return removed
