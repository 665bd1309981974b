"""The Web Push actions: a user's devices subscribed to push (docs/channels.md).

``get_push`` says whether the server sends pushes and with which public key a browser
subscribes (its ``applicationServerKey``), lists the caller's devices and, given a
browser's endpoint, whether that browser is one of them. ``subscribe_push`` takes what the
browser's ``PushSubscription.toJSON()`` gives (an endpoint that the egress rule allows,
:mod:`pawflow.egress`, else a 422 naming ``endpoint``; and well-formed keys), with a label
for the device; ``unsubscribe_push`` removes this browser (by its endpoint),
``remove_push_device`` any of the caller's devices (by its id). Another user's subscription
is, to the caller, exactly as unknown as one that does not exist.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable
from typing import Annotated, TypeVar

from fastapi import APIRouter, Body, Depends, Request
from pydantic import Field, StrictStr

from pawflow.channels.webhooks import check_url
from pawflow.egress import EgressRule
from pawflow.errors import FieldError, InvalidInput
from pawflow.server import models as m
from pawflow.server.auth import Principal, caller
from pawflow.server.bodies import StrictJSONRoute
from pawflow.server.channel_models import Deleted
from pawflow.server.context import context_of
from pawflow.server.routes import action_route

router = APIRouter(prefix="/api/actions", route_class=StrictJSONRoute, tags=["actions"])

Caller = Annotated[Principal, Depends(caller)]
_STATUSES = (400, 401, 404, 413, 422, 429, 503)
Endpoint = Annotated[StrictStr, Field(min_length=8, max_length=2000, pattern=m.WEBHOOK_URL)]
PublicKey = Annotated[StrictStr, Field(pattern=r"^B[A-P][A-Za-z0-9_\-]{85}=?$")]
"""A P-256 public key as an uncompressed point (65 bytes, the first 0x04), base64url."""
Secret = Annotated[StrictStr, Field(pattern=r"^[A-Za-z0-9_\-]{22}(==)?$")]
"""16 bytes, base64url."""


class PushKeys(m.Body):
    p256dh: PublicKey = Field(description="The device's P-256 public key (base64url).")
    auth: Secret = Field(description="The device's authentication secret (base64url).")


class GetPush(m.Body):
    endpoint: Endpoint | None = Field(
        default=None, description="This browser's endpoint, to learn whether it is subscribed."
    )


class SubscribePush(m.Body):
    """A browser's ``PushSubscription.toJSON()``, and what to call the device."""

    endpoint: Endpoint
    keys: PushKeys
    device: Annotated[StrictStr, Field(min_length=1, max_length=100, pattern=m.NOT_BLANK)] = (
        "A browser"
    )


class UnsubscribePush(m.Body):
    """This browser, by its endpoint."""

    endpoint: Endpoint


class RemovePushDevice(m.Body):
    """One of the caller's devices, by its id (as ``get_push`` lists them)."""

    device_id: m.Id


class PushDevice(m.Out):
    id: str
    device: str
    created_at: str


class PushSettings(m.Out):
    enabled: bool = Field(description="Whether this server sends Web Push at all.")
    public_key: str | None = Field(
        description="The server's VAPID public key: the browser's applicationServerKey."
    )
    subscribed: bool = Field(description="Whether the endpoint given is one of the caller's.")
    devices: list[PushDevice]


_Handler = TypeVar("_Handler", bound=Callable[..., m.Out])


def _action(name: str, response: type[m.Out], summary: str) -> Callable[[_Handler], _Handler]:
    return action_route(router, name, response, summary, _STATUSES)


def _key(value: str, field: str, size: int) -> str:
    try:
        raw = base64.urlsafe_b64decode(value + "=" * (-len(value) % 4))
    except (binascii.Error, ValueError):
        raw = b""
    if len(raw) != size or (size == 65 and raw[0] != 4):
        message = f"not a {'P-256 public key' if size == 65 else f'{size}-byte secret'}"
        raise InvalidInput(f"{field} is {message}", [FieldError(field, message)])
    return value.rstrip("=")


def _allowed_endpoint(request: Request, endpoint: str) -> str:
    """The endpoint, if the egress rule lets the server call it (a 422 on ``endpoint``)."""
    rule = EgressRule.parse(context_of(request).settings.egress_allowed_hosts)
    return check_url(endpoint, rule, field="endpoint")


@_action("get_push", PushSettings, "Whether push is on, its key, and your devices")
def get_push(
    principal: Caller,
    request: Request,
    body: Annotated[GetPush, Body()] = GetPush(),  # noqa: B008
) -> PushSettings:
    ctx = context_of(request)
    with ctx.store.unit(write=False) as u:
        keys = u.web_push.keys() if ctx.settings.push else None
        devices = u.web_push.of_user(principal.user)
    mine = body.endpoint is not None and any(d.endpoint == body.endpoint for d in devices)
    return PushSettings(
        enabled=keys is not None,
        public_key=None if keys is None else keys.public_key,
        subscribed=mine,
        devices=[PushDevice(**d.to_dict()) for d in devices],
    )


@_action("subscribe_push", PushDevice, "Send pushes to this browser")
def subscribe_push(body: SubscribePush, principal: Caller, request: Request) -> PushDevice:
    ctx = context_of(request)
    p256dh = _key(body.keys.p256dh, "keys.p256dh", 65)
    auth = _key(body.keys.auth, "keys.auth", 16)
    endpoint = _allowed_endpoint(request, body.endpoint)
    with ctx.store.unit() as u:
        added = u.web_push.subscribe(principal.user, endpoint, p256dh, auth, body.device)
    return PushDevice(**added.to_dict())


@_action("unsubscribe_push", Deleted, "Send no more pushes to this browser")
def unsubscribe_push(body: UnsubscribePush, principal: Caller, request: Request) -> Deleted:
    with context_of(request).store.unit() as u:
        u.web_push.unsubscribe(principal.user, endpoint=body.endpoint)
    return Deleted(deleted=True)


@_action("remove_push_device", Deleted, "Send no more pushes to one of your devices")
def remove_push_device(body: RemovePushDevice, principal: Caller, request: Request) -> Deleted:
    with context_of(request).store.unit() as u:
        u.web_push.unsubscribe(principal.user, device_id=body.device_id)
    return Deleted(deleted=True)
