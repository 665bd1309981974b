"""Browser sign-in: a one-time link opens a cookie session; ``/api/session`` describes it.

Opening the link (a GET) changes nothing: it shows a page whose form posts the secret
back, and only that POST consumes the link and sets the cookies.
"""

from __future__ import annotations

import html
from typing import Annotated

from fastapi import APIRouter, Depends, Form, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response

from pawflow.server import models as m
from pawflow.server.auth import (
    CSRF_COOKIE,
    SESSION_COOKIE,
    Principal,
    authenticate,
    client_address,
    create_login,
    drop_login,
    redeem_signin,
    request_origin,
)
from pawflow.server.context import context_of
from pawflow.server.errors import ERROR_RESPONSES, HTTPProblem
from pawflow.server.settings import origin_of

router = APIRouter(tags=["session"])

# same-origin, not no-referrer: under no-referrer a browser posts the form with "Origin: null",
# which the origin check must refuse; the secret in the URL still never leaves this origin.
_NO_STORE = {"Cache-Control": "no-store", "Referrer-Policy": "same-origin"}


def _page(title: str, body: str, status: int = 200) -> HTMLResponse:
    return HTMLResponse(
        "<!doctype html><html lang=en><meta charset=utf-8>"
        f"<meta name=viewport content='width=device-width'><title>{html.escape(title)}</title>"
        # No inline style or script: the Content-Security-Policy allows neither.
        "<link rel=stylesheet href=/static/app.css>"
        f"<body class=signin-page><h1>PawFlow</h1>{body}</body></html>",
        status_code=status,
        headers=_NO_STORE,
    )


@router.get("/signin", include_in_schema=False)
def signin_page(token: str = "") -> HTMLResponse:
    if not token:
        return _page(
            "Sign in",
            "<p>Open the sign-in link that <code>pawflow serve</code> printed, or make one "
            "with <code>pawflow users signin-link NAME</code>.</p>",
        )
    return _page(
        "Sign in",
        "<form method=post action=/signin>"
        f"<input type=hidden name=token value='{html.escape(token, quote=True)}'>"
        "<button type=submit>Sign in</button></form>",
    )


@router.post("/signin", include_in_schema=False)
def signin(request: Request, token: Annotated[str, Form(max_length=200)] = "") -> Response:
    ctx = context_of(request)
    origin = request.headers.get("origin")
    # A page elsewhere must not sign a visitor in to an account of its choosing.
    if origin is not None and origin_of(origin) not in (
        ctx.settings.origins() | {request_origin(request)}
    ) - {""}:
        raise HTTPProblem(403, "cross-origin sign-in refused")
    store = ctx.store
    address = client_address(request)
    ctx.auth_failures.check(address)
    with store.transaction() as tx:
        user = redeem_signin(tx, token, now=store.now())
        if user is None:
            ctx.auth_failures.failed(address)
            return _page(
                "Sign in",
                "<p>This sign-in link is unknown, expired or already used. Ask for a new one "
                "(<code>pawflow users signin-link NAME</code>).</p>",
                status=400,
            )
        cookie, session = create_login(tx, user, ttl=ctx.settings.session_ttl, now=store.now())
    response = RedirectResponse("/", status_code=303, headers=_NO_STORE)
    max_age = int(ctx.settings.session_ttl.total_seconds())
    secure = ctx.settings.cookies_secure
    response.set_cookie(
        SESSION_COOKIE, cookie, max_age=max_age, httponly=True, samesite="lax", secure=secure
    )
    # Readable by the page's script, which echoes it in X-CSRF-Token; useless to other sites.
    response.set_cookie(
        CSRF_COOKIE, session.csrf_token, max_age=max_age, samesite="lax", secure=secure
    )
    return response


@router.post(
    "/signout",
    summary="End the browser session",
    status_code=204,
    responses={k: v for k, v in ERROR_RESPONSES.items() if k in (401, 403, 429)},
)
def signout(request: Request, principal: Annotated[Principal, Depends(authenticate)]) -> Response:
    cookie = request.cookies.get(SESSION_COOKIE)
    if principal.via == "session" and cookie:
        store = context_of(request).store
        with store.transaction() as tx:
            drop_login(tx, cookie)
    response = Response(status_code=204)
    response.delete_cookie(SESSION_COOKIE)
    response.delete_cookie(CSRF_COOKIE)
    return response


@router.get(
    "/api/session",
    summary="Who the caller is (and, for a browser session, its CSRF token)",
    response_model=m.SessionOut,
    responses={k: v for k, v in ERROR_RESPONSES.items() if k in (401, 429)},
)
def session(principal: Annotated[Principal, Depends(authenticate)]) -> JSONResponse:
    return JSONResponse(
        {"user": principal.user, "via": principal.via, "csrf_token": principal.csrf_token}
    )
