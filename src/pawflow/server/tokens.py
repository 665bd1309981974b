"""Personal access tokens and users' access over the API (docs/security.md).

Every caller lists, makes, rotates and revokes their own tokens; an admin (today: a user
named in ``PAWFLOW_ADMINS``) also everyone's, and disables or enables users. A token is
named by its id (``tok_…``); its secret is shown once, when it is made. Another user's
token is, to a member, a 404 exactly like an unknown one.

``sign_out_everywhere`` ends every browser session of the caller (the web chat's "Sign out
everywhere"); tokens stay, each revoked on its own.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, TypeVar

from fastapi import APIRouter, Body, Request
from pydantic import Field

from pawflow.errors import Forbidden, NotFound
from pawflow.server import models as m
from pawflow.server.bodies import StrictJSONRoute
from pawflow.server.context import context_of
from pawflow.server.credentials import (
    create_token,
    list_tokens,
    revoke_token,
    rotate_token,
    set_user_disabled,
    sign_out_everywhere,
    token_expiry,
)
from pawflow.server.governance import Caller, UserName
from pawflow.server.governance import _admin as admin_only
from pawflow.server.routes import action_route
from pawflow.store import Store, TokenRow

router = APIRouter(prefix="/api/actions", route_class=StrictJSONRoute, tags=["actions"])
_STATUSES = (400, 401, 403, 404, 413, 422, 429, 503)
_Handler = TypeVar("_Handler", bound=Callable[..., m.Out])


def _action(name: str, response: type[m.Out], summary: str) -> Callable[[_Handler], _Handler]:
    return action_route(router, name, response, summary, _STATUSES)


EXPIRES = Field(
    default=None,
    max_length=40,
    pattern=rf"^[ \t\n\r]*[Nn][Ee][Vv][Ee][Rr][ \t\n\r]*$|{m.POSITIVE_DURATION}",
    description="How long the token is valid (90d, 12h, 1y…; 'never' where the server"
    " allows it); by default the server's PAWFLOW_TOKEN_MAX_AGE.",
)


class TokenInfo(m.Out):
    """A token as listed: never its secret."""

    id: str
    user: str
    name: str
    created_at: str
    expires_at: str | None = Field(description="Null: it does not expire.")
    last_used_at: str | None = Field(description="Written at most once a minute.")

    @classmethod
    def of(cls, row: TokenRow) -> TokenInfo:
        return cls.model_validate(row.to_dict())


class Tokens(m.Out):
    tokens: list[TokenInfo]


class NewToken(m.Out):
    token: str = Field(description="The secret, shown this once: send it as a Bearer token.")
    info: TokenInfo


class TokenRef(m.Body):
    token_id: m.Id


class ListTokens(m.Body):
    user: UserName | None = Field(default=None, description="Another user's tokens (admins).")
    all: bool = Field(default=False, description="Everyone's tokens (admins).")


class MakeToken(m.Body):
    name: Annotated[str, Field(max_length=200, pattern=m.NO_NUL)] = ""
    expires: Annotated[str | None, EXPIRES] = None


class RotateToken(TokenRef):
    expires: Annotated[str | None, EXPIRES] = None


class UserRef(m.Body):
    user: UserName


class UserAccess(m.Out):
    user: str
    disabled: bool
    changed: bool = Field(description="False: the user was already so.")


class SignOut(m.Body):
    """Nothing to say: the caller's own sessions end."""


class SignedOut(m.Out):
    ended: int = Field(description="How many browser sessions ended.")


def _owner(request: Request, principal: Caller) -> str | None:
    """Whose tokens the caller may touch: their own (a member), anyone's (None, an admin, as
    the admin-only actions decide it)."""
    try:
        admin_only(request, principal)
    except Forbidden:
        return principal.user
    return None


@_action("list_tokens", Tokens, "The caller's tokens; an admin's: anyone's, or everyone's")
def list_tokens_action(
    principal: Caller,
    request: Request,
    body: Annotated[ListTokens, Body()] = ListTokens(),  # noqa: B008
) -> Tokens:
    store: Store = context_of(request).store
    whose: str | None = principal.user
    if body.all or (body.user is not None and body.user != principal.user):
        store = admin_only(request, principal)
        whose = None if body.all else body.user
    with store.unit(write=False) as u:
        found = list_tokens(u, whose)
    return Tokens(tokens=[TokenInfo.of(row) for row in found])


@_action("create_token", NewToken, "Make a token for the caller (its secret shown once)")
def create_token_action(body: MakeToken, principal: Caller, request: Request) -> NewToken:
    ctx = context_of(request)
    store = ctx.store
    with store.unit() as u:
        now = store.now()
        expires_at = token_expiry(now, body.expires, ctx.settings.token_max_age)
        secret, row = create_token(
            u.tx, principal.user, name=body.name, now=now, expires_at=expires_at
        )
    return NewToken(token=secret, info=TokenInfo.of(row))


@_action("revoke_token", TokenInfo, "Revoke a token by its id: it stops at once")
def revoke_token_action(body: TokenRef, principal: Caller, request: Request) -> TokenInfo:
    store = context_of(request).store
    owner = _owner(request, principal)  # read before the write transaction opens
    with store.unit() as u:
        gone = revoke_token(u, body.token_id, owner=owner)
    if gone is None:
        raise NotFound("token")
    return TokenInfo.of(gone)


@_action("rotate_token", NewToken, "Replace a token by a new one of the same name")
def rotate_token_action(body: RotateToken, principal: Caller, request: Request) -> NewToken:
    ctx = context_of(request)
    store = ctx.store
    owner = _owner(request, principal)  # read before the write transaction opens
    with store.unit() as u:
        now = store.now()
        expires_at = None
        if body.expires is not None:
            expires_at = token_expiry(now, body.expires, ctx.settings.token_max_age)
        made = rotate_token(
            u.tx,
            body.token_id,
            now=now,
            expires_at=expires_at,
            max_age=ctx.settings.token_max_age,
            owner=owner,
        )
    if made is None:
        raise NotFound("token")
    return NewToken(token=made[0], info=TokenInfo.of(made[1]))


def _set_disabled(request: Request, principal: Caller, user: str, disabled: bool) -> UserAccess:
    store = admin_only(request, principal)
    with store.unit() as u:
        changed = set_user_disabled(u.tx, user, disabled, now=store.now())
        now_disabled = u.credentials.disabled_at(user) is not None
    return UserAccess(user=user, disabled=now_disabled, changed=changed)


@_action("disable_user", UserAccess, "Disable a user: every credential of theirs stops (admins)")
def disable_user(body: UserRef, principal: Caller, request: Request) -> UserAccess:
    return _set_disabled(request, principal, body.user, True)


@_action("enable_user", UserAccess, "Enable a disabled user again (admins)")
def enable_user(body: UserRef, principal: Caller, request: Request) -> UserAccess:
    return _set_disabled(request, principal, body.user, False)


@_action("sign_out_everywhere", SignedOut, "End every browser session of the caller")
def sign_out_everywhere_action(
    principal: Caller,
    request: Request,
    body: Annotated[SignOut, Body()] = SignOut(),  # noqa: B008
) -> SignedOut:
    store = context_of(request).store
    with store.unit() as u:
        ended = sign_out_everywhere(u, principal.user)
    return SignedOut(ended=ended)
