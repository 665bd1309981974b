"""Who is calling: bearer tokens, browser sessions, one-time sign-in links, CSRF.

API and terminal clients send ``Authorization: Bearer <token>``; browsers hold a session
cookie (HttpOnly, SameSite=Lax) obtained through a one-time sign-in link. A state change
made with the cookie must carry the session's CSRF token (``X-CSRF-Token``) and come from
a same-origin page (``Origin``, or without it ``Sec-Fetch-Site: same-origin``), and so must
the POST that redeems a sign-in link; a bearer token needs neither, as no browser sends it
on its own. Secrets are kept as SHA-256 digests only (:mod:`pawflow.server.credentials` makes,
finds and revokes them in the store).
"""

from __future__ import annotations

import hmac
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import partial
from typing import Literal

import anyio
from fastapi import Request
from starlette.requests import HTTPConnection

from pawflow.server.context import ServerContext, context_of
from pawflow.server.credentials import (
    NEVER_IDLE,
    check_token,
    digest,
    login_for,
    note_login_use,
    note_token_use,
)
from pawflow.server.errors import HTTPProblem
from pawflow.server.settings import origin_of
from pawflow.store import Store, Unit
from pawflow.store import Transaction as Tx

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


def credential_current(
    tx: Tx, principal: Principal, *, now: datetime, idle: timedelta = NEVER_IDLE
) -> bool:
    """Whether the token or session ``principal`` authenticated with is still valid: not
    revoked or ended, not expired (a session: not idle longer than ``idle``), its user not
    disabled."""
    u = Unit(tx, now)
    if principal.via == "token":
        return u.credentials.token_current(principal.credential, principal.user)
    return u.credentials.login_current(principal.credential, principal.user, idle=idle)


def request_origin(request: Request) -> str:
    """This server's origin as the client addressed it (scheme and ``Host`` header)."""
    host = request.headers.get("host", "")
    return origin_of(f"{request.url.scheme}://{host}") if host else ""


def check_same_origin(request: Request) -> None:
    """Refuse a browser request whose ``Origin`` is neither this server nor a trusted one.

    Without ``Origin``, only a browser's own ``Sec-Fetch-Site: same-origin`` (a header no
    page's script can set) vouches for it."""
    origin = request.headers.get("origin")
    if origin is None:
        if request.headers.get("sec-fetch-site") == "same-origin":
            return
        raise HTTPProblem(403, "a same-origin Origin header is required")
    trusted = context_of(request).settings.origins() | {request_origin(request)}
    if origin_of(origin) not in trusted - {""}:
        raise HTTPProblem(403, "cross-origin request refused")


def bearer_token(header: str | None) -> str | None:
    """The token of an ``Authorization`` header (None when there is none), or a 401."""
    if header is None:
        return None
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise HTTPProblem(401, "use 'Authorization: Bearer <token>'", headers=CHALLENGE)
    return token.strip()


CHALLENGE = {"WWW-Authenticate": 'Bearer realm="pawflow"'}


Later = Callable[[Callable[[], None]], None]
"""Where a write goes that a caller runs elsewhere (:func:`caller`)."""


def _now(work: Callable[[], None]) -> None:
    work()


def token_principal(
    ctx: ServerContext, address: str, token: str, *, later: Later | None = None
) -> Principal:
    """Who ``token`` belongs to, or a 401 counted against ``address`` (a 429 once it has
    failed too often). Every surface that takes bearer tokens (the API, ``/mcp``) comes here,
    so guesses anywhere count toward the same limit. Reads the store: call from a thread
    (or see :func:`caller`); the write of the token's last use goes to ``later`` if given."""
    ctx.auth_failures.check(address)
    store = ctx.store
    with store.unit(write=False) as u:
        verdict = check_token(u.tx, token, now=store.now())
    if verdict.user is None:
        if verdict.token is None:  # a guess; an expired token or a disabled user is not
            ctx.auth_failures.failed(address)
        raise HTTPProblem(401, verdict.refusal, headers=CHALLENGE)
    if verdict.stale:  # its last use, written at most once a minute
        (later or _now)(partial(note_token_use, store, token))
    return Principal(verdict.user, "token", credential=digest(token))


