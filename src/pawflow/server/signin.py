"""Browser sign-in: a one-time link opens a cookie session; ``/api/session`` describes it.

Opening the link (a GET) changes nothing: it shows a page whose form posts the secret
back, and only that POST consumes the link and sets the cookies.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Form, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response

import pawflow
from pawflow.server import models as m
from pawflow.server import signin_page
from pawflow.server.auth import (
    CSRF_COOKIE,
    SESSION_COOKIE,
    Principal,
    caller,
    check_same_origin,
    client_address,
)
from pawflow.server.context import ServerContext, context_of
from pawflow.server.credentials import BrowserLogin, create_login, drop_login, redeem_signin
from pawflow.server.errors import ERROR_RESPONSES
from pawflow.store import Unit

router = APIRouter(tags=["session"])

_page = signin_page.page
_NO_STORE = signin_page.NO_STORE


LINK_SIGNIN = "link_signin"
"""The run-time option (``server_options``) an admin turns link sign-in off with."""


def link_signin_on(u: Unit) -> bool:
    return u.roles.option(LINK_SIGNIN) != "off"


def _choices(request: Request, links: bool) -> str:
    provider = context_of(request).oidc
    body = "<h1>Sign in</h1>"
    if provider is not None:
        body += signin_page.sso_button(provider.config.name)
    if links:
        body += signin_page.HOW_TO_GET_A_LINK
    elif provider is None:
        body += signin_page.LINKS_OFF
    return body


@router.get("/signin", include_in_schema=False)
def signin_form(request: Request, token: str = "") -> HTMLResponse:
    store = context_of(request).store
    with store.unit(write=False) as u:
        links = link_signin_on(u)
        user = signin_page.link_user(u.tx, token, now=store.now()) if token and links else None
    if not token:
        return _page("Sign in", _choices(request, links))
    if not links:
        provider = context_of(request).oidc
        button = signin_page.sso_button(provider.config.name) if provider else ""
        return _page("Sign in", signin_page.LINKS_OFF + button, status=403)
    if user is None:
        return _page("Sign in", signin_page.UNUSABLE, status=400)
    return _page("Sign in", signin_page.form(user, token))


def open_browser_login(ctx: ServerContext, user: str) -> Response:
    """A new browser login for ``user``: the redirect to the chat that sets its cookies."""
    store = ctx.store
    with store.unit() as u:
        cookie, session = create_login(u.tx, user, ttl=ctx.settings.session_ttl, now=store.now())
    return _with_login(ctx, cookie, session)


def _with_login(ctx: ServerContext, cookie: str, session: BrowserLogin) -> Response:
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


@router.post("/signin", include_in_schema=False)
def signin(request: Request, token: Annotated[str, Form(max_length=200)] = "") -> Response:
    ctx = context_of(request)
    # A page elsewhere must not sign a visitor in to an account of its choosing.
    check_same_origin(request)
    store = ctx.store
    address = client_address(request)
    ctx.auth_failures.check(address)
    with store.unit() as u:
        if not link_signin_on(u):
            return _page("Sign in", signin_page.LINKS_OFF, status=403)
        user = redeem_signin(u.tx, token, now=store.now())
        if user is None:
            ctx.auth_failures.failed(address)
            return _page("Sign in", signin_page.UNUSABLE, status=400)
        cookie, session = create_login(u.tx, user, ttl=ctx.settings.session_ttl, now=store.now())
    return _with_login(ctx, cookie, session)


@router.post(
    "/signout",
    summary="End the browser session",
    status_code=204,
    responses={k: v for k, v in ERROR_RESPONSES.items() if k in (401, 403, 429)},
)
def signout(request: Request, principal: Annotated[Principal, Depends(caller)]) -> Response:
    cookie = request.cookies.get(SESSION_COOKIE)
    if principal.via == "session" and cookie:
        store = context_of(request).store
        with store.unit() as u:
            drop_login(u, cookie)
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
def session(request: Request, principal: Annotated[Principal, Depends(caller)]) -> JSONResponse:
    ctx = context_of(request)
    with ctx.store.unit(write=False) as u:
        admin = principal.user in ctx.settings.admins or u.roles.is_admin(principal.user)
    return JSONResponse(
        {
            "user": principal.user,
            "via": principal.via,
            "csrf_token": principal.csrf_token,
            "version": pawflow.__version__,
            "role": "admin" if admin else "member",
            "signout_url": "/signin/oidc/logout" if ctx.oidc is not None else "/",
        }
    )
