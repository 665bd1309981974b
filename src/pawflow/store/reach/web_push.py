"""Web Push: the server's VAPID keys and each user's push subscriptions.

The key pair (RFC 8292) is made once, on the first start of a server with push on, and kept
here so every server of the cluster signs with it and a browser's subscription outlives a
restart: :func:`keep_keys` keeps the first pair written and returns it, so two servers
starting at once agree on one. The private key is kept as PEM, the public one as the
base64url uncompressed point a browser takes as its ``applicationServerKey``.

A subscription is one browser or phone of one user: the endpoint its push service gave it,
the two keys payloads are encrypted to (``p256dh``, ``auth``, RFC 8291) and a label for the
person ("Chrome on Android"). An endpoint belongs to one user at a time: subscribing it again
(another person signed in on a shared browser) moves it. A push service's ``404`` or ``410``
for an endpoint removes it (:func:`remove_gone`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pawflow.clock import from_millis, iso, to_millis
from pawflow.errors import FieldError, InvalidInput, NotFound
from pawflow.ids import new_id
from pawflow.store.engine.database import Tx, sql

MAX_DEVICES = 20
"""Subscriptions a user may have at once."""


@dataclass(frozen=True)
class VapidKeys:
    private_pem: str
    public_key: str
    """base64url, no padding: the browser's ``applicationServerKey``."""


@dataclass(frozen=True)
class Subscription:
    id: str
    user: str
    endpoint: str
    p256dh: str
    auth: str
    device: str
    created_at: datetime

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> Subscription:
        return cls(
            id=str(row["id"]),
            user=str(row["user_id"]),
            endpoint=str(row["endpoint"]),
            p256dh=str(row["p256dh"]),
            auth=str(row["auth"]),
            device=str(row["device"]),
            created_at=from_millis(int(row["created_at"])),
        )

    def info(self) -> dict[str, Any]:
        """As a browser's ``PushSubscription.toJSON()`` has it (what pywebpush takes)."""
        return {"endpoint": self.endpoint, "keys": {"p256dh": self.p256dh, "auth": self.auth}}

    def to_dict(self) -> dict[str, Any]:
        """As its owner sees it (no endpoint or keys: a label and a date are enough)."""
        return {"id": self.id, "device": self.device, "created_at": iso(self.created_at)}


# -- the server's keys -------------------------------------------------------------------------


def keys(tx: Tx) -> VapidKeys | None:
    row = sql(tx).one("SELECT private_key, public_key FROM push_keys WHERE id = 'vapid'")
    return None if row is None else VapidKeys(str(row["private_key"]), str(row["public_key"]))


def keep_keys(tx: Tx, private_pem: str, public_key: str, now: datetime) -> VapidKeys:
    """Keep this pair unless one is kept already; the pair kept."""
    sql(tx).execute(
        "INSERT INTO push_keys (id, private_key, public_key, created_at)"
        " VALUES ('vapid', ?, ?, ?) ON CONFLICT (id) DO NOTHING",
        (private_pem, public_key, to_millis(now)),
    )
    kept = keys(tx)
    assert kept is not None
    return kept


# -- subscriptions ----------------------------------------------------------------------------


def subscribe(
    tx: Tx, user: str, endpoint: str, p256dh: str, auth: str, device: str, now: datetime
) -> Subscription:
    """Add (or renew, or take over) the subscription of ``endpoint`` for ``user``."""
    held = sql(tx).one(
        "SELECT COUNT(*) AS n FROM push_subscriptions WHERE user_id = ? AND endpoint <> ?",
        (user, endpoint),
    )
    if held is not None and int(held["n"]) >= MAX_DEVICES:
        message = f"at most {MAX_DEVICES} devices get push notifications: remove one first"
        raise InvalidInput(message, [FieldError("endpoint", message)])
    row = sql(tx).one(
        "INSERT INTO push_subscriptions (id, user_id, endpoint, p256dh, auth, device,"
        " created_at) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (endpoint) DO UPDATE SET"
        " user_id = excluded.user_id, p256dh = excluded.p256dh, auth = excluded.auth,"
        " device = excluded.device, created_at = excluded.created_at RETURNING *",
        (new_id(), user, endpoint, p256dh, auth, device, to_millis(now)),
    )
    assert row is not None
    return Subscription.from_row(row)


def of_user(tx: Tx, user: str) -> list[Subscription]:
    rows = sql(tx).all(
        "SELECT * FROM push_subscriptions WHERE user_id = ? ORDER BY created_at, id", (user,)
    )
    return [Subscription.from_row(row) for row in rows]


def find(tx: Tx, user: str, endpoint: str) -> Subscription | None:
    """``user``'s subscription of ``endpoint`` (None: none, or another user's)."""
    row = sql(tx).one(
        "SELECT * FROM push_subscriptions WHERE user_id = ? AND endpoint = ?", (user, endpoint)
    )
    return None if row is None else Subscription.from_row(row)


def unsubscribe(
    tx: Tx, user: str, *, endpoint: str | None = None, device_id: str | None = None
) -> None:
    """Remove one of ``user``'s subscriptions, by its endpoint or its id; :class:`NotFound`
    for one that is not theirs, as for one that does not exist."""
    if endpoint is not None:
        gone = sql(tx).execute(
            "DELETE FROM push_subscriptions WHERE user_id = ? AND endpoint = ?", (user, endpoint)
        )
    else:
        gone = sql(tx).execute(
            "DELETE FROM push_subscriptions WHERE user_id = ? AND id = ?", (user, device_id)
        )
    if not gone:
        raise NotFound("no such push subscription")


def remove_gone(tx: Tx, subscription: Subscription) -> bool:
    """The push service says the endpoint is gone: forget it (unless subscribed anew)."""
    return (
        sql(tx).execute(
            "DELETE FROM push_subscriptions WHERE id = ? AND endpoint = ?",
            (subscription.id, subscription.endpoint),
        )
        > 0
    )
