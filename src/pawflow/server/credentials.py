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

from pawflow.durations import setting_duration
from pawflow.errors import FieldError, InvalidInput, NotFound
from pawflow.server.hub import auth_notice
from pawflow.store import TOKEN_TOUCH_EVERY, Store, TokenRow, Unit
from pawflow.store import Transaction as Tx

TOKEN_PREFIX = "pf_"
MAX_SECRET = 200
NEVER_IDLE = timedelta(days=36500)
"""An idle timeout that never ends a login (for callers that have no setting)."""


def digest(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8", "surrogatepass")).hexdigest()


def _new_secret() -> str:
    return secrets.token_urlsafe(32)


def create_token(
    tx: Tx,
    user: str,
    *,
    name: str = "",
    now: datetime,
    expires_at: datetime | None = None,
) -> tuple[str, TokenRow]:
    """A new personal access token for ``user`` (created if new): the secret, shown once,
    and the token as listed. Only the secret's digest is kept."""
    u = Unit(tx, now)
    u.conversations.ensure_user(user)
    if expires_at is not None and expires_at <= now:
        message = "a token's expiry must be in the future"
        raise InvalidInput(message, [FieldError("expires", message)])
    secret = TOKEN_PREFIX + _new_secret()
    return secret, u.credentials.add_token(digest(secret), user, name=name, expires_at=expires_at)


def describe(span: timedelta) -> str:
    """``90 days``, ``12 hours``, ``90 seconds``: a setting's span as a message says it."""
    seconds = int(span.total_seconds())
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if seconds >= size and seconds % size == 0:
            count = seconds // size
            return f"{count} {unit}{'s' if count != 1 else ''}"
    return f"{seconds} seconds"


def token_expiry(now: datetime, expires: str | None, max_age: timedelta | None) -> datetime | None:
    """When a token made ``now`` ends: after ``expires`` (``90d``, ``12h``; ``never``), by
    default ``max_age`` (``PAWFLOW_TOKEN_MAX_AGE``; None: never), and never later."""
    setting = "PAWFLOW_TOKEN_MAX_AGE"
    if expires is None:
        return None if max_age is None else now + max_age
    if expires.strip().lower() == "never":
        if max_age is not None:
            message = (
                f"tokens last at most {describe(max_age)} here ({setting}); 'never' is refused"
            )
            raise InvalidInput(message, [FieldError("expires", message)])
        return None
    try:
        span = setting_duration(expires.strip())
    except InvalidInput as exc:
        message = f"{exc.message} (such as 90d, 12h or never)"
        raise InvalidInput(message, [FieldError("expires", message)]) from None
    if max_age is not None and span > max_age:
        message = f"tokens last at most {describe(max_age)} here ({setting})"
        raise InvalidInput(message, [FieldError("expires", message)])
    return now + span


@dataclass(frozen=True)
class TokenVerdict:
    """What the server makes of a token: whose it is, or why it is refused (the 401's
    reason, which every client shows), and whether its last use is worth writing now."""

    user: str | None
    refusal: str
    token: TokenRow | None = None
    stale: bool = False


def check_token(tx: Tx, token: str, *, now: datetime) -> TokenVerdict:
    u = Unit(tx, now)
    if not token or len(token) > MAX_SECRET:
        return TokenVerdict(None, "invalid token")
    wanted = digest(token)
    found = u.credentials.check_token(wanted)
    # The lookup is by digest; comparing the digests again in constant time costs nothing.
    if found is None or not hmac.compare_digest(found.token_hash, wanted):
        return TokenVerdict(None, "invalid token")
    row = found.token
    if found.user_disabled:
        return TokenVerdict(None, f"the user {row.user_id} is disabled", row)
    if row.expired(now):
        assert row.expires_at is not None
        when = row.expires_at.strftime("%Y-%m-%d %H:%M UTC")
        return TokenVerdict(None, f"token {row.id} expired on {when}", row)
    seen = row.last_used_at
    return TokenVerdict(row.user_id, "", row, seen is None or now - seen >= TOKEN_TOUCH_EVERY)


def user_for_token(tx: Tx, token: str, *, now: datetime) -> str | None:
    """Whom a token lets in now (None: unknown, revoked, expired, or its user disabled)."""
    return check_token(tx, token, now=now).user


def note_token_use(store: Store, token: str) -> None:
    """Write the token's last use (callers do so once :attr:`TokenVerdict.stale`)."""
    with store.unit() as u:
        u.credentials.touch_token(digest(token))


def list_tokens(u: Unit, user: str | None = None) -> list[TokenRow]:
    """The tokens of ``user``, or everyone's (None): never their secrets."""
    return u.credentials.tokens(user)


def revoke_token(u: Unit, token_id: str, *, owner: str | None = None) -> TokenRow | None:
    """Revoke one token by its id (only if it is ``owner``'s, when given); what it was, or
    None when there is no such token (for ``owner``). Streams opened with it end at once."""
    found = u.credentials.token_by_id(token_id)
    if found is None or (owner is not None and found.user_id != owner):
        return None
    u.credentials.remove_token(token_id)
    u.tx.notify(auth_notice(found.user_id))
    return found


def rotate_token(
    tx: Tx,
    token_id: str,
    *,
    now: datetime,
    expires_at: datetime | None = None,
    max_age: timedelta | None = None,
    owner: str | None = None,
) -> tuple[str, TokenRow] | None:
    """Replace a token by a new one of the same user and name, valid until ``expires_at``,
    by default as long as the old one was from its making (at most ``max_age``; an old
    token without expiry: ``max_age``); the old one stops at once. None: no such token (for
    ``owner``)."""
    old = revoke_token(Unit(tx, now), token_id, owner=owner)
    if old is None:
        return None
    if expires_at is None:
        span = None if old.expires_at is None else old.expires_at - old.created_at
        if max_age is not None:
            span = max_age if span is None else min(span, max_age)
        expires_at = None if span is None else now + span
    return create_token(tx, old.user_id, name=old.name, now=now, expires_at=expires_at)


def revoke_tokens(tx: Tx, user: str, *, now: datetime) -> int:
    """Revoke every API token of ``user`` (how many), end their browser sessions and their
    unused answer links."""
    u = Unit(tx, now)
    tx.notify(auth_notice(user))  # the user's open streams check their credentials now
    u.answer_links.revoke(user)
    u.credentials.remove_logins(user)
    return u.credentials.remove_tokens(user)


def sign_out_everywhere(u: Unit, user: str) -> int:
    """End every browser session of ``user`` (how many); their open streams end at once."""
    u.tx.notify(auth_notice(user))
    return u.credentials.remove_logins(user)


def set_user_disabled(tx: Tx, user: str, disabled: bool, *, now: datetime) -> bool:
    """Disable a user (every token, session, stream, MCP connection and answer link of
    theirs stops at once; tokens and sessions come back when enabled again, answer links
    do not), or enable them again. False: nothing changed. Unknown users are a NotFound."""
    u = Unit(tx, now)
    if not u.conversations.user_exists(user):
        raise NotFound("user")
    changed = u.credentials.set_disabled(user, disabled)
    if disabled:
        u.answer_links.revoke(user)
        u.credentials.remove_logins(user)
    tx.notify(auth_notice(user))
    return changed


def create_signin_link(tx: Tx, user: str, *, ttl: timedelta, now: datetime) -> str:
    """A one-time secret that signs ``user`` in from a browser once, within ``ttl``."""
    u = Unit(tx, now)
    u.conversations.ensure_user(user)
    secret = _new_secret()
    u.credentials.add_signin_link(digest(secret), user, expires_at=now + ttl)
    return secret


def redeem_signin(tx: Tx, secret: str, *, now: datetime) -> str | None:
    """Consume a sign-in secret; the user it was for, or None (unknown, used, expired, or
    its user disabled)."""
    u = Unit(tx, now)
    if not secret or len(secret) > MAX_SECRET:
        return None
    user = u.credentials.use_signin_link(digest(secret))
    return user if user is not None and u.credentials.user_enabled(user) else None


@dataclass(frozen=True)
class BrowserLogin:
    """A browser signed in by cookie ("session" in PawFlow means a conversation's session)."""

    user: str
    csrf_token: str


def create_login(tx: Tx, user: str, *, ttl: timedelta, now: datetime) -> tuple[str, BrowserLogin]:
    """A browser login: the cookie value and the login it opens."""
    u = Unit(tx, now)
    cookie = _new_secret()
    login = BrowserLogin(user, _new_secret())
    u.credentials.add_login(digest(cookie), user, login.csrf_token, expires_at=now + ttl)
    return cookie, login


@dataclass(frozen=True)
class LoginVerdict:
    login: BrowserLogin
    stale: bool
    """Its last use is worth writing now (at most once a minute)."""


def login_for(
    tx: Tx, cookie: str, *, now: datetime, idle: timedelta = NEVER_IDLE
) -> LoginVerdict | None:
    """The live login of a cookie: before its expiry, used within ``idle``, its user
    enabled; None otherwise."""
    u = Unit(tx, now)
    if not cookie or len(cookie) > MAX_SECRET:
        return None
    found = u.credentials.login(digest(cookie), idle=idle)
    if found is None:
        return None
    stale = now - found.last_seen_at >= TOKEN_TOUCH_EVERY
    return LoginVerdict(BrowserLogin(found.user, found.csrf_token), stale)


def note_login_use(store: Store, cookie: str) -> None:
    with store.unit() as u:
        u.credentials.touch_login(digest(cookie))


def drop_login(u: Unit, cookie: str) -> None:
    user = u.credentials.remove_login(digest(cookie))
    if user is not None:
        u.tx.notify(auth_notice(user))


def prune_expired(tx: Tx, now: datetime) -> int:
    u = Unit(tx, now)
    return u.credentials.prune_expired()


# -- convenience over a store (the CLI and the serve command) -------------------------------


def issue_token(
    store: Store, user: str, *, name: str = "", expires_in: timedelta | None = None
) -> str:
    """A new token for ``user``: without ``expires_in``, one that does not expire."""
    return issue_named_token(store, user, name=name, expires_in=expires_in)[0]


def issue_named_token(
    store: Store, user: str, *, name: str = "", expires_in: timedelta | None = None
) -> tuple[str, TokenRow]:
    with store.unit() as u:
        now = store.now()
        expires_at = None if expires_in is None else now + expires_in
        return create_token(u.tx, user, name=name, now=now, expires_at=expires_at)


def kept_token(
    store: Store, user: str, path: Path, *, name: str = "", expires_in: timedelta | None = None
) -> str:
    """``user``'s token saved in ``path`` while the store still takes it for them; otherwise
    a new one, saved there (readable by its owner only) for the next time. ``pawflow serve
    --demo`` prints the same token at every start instead of minting one each time; a file
    that cannot be written costs only that reuse."""
    try:
        saved = path.read_text("utf-8").strip()
    except (OSError, UnicodeDecodeError):
        saved = ""
    with store.unit() as u:
        now = store.now()
        if saved and user_for_token(u.tx, saved, now=now) == user:
            return saved
        expires_at = None if expires_in is None else now + expires_in
        token, _ = create_token(u.tx, user, name=name, now=now, expires_at=expires_at)
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
    with store.unit() as u:
        secret = create_signin_link(u.tx, user, ttl=ttl, now=store.now())
    return f"{base_url.rstrip('/')}/signin?token={secret}"


def validate_user_name(name: str) -> str:
    """User names as the CLI accepts them: printable, no spaces at the ends, ≤200 chars."""
    if not name or name != name.strip() or len(name) > 200 or not name.isprintable():
        raise InvalidInput("a user name is 1-200 printable characters without outer spaces")
    return name
