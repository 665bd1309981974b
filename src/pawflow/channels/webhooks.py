"""Webhooks: which URLs may be called, and each delivery signed the Standard Webhooks way.

A webhook's URL must be ``http`` or ``https`` with a host, and is held to the egress rule
(:mod:`pawflow.egress`): a host that is, or resolves to, an inward address is refused unless
``PAWFLOW_EGRESS_ALLOWED_HOSTS`` allows it. The check runs when the webhook is made and again
before every attempt, and the attempt connects to the very address checked (the ``Host``
header and the TLS name stay the URL's), so a name that later resolves inward is never
called. An attempt ends by its deadline (``PAWFLOW_DELIVERY_TIMEOUT``, 10 s): connecting,
sending and reading the whole answer; a receiver that trickles past it has failed.

Each attempt POSTs the delivery's body (``{"type", "timestamp", "data": {"interaction"}}``)
with ``webhook-id`` (the same on every attempt: the receiver's key to ignore a repeat),
``webhook-timestamp`` (the attempt's, in seconds) and ``webhook-signature``
(``v1,<base64 HMAC-SHA256 of id.timestamp.body>`` keyed by the webhook's secret), made by
the ``standardwebhooks`` package, so its ``Webhook(secret).verify(body, headers)`` checks
them. A 2xx is sent; anything else, or no complete answer by the deadline, is tried again after
the outbox's backoff; a 410 Gone stops at once.

An A2A push notification goes the same way, to its config's URL under the same checks: the
update's JSON, with the config's token in ``X-A2A-Notification-Token`` and its credentials
(``scheme credentials``) in ``Authorization``, as A2A has it, besides ``webhook-id`` and
``webhook-timestamp``.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime

import httpx
from standardwebhooks import Webhook as Signer

from pawflow.egress import EgressRule
from pawflow.errors import EgressRefused, FieldError, InvalidInput
from pawflow.redaction import hosts_only_in_http_logs
from pawflow.store import PushConfig, PushDelivery, Webhook, WebhookDelivery

log = logging.getLogger("pawflow.channels")

MAX_URL = 2000
TIMEOUT = 10.0
"""Seconds one attempt may take in all (``PAWFLOW_DELIVERY_TIMEOUT``)."""


def check_url(url: str, rule: EgressRule, field: str = "url") -> str:
    """``url`` as a webhook (or a push config) may have it, or :class:`InvalidInput` on
    ``field``: an http(s) URL whose host the egress rule lets the server call."""
    if len(url) > MAX_URL:
        message = f"at most {MAX_URL} characters"
        raise InvalidInput(f"{field} is too long", [FieldError(field, message)])
    try:
        rule.check_url(url)
    except EgressRefused as exc:
        raise exc.on(field) from exc
    return url


@dataclass(frozen=True)
class Attempt:
    """What one POST came to: the receiver's status (None: no answer) and, unless it was a
    2xx, why it failed and whether a retry can help."""

    status: int | None
    error: str | None = None
    permanent: bool = False


class WebhookSender:
    """Signs and POSTs webhook deliveries."""

    def __init__(self, rule: EgressRule | None = None, *, timeout: float = TIMEOUT) -> None:
        self.rule = rule or EgressRule()
        self.timeout = timeout
        hosts_only_in_http_logs()  # a webhook's URL may carry its secret in the path

    def headers(self, hook: Webhook, delivery: WebhookDelivery, now: datetime) -> dict[str, str]:
        """The Standard Webhooks headers of an attempt made at ``now``."""
        signature = Signer(hook.secret).sign(delivery.id, now, delivery.payload)
        return {
            "content-type": "application/json",
            "user-agent": "PawFlow-Webhooks/1",
            "webhook-id": delivery.id,
            "webhook-timestamp": str(int(now.timestamp())),
            "webhook-signature": signature,
        }

    def send(self, hook: Webhook, delivery: WebhookDelivery, now: datetime) -> Attempt:
        """POST ``delivery`` once."""
        return self.post(hook.url, delivery.payload, self.headers(hook, delivery, now))

    def push_headers(
        self, config: PushConfig, delivery: PushDelivery, now: datetime
    ) -> dict[str, str]:
        """The headers of an A2A push: the config's token in ``X-A2A-Notification-Token``,
        its credentials in ``Authorization``, the delivery's id and the attempt's time."""
        headers = {
            "content-type": "application/json",
            "user-agent": "PawFlow-Webhooks/1",
            "webhook-id": delivery.id,
            "webhook-timestamp": str(int(now.timestamp())),
        }
        if config.token:
            headers["x-a2a-notification-token"] = config.token
        if config.auth_scheme and config.auth_credentials:
            headers["authorization"] = f"{config.auth_scheme} {config.auth_credentials}"
        return headers

    def push(self, config: PushConfig, delivery: PushDelivery, now: datetime) -> Attempt:
        """POST an A2A push notification once."""
        return self.post(config.url, delivery.payload, self.push_headers(config, delivery, now))

    def post(self, target: str, payload: str, headers: dict[str, str]) -> Attempt:
        """POST ``payload`` to ``target`` once, at the address checked just before, the whole
        attempt (connect, send, the full answer) within ``timeout`` seconds."""
        try:
            checked = self.rule.check_url(target)
        except EgressRefused as exc:
            return Attempt(None, f"the URL {exc.message}", permanent=True)
        try:
            with self.rule.client(self.timeout, checked) as http:
                response = http.post(target, content=payload.encode("utf-8"), headers=headers)
        except httpx.TimeoutException:
            return Attempt(None, f"no complete answer within {self.timeout:g} s")
        except httpx.HTTPError as exc:
            return Attempt(None, f"{type(exc).__name__}: {exc}")
        status = response.status_code
        if 200 <= status < 300:
            return Attempt(status)
        return Attempt(status, f"HTTP {status}", permanent=status == 410)
