"""Single sign-on routes: ``/signin/oidc`` (off to the provider), its callback, and logout.

The trip's ``state`` is kept twice: in a cookie of this browser (so a callback made in
another browser is refused) and, as a digest, in the store beside the nonce and the PKCE
verifier (so it is used once: a replayed callback, its ``code`` included, is refused). The
ID token's claims decide who signs in (:func:`admit`): a person already linked to the
provider's subject, or one the allowed email domains or groups let in, made a user on their
first sign-in; the groups claim keeps the provider's groups in step, and the admin group the
role. A refusal is a page that says why, and a log line without any token, code or state.
"""

from __future__ import annotations

import hmac
import logging
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from pawflow.errors import InvalidInput, SignInProblem
from pawflow.server import signin_page
from pawflow.server.auth import client_address
from pawflow.server.context import ServerContext, context_of
from pawflow.server.credentials import digest, validate_user_name
from pawflow.server.oidc import OidcConfig, OpenIDProvider
from pawflow.server.signin import open_browser_login
from pawflow.store import RoleOrigin, SignInAttempt, Unit, usable_group_names
from pawflow.store import Transaction as Tx

log = logging.getLogger("pawflow.server.sso")

router = APIRouter(include_in_schema=False)

STATE_COOKIE = "pawflow_oidc_state"
SSO_COOKIE = "pawflow_sso"
"""Set when a browser signed in through the provider: signing out then ends its session there."""
TRIP_SECONDS = 600
PROVIDER_ACTOR = "identity-provider"
"""Who the admins' trail names for a role the provider's admin group gave or took."""


@dataclass
class Admitted:
    user: str
    created: bool
    joined: list[str] = field(default_factory=list)
    left: list[str] = field(default_factory=list)


def _text(claims: dict[str, Any], name: str) -> str | None:
    value = claims.get(name)
    return value if isinstance(value, str) and value else None


def admit(tx: Tx, config: OidcConfig, claims: dict[str, Any], *, now: datetime) -> Admitted:
    """Who ``claims`` (a checked ID token's) sign in as; :class:`SignInProblem` if nobody."""
    u = Unit(tx, now)
    subject = str(claims["sub"])
    email = _text(claims, config.email_claim)
    verified = claims.get("email_verified") is not False
    raw_groups = claims.get(config.groups_claim)
    groups = usable_group_names(raw_groups) if isinstance(raw_groups, list) else []
    domain = email.rpartition("@")[2].lower() if email and verified and "@" in email else ""
    gated = bool(config.allowed_domains or config.allowed_groups)
    allowed = (
        domain in config.allowed_domains
        or bool(set(groups) & config.allowed_groups)
        or (config.admin_group is not None and config.admin_group in groups)
    )
    who = email or subject
    if gated and not allowed:
        raise SignInProblem(
            f"Your account ({who}) is in none of the email domains or groups allowed here"
            " (PAWFLOW_OIDC_ALLOWED_DOMAINS, PAWFLOW_OIDC_ALLOWED_GROUPS). Ask an admin."
        )
    user = u.sign_in.identity_user(config.issuer, subject)
    created = False
    if user is None:
        name = _text(claims, config.user_claim)
        if config.user_claim == config.email_claim and not verified:
            raise SignInProblem(f"The provider has not verified your email address ({who}).")
        if name is None:
            raise SignInProblem(
                f"The provider sent no {config.user_claim!r} claim to name you by"
                " (PAWFLOW_OIDC_USER_CLAIM)."
            )
        try:
            user = validate_user_name(name)
        except InvalidInput:
            raise SignInProblem(f"{name[:80]!r} cannot be a user name here.") from None
        if not u.conversations.user_exists(user):
            if not gated and not allowed:
                raise SignInProblem(
                    f"There is no user {user!r} here, and no email domain or group is allowed"
                    " to make one on first sign-in. Ask an admin to add you."
                )
            created = True
        u.conversations.ensure_user(user)
    if not created and not u.credentials.user_enabled(user):
        raise SignInProblem(
            f"Your account ({user}) is disabled here. Ask an admin to enable it again."
        )
    u.sign_in.link_identity(config.issuer, subject, user)
    if email is not None:
        u.roles.set_email(user, email)
    admitted = Admitted(user, created)
    if isinstance(raw_groups, list):
        admitted.joined, admitted.left = u.sign_in.sync_groups(user, groups, issuer=config.issuer)
    _sync_role(tx, config, user, groups, now=now)
    return admitted


def _sync_role(tx: Tx, config: OidcConfig, user: str, groups: list[str], *, now: datetime) -> None:
    u = Unit(tx, now)
    if config.admin_group is None:
        return
    found = u.roles.user(user)
    if found is None:
        return
    if config.admin_group in groups and found.role != "admin":
        u.roles.set_role(user, "admin", source="provider")
    elif config.admin_group not in groups and found.role_source == "provider":
        if found.role == "admin":
            u.roles.set_role(user, "member", source="provider")
    else:
        return
    role = "admin" if config.admin_group in groups else "member"
    u.roles.record(
        PROVIDER_ACTOR,
        "user.role",
        target=user,
        detail={"role": role, "group": config.admin_group},
        origin=RoleOrigin(via="sign-in"),
    )


