"""Where each user is reached: an address per channel, and the channels they want.

A user keeps an address per channel (an email address, a Slack user id, a notification URL)
and the channels to use (``notify``; by default every channel they have an address for, a
webhook and a device subscribed to push counting as the ``webhook`` and ``push`` channels'
addresses). The outbox (:mod:`pawflow.store.reach.outbox`) writes a request's notifications
where its owner, or its assignees, are reached. This module alone writes ``user_channels``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pawflow.clock import to_millis
from pawflow.errors import FieldError, InvalidInput
from pawflow.store.engine.database import Tx, sql

NOTIFY_CHANNELS: tuple[str, ...] = ("email", "slack", "webhook", "apprise", "push")
"""The channels a user or a request may name in ``notify``."""
ADDRESS_OF: dict[str, str | None] = {
    "email": "email",
    "slack": "slack",
    "apprise": "notify_url",
    "webhook": None,  # the user's own webhooks (pawflow.store.reach.webhooks): no address
    "push": None,  # the user's push subscriptions (pawflow.store.reach.web_push), one per device
}
"""Which of a user's addresses each channel sends to."""
EMAIL_PATTERN = r"[A-Za-z0-9.!#$%&'*+/=?^_`{|}~\-]{1,64}@[A-Za-z0-9.\-]{1,253}\.[A-Za-z]{2,63}"
SLACK_PATTERN = r"[UW][A-Z0-9]{2,30}"
URL_PATTERN = r"[A-Za-z][A-Za-z0-9+.\-]{0,30}://[!-~]{1,1900}"
"""What an address must look like (``""`` clears one); the API's document says the same."""
_PATTERNS = {"email": EMAIL_PATTERN, "slack": SLACK_PATTERN, "notify_url": URL_PATTERN}
_HINTS = {"email": "an email address", "slack": "a Slack user id (U…)", "notify_url": "a URL"}


@dataclass(frozen=True)
class Reach:
    """A user's addresses and the channels they want (``notify``; None: every addressed)."""

    user: str
    email: str | None = None
    slack: str | None = None
    notify_url: str | None = None
    notify: tuple[str, ...] | None = None
    webhooks: bool = False
    """Whether they have a webhook (the ``webhook`` channel's only "address")."""
    devices: bool = False
    """Whether a device of theirs is subscribed to push (the ``push`` channel's "address")."""

    def address(self, channel: str) -> str | None:
        column = ADDRESS_OF.get(channel)
        if column is None:
            held = {"webhook": self.webhooks, "push": self.devices}.get(channel, False)
            return "" if held else None
        value: str | None = getattr(self, column)
        return value

    def channels(self) -> tuple[str, ...]:
        """The channels a request of theirs goes to when it names none."""
        if self.notify is not None:
            return self.notify
        return tuple(c for c in NOTIFY_CHANNELS if self.reachable(c))

    def reachable(self, channel: str) -> bool:
        """Whether they have an address for ``channel`` (for webhooks: a webhook)."""
        address = self.address(channel)
        return address is not None if ADDRESS_OF.get(channel) is None else bool(address)

    def to_dict(self) -> dict[str, Any]:
        return {
            "user": self.user,
            "email": self.email,
            "slack": self.slack,
            "notify_url": self.notify_url,
            "notify": None if self.notify is None else list(self.notify),
            "channels": list(self.channels()),
        }


def check_notify(value: object, field: str = "notify") -> tuple[str, ...]:
    """A ``notify`` list: known channel names, each once (``[]`` is allowed: none)."""
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        raise InvalidInput(f"{field} must be a list of channel names", [FieldError(field, "list")])
    unknown = sorted({v for v in value if v not in NOTIFY_CHANNELS})
    if unknown:
        message = f"unknown channel(s) {', '.join(unknown)}: one of {', '.join(NOTIFY_CHANNELS)}"
        raise InvalidInput(message, [FieldError(field, message)])
    twice = sorted({v for v in value if value.count(v) > 1})
    if twice:
        message = f"each channel once: {', '.join(twice)} named more than once"
        raise InvalidInput(message, [FieldError(field, message)])
    return tuple(value)


def _check_address(name: str, value: str | None) -> str | None:
    if value is None or value == "":
        return None
    if not isinstance(value, str) or not re.fullmatch(_PATTERNS[name], value):
        raise InvalidInput(f"{name} is invalid", [FieldError(name, f"not {_HINTS[name]}")])
    return value


def get_reach(tx: Tx, user: str) -> Reach:
    # One statement (one round trip): the user's channels, if any, and whether they have
    # webhooks and devices subscribed to push.
    row = sql(tx).one(
        "SELECT c.email, c.slack, c.notify_url, c.notify, c.user_id AS found,"
        " EXISTS (SELECT 1 FROM webhooks WHERE user_id = ?) AS hooks,"
        " EXISTS (SELECT 1 FROM push_subscriptions WHERE user_id = ?) AS devices"
        " FROM (SELECT 1 AS one) AS u LEFT JOIN user_channels AS c ON c.user_id = ?",
        (user, user, user),
    )
    assert row is not None
    hooks, devices = bool(row["hooks"]), bool(row["devices"])
    if row["found"] is None:
        return Reach(user, webhooks=hooks, devices=devices)
    notify = None if row["notify"] is None else tuple(json.loads(row["notify"]))
    return Reach(user, row["email"], row["slack"], row["notify_url"], notify, hooks, devices)


_UNSET: Any = object()


def set_reach(
    tx: Tx,
    user: str,
    *,
    now: datetime,
    email: str | None = _UNSET,
    slack: str | None = _UNSET,
    notify_url: str | None = _UNSET,
    notify: Sequence[str] | None = _UNSET,
) -> Reach:
    """Change what is given (``""`` or None clears an address; ``notify=None``: default)."""
    current = get_reach(tx, user)
    values = {
        "email": current.email if email is _UNSET else _check_address("email", email),
        "slack": current.slack if slack is _UNSET else _check_address("slack", slack),
        "notify_url": (
            current.notify_url if notify_url is _UNSET else _check_address("notify_url", notify_url)
        ),
    }
    chosen = (
        current.notify if notify is _UNSET else (None if notify is None else check_notify(notify))
    )
    sql(tx).execute(
        "INSERT INTO user_channels (user_id, email, slack, notify_url, notify, updated_at)"
        " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (user_id) DO UPDATE SET email = excluded.email,"
        " slack = excluded.slack, notify_url = excluded.notify_url, notify = excluded.notify,"
        " updated_at = excluded.updated_at",
        (
            user,
            values["email"],
            values["slack"],
            values["notify_url"],
            None if chosen is None else json.dumps(list(chosen)),
            to_millis(now),
        ),
    )
    return get_reach(tx, user)


def user_by_slack(tx: Tx, slack_id: str) -> str | None:
    """The PawFlow user whose Slack id this is (None when none is, or several are)."""
    rows = sql(tx).all(
        "SELECT user_id FROM user_channels WHERE slack = ? ORDER BY user_id LIMIT 2", (slack_id,)
    )
    return str(rows[0]["user_id"]) if len(rows) == 1 else None