def authenticate(request: Request, *, later: Later | None = None) -> Principal:
    """The caller, or a 401/403/429. Reads the store: call from a worker thread (or see
    :func:`caller`); the write of a token's or session's last use goes to ``later`` if
    given."""
    ctx = context_of(request)
    store = ctx.store
    address = client_address(request)
    token = bearer_token(request.headers.get("authorization"))
    if token is not None:
        principal = token_principal(ctx, address, token, later=later)
    else:
        cookie = request.cookies.get(SESSION_COOKIE)
        verdict = None
        if cookie:
            ctx.auth_failures.check(address)
            with store.unit(write=False) as u:
                verdict = login_for(u.tx, cookie, now=store.now(), idle=ctx.settings.session_idle)
            if verdict is None:
                ctx.auth_failures.failed(address)
        if verdict is None or not cookie:
            raise HTTPProblem(401, headers=CHALLENGE)
        if verdict.stale:  # its last use (what the idle timeout counts from), once a minute
            (later or _now)(partial(note_login_use, store, cookie))
        session = verdict.login
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


async def caller(request: Request) -> Principal:
    """:func:`authenticate`, as the dependency of every route that needs a caller, run as
    :func:`found_from_the_loop` says."""
    return await found_from_the_loop(
        context_of(request).store, lambda later: authenticate(request, later=later)
    )


async def bearer_principal(ctx: ServerContext, address: str, token: str) -> Principal:
    """:func:`token_principal` for the surfaces that are not routes (``/mcp``, agent runs),
    run as :func:`found_from_the_loop` says."""
    return await found_from_the_loop(
        ctx.store, lambda later: token_principal(ctx, address, token, later=later)
    )


async def found_from_the_loop(store: Store, find: Callable[[Later | None], Principal]) -> Principal:
    """``find`` the caller from the event loop.

    Where the store's reads never wait (SQLite in WAL mode), it reads on the loop itself: the
    read of a token or a session is shorter than a turn on a worker thread, which costs two
    hand-overs between the loop and the thread. The write of a last use, at most once a
    minute, still takes a worker thread, and is done before the request goes on, whatever
    came after it (a 403, a 429), as when written at once. Elsewhere (PostgreSQL: a round
    trip) it all runs on a worker thread.
    """
    if store.db.reads_wait:
        return await anyio.to_thread.run_sync(find, None)
    writes: list[Callable[[], None]] = []
    try:
        return find(writes.append)
    finally:
        for write in writes:
            await anyio.to_thread.run_sync(write)


def client_address(request: HTTPConnection) -> str:
    """The peer's address, which failed authentication is throttled by."""
    return request.client.host if request.client is not None else ""


# -- while a caller stays signed in ------------------------------------------------------------


def still_signed_in(store: Store, principal: Principal, idle: timedelta = NEVER_IDLE) -> bool:
    with store.unit(write=False) as u:
        return credential_current(u.tx, principal, now=store.now(), idle=idle)


async def until_signed_out(ctx: ServerContext, principal: Principal) -> bool:
    """Wait until ``principal``'s token is revoked or expired, its session ended, or its user
    disabled (True), or the server stops (False).

    A revocation in this process, or announced by PostgreSQL, is noticed at once; one made
    by another process on SQLite within ``credential_check`` seconds.
    """
    hub = ctx.hub
    waiter = hub.subscribe(principal.user)
    try:
        while hub.running:
            with anyio.move_on_after(ctx.settings.credential_check):
                while not waiter.recheck and hub.running:
                    waiter.clear()  # woken by the user's events too: only a recheck counts
                    await waiter.wait()
            waiter.recheck = False
            idle = ctx.settings.session_idle
            if not await anyio.to_thread.run_sync(still_signed_in, ctx.store, principal, idle):
                return True
    finally:
        hub.unsubscribe(waiter)
    return False