# -- the pages ------------------------------------------------------------------------------


def _configured(request: Request) -> tuple[ServerContext, OpenIDProvider | None]:
    ctx = context_of(request)
    return ctx, ctx.oidc


def problem_page(problem: SignInProblem) -> HTMLResponse:
    return signin_page.page("Sign in", signin_page.sso_problem(problem), status=problem.status)


def _refused(request: Request, ctx: ServerContext, reason: str) -> HTMLResponse:
    ctx.auth_failures.failed(client_address(request))
    log.warning("single sign-on refused for %s: %s", client_address(request), reason)
    return signin_page.page("Sign in", signin_page.sso_refused(reason), status=403)


@router.get("/signin/oidc")
def start(request: Request) -> Response:
    ctx, provider = _configured(request)
    if provider is None:
        return signin_page.page("Sign in", signin_page.NOT_FOUND, status=404)
    try:
        trip = provider.begin()
    except SignInProblem as problem:
        log.warning("single sign-on cannot start: %s (%s)", problem.reason, problem.setting)
        return problem_page(problem)
    store = ctx.store
    now = store.now()
    with store.unit() as u:
        u.sign_in.prune_attempts()
        u.sign_in.add_attempt(
            digest(trip.state),
            SignInAttempt(trip.nonce, trip.code_verifier),
            expires_at=now + timedelta(seconds=TRIP_SECONDS),
        )
    response = RedirectResponse(trip.url, status_code=303, headers=signin_page.NO_STORE)
    response.set_cookie(
        STATE_COOKIE,
        trip.state,
        max_age=TRIP_SECONDS,
        path="/signin/oidc",
        httponly=True,
        samesite="lax",
        secure=ctx.settings.cookies_secure,
    )
    return response


@router.get("/signin/oidc/callback")
def callback(
    request: Request, code: str = "", state: str = "", error: str = "", error_description: str = ""
) -> Response:
    ctx, provider = _configured(request)
    if provider is None:
        return signin_page.page("Sign in", signin_page.NOT_FOUND, status=404)
    address = client_address(request)
    ctx.auth_failures.check(address)
    if error:
        said = f"{error[:100]}: {error_description[:200]}" if error_description else error[:100]
        return _refused(request, ctx, f"The identity provider did not sign you in ({said}).")
    issuer = request.query_params.get("iss")  # RFC 9207: which provider is answering
    if issuer is not None and issuer.rstrip("/") != provider.config.issuer:
        return _refused(request, ctx, "The answer came from another identity provider.")
    kept = request.cookies.get(STATE_COOKIE, "")
    if not state or not code or len(state) > 200 or len(code) > 2000:
        return _refused(request, ctx, "The provider's answer lacks its code or state.")
    if not hmac.compare_digest(kept.encode(), state.encode("utf-8", "replace")):
        return _refused(
            request, ctx, "This sign-in was not started in this browser, or is over already."
        )
    store = ctx.store
    with store.unit() as u:
        attempt = u.sign_in.use_attempt(digest(state))
    if attempt is None:
        return _refused(request, ctx, "This sign-in is used up or expired. Start again.")
    try:
        claims = provider.finish(code, nonce=attempt.nonce, code_verifier=attempt.code_verifier)
    except SignInProblem as problem:
        if problem.status >= 500:
            log.warning("single sign-on failed: %s (%s)", problem.reason, problem.setting)
            return problem_page(problem)
        return _refused(request, ctx, problem.reason)
    try:
        with store.unit() as u:
            admitted = admit(u.tx, provider.config, claims, now=store.now())
    except SignInProblem as refusal:
        return _refused(request, ctx, refusal.reason)
    log.info(
        "signed in through the identity provider: %s%s",
        admitted.user,
        " (new user)" if admitted.created else "",
    )
    response = open_browser_login(ctx, admitted.user)
    response.delete_cookie(STATE_COOKIE, path="/signin/oidc")
    response.set_cookie(
        SSO_COOKIE,
        "1",
        max_age=int(ctx.settings.session_ttl.total_seconds()),
        httponly=True,
        samesite="lax",
        secure=ctx.settings.cookies_secure,
    )
    return response


@router.get("/signin/oidc/logout")
def logout(request: Request) -> Response:
    """After ``POST /signout``: end the provider's session too, if this browser used it."""
    _, provider = _configured(request)
    target = "/signin"
    if provider is not None and request.cookies.get(SSO_COOKIE):
        target = provider.logout_url() or target
    response = RedirectResponse(target, status_code=303, headers=signin_page.NO_STORE)
    response.delete_cookie(SSO_COOKIE)
    return response
