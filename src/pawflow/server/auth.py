"""Who is calling: bearer tokens, browser sessions, one-time sign-in links, CSRF.

API and terminal clients send ``Authorization: Bearer <token>``; browsers hold a session
cookie (HttpOnly, SameSite=Lax) obtained through a one-time sign-in link. A state change
made with the cookie must carry the session's CSRF token (``X-CSRF-Token``) and come from
a same-origin page (``Origin``); a bearer token needs neither, as no browser sends it on
its own. Secrets are kept as SHA-256 digests only (:mod:`pawflow.server.credentials` makes,
finds and revokes them in the store).
"""

from __future__ import annotations

import hmac
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

from fastapi import Request

from pawflow.clock import to_millis
from pawflow.server.context import context_of
from pawflow.server.credentials import digest, login_for, user_for_token
from pawflow.server.errors import HTTPProblem
from pawflow.server.settings import origin_of
from pawflow.store.database import Tx

SESSION_COOKIE = "pawflow_session"
CSRF_COOKIE = "pawflow_csrf"
CSRF_HEADER = "x-csrf-token"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


# -- the request side -----------------------------------------------------------------------


@dataclass(frozen=True)
class Principal:
    """The authenticated caller of one request."""

    user: str
    via: Literal["token", "session"]
    csrf_token: str | None = None
    credential: str = field(default="", repr=False)
    """The digest of the token or session cookie used: streams re-check it while open."""


def credential_current(tx: Tx, principal: Principal, *, now: datetime) -> bool:
    """Whether the token or session ``principal`` authenticated with is still valid."""
    if principal.via == "token":
        row = tx.one(
            "SELECT 1 AS found FROM api_tokens WHERE token_hash = ? AND user_id = ?",
            (principal.credential, principal.user),
        )
    else:
        row = tx.one(
            "SELECT 1 AS found FROM web_sessions"
            " WHERE session_hash = ? AND user_id = ? AND expires_at > ?",
            (principal.credential, principal.user, to_millis(now)),
        )
    return row is not None


def request_origin(request: Request) -> str:
    """This server's origin as the client addressed it (scheme and ``Host`` header)."""
    host = request.headers.get("host", "")
    return origin_of(f"{request.url.scheme}://{host}") if host else ""


def check_same_origin(request: Request) -> None:
    """Refuse a browser request whose ``Origin`` is neither this server nor a trusted one."""
    origin = request.headers.get("origin")
    if origin is None:
        raise HTTPProblem(403, "a same-origin Origin header is required")
    trusted = context_of(request).settings.origins() | {request_origin(request)}
    if origin_of(origin) not in trusted - {""}:
        raise HTTPProblem(403, "cross-origin request refused")


def _bearer(request: Request) -> str | None:
    header = request.headers.get("authorization")
    if header is None:
        return None
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise HTTPProblem(401, "use 'Authorization: Bearer <token>'", headers=_CHALLENGE)
    return token.strip()


_CHALLENGE = {"WWW-Authenticate": 'Bearer realm="pawflow"'}


def authenticate(request: Request) -> Principal:
    """The caller, or a 401/403/429. Runs in a worker thread (it reads the store)."""
    ctx = context_of(request)
    store = ctx.store
    address = client_address(request)
    token = _bearer(request)
    if token is not None:
        ctx.auth_failures.check(address)
        with store.transaction(write=False) as tx:
            user = user_for_token(tx, token)
        if user is None:
            ctx.auth_failures.failed(address)
            raise HTTPProblem(401, "invalid token", headers=_CHALLENGE)
        principal = Principal(user, "token", credential=digest(token))
    else:
        cookie = request.cookies.get(SESSION_COOKIE)
        session = None
        if cookie:
            ctx.auth_failures.check(address)
            with store.transaction(write=False) as tx:
                session = login_for(tx, cookie, now=store.now())
            if session is None:
                ctx.auth_failures.failed(address)
        if session is None or not cookie:
            raise HTTPProblem(401, headers=_CHALLENGE)
        if request.method not in SAFE_METHODS:
            check_same_origin(request)
            sent = request.headers.get(CSRF_HEADER, "")
            if not hmac.compare_digest(
                sent.encode("utf-8", "replace"), session.csrf_token.encode()
            ):
                raise HTTPProblem(403, f"a valid {CSRF_HEADER} header is required")
        principal = Principal(session.user, "session", session.csrf_token, digest(cookie))
    ctx.limiter.check(principal.user)
    request.state.principal = principal
    return principal


def client_address(request: Request) -> str:
    """The peer's address, which failed authentication is throttled by."""
    return request.client.host if request.client is not None else ""
