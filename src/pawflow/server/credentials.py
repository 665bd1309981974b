"""Credentials in the store: API tokens, one-time sign-in links, browser logins.

Each is a random secret handed out once and kept only as its SHA-256 digest. This module
needs only the store, never the HTTP framework: ``pawflow users …`` makes and revokes
credentials with it; :mod:`pawflow.server.auth` checks them on each request.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from pawflow.errors import InvalidInput
from pawflow.server.hub import auth_notice
from pawflow.store import Store, answer_links
from pawflow.store import Transaction as Tx
from pawflow.store import credentials as rows
from pawflow.store.conversations import ensure_user

TOKEN_PREFIX = "pf_"
MAX_SECRET = 200


def digest(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8", "surrogatepass")).hexdigest()


def _new_secret() -> str:
    return secrets.token_urlsafe(32)


def create_token(tx: Tx, user: str, *, label: str = "", now: datetime) -> str:
    """A new API token for ``user`` (created if new); only its digest is kept."""
    ensure_user(tx, user, now)
    token = TOKEN_PREFIX + _new_secret()
    rows.add_token(tx, digest(token), user, label=label, now=now)
    return token


def user_for_token(tx: Tx, token: str) -> str | None:
    if not token or len(token) > MAX_SECRET:
        return None
    wanted = digest(token)
    found = rows.token(tx, wanted)
    # The lookup is by digest; comparing the digests again in constant time costs nothing.
    if found is None or not hmac.compare_digest(found[0], wanted):
        return None
    return found[1]


def revoke_tokens(tx: Tx, user: str, *, now: datetime) -> int:
    """Revoke every API token of ``user`` (how many), and end their unused answer links."""
    tx.notify(auth_notice(user))  # the user's open streams check their credentials now
    answer_links.revoke(tx, user, now)
    return rows.remove_tokens(tx, user)


def create_signin_link(tx: Tx, user: str, *, ttl: timedelta, now: datetime) -> str:
    """A one-time secret that signs ``user`` in from a browser once, within ``ttl``."""
    ensure_user(tx, user, now)
    secret = _new_secret()
    rows.add_signin_link(tx, digest(secret), user, now=now, expires_at=now + ttl)
    return secret


def redeem_signin(tx: Tx, secret: str, *, now: datetime) -> str | None:
    """Consume a sign-in secret; the user it was for, or None (unknown, used or expired)."""
    if not secret or len(secret) > MAX_SECRET:
        return None
    return rows.use_signin_link(tx, digest(secret), now=now)


@dataclass(frozen=True)
class BrowserLogin:
    """A browser signed in by cookie ("session" in PawFlow means a conversation's session)."""

    user: str
    csrf_token: str


def create_login(tx: Tx, user: str, *, ttl: timedelta, now: datetime) -> tuple[str, BrowserLogin]:
    """A browser login: the cookie value and the login it opens."""
    cookie = _new_secret()
    login = BrowserLogin(user, _new_secret())
    rows.add_login(tx, digest(cookie), user, login.csrf_token, now=now, expires_at=now + ttl)
    return cookie, login


def login_for(tx: Tx, cookie: str, *, now: datetime) -> BrowserLogin | None:
    if not cookie or len(cookie) > MAX_SECRET:
        return None
    found = rows.login(tx, digest(cookie), now=now)
    return None if found is None else BrowserLogin(*found)


def drop_login(tx: Tx, cookie: str) -> None:
    user = rows.remove_login(tx, digest(cookie))
    if user is not None:
        tx.notify(auth_notice(user))


def prune_expired(tx: Tx, now: datetime) -> int:
    return rows.prune_expired(tx, now)


# -- convenience over a store (the CLI and the serve command) -------------------------------


def issue_token(store: Store, user: str, *, label: str = "") -> str:
    with store.transaction() as tx:
        return create_token(tx, user, label=label, now=store.now())


def kept_token(store: Store, user: str, path: Path, *, label: str = "") -> str:
    """``user``'s token saved in ``path`` while the store still takes it for them; otherwise
    a new one, saved there (readable by its owner only) for the next time. ``pawflow serve
    --demo`` prints the same token at every start instead of minting one each time; a file
    that cannot be written costs only that reuse."""
    try:
        saved = path.read_text("utf-8").strip()
    except (OSError, UnicodeDecodeError):
        saved = ""
    with store.transaction() as tx:
        if saved and user_for_token(tx, saved) == user:
            return saved
        token = create_token(tx, user, label=label, now=store.now())
    with contextlib.suppress(OSError):
        _save_secret(path, token)
    return token


def _save_secret(path: Path, secret: str) -> None:
    """Write ``secret`` to ``path`` whole (a new file renamed over the old), mode 0600."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fresh = path.with_name(f".{path.name}.{secrets.token_hex(4)}")
    descriptor = os.open(fresh, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as file:
            file.write(secret + "\n")
        os.replace(fresh, path)
    except BaseException:
        fresh.unlink(missing_ok=True)
        raise


def issue_signin_link(store: Store, user: str, *, base_url: str, ttl: timedelta) -> str:
    with store.transaction() as tx:
        secret = create_signin_link(tx, user, ttl=ttl, now=store.now())
    return f"{base_url.rstrip('/')}/signin?token={secret}"


def validate_user_name(name: str) -> str:
    """User names as the CLI accepts them: printable, no spaces at the ends, ≤200 chars."""
    if not name or name != name.strip() or len(name) > 200 or not name.isprintable():
        raise InvalidInput("a user name is 1-200 printable characters without outer spaces")
    return name
