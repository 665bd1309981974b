"""Webhooks: which URLs may be called, and each delivery signed the Standard Webhooks way.

A webhook's URL must be ``http`` or ``https`` with a host. To keep a user from making the
server call its own network (SSRF), a host that is, or resolves to, a loopback, private,
link-local, shared, multicast or reserved address is refused unless it is listed in
``PAWFLOW_WEBHOOK_ALLOWED_HOSTS`` (comma-separated host names, addresses or networks such
as ``10.1.0.0/16``). The check runs when the webhook is made and again before every
attempt, and the attempt connects to the very address checked (the ``Host`` header and the
TLS name stay the URL's), so a name that later resolves inward is never called.

Each attempt POSTs the delivery's body (``{"type", "timestamp", "data": {"interaction"}}``)
with ``webhook-id`` (the same on every attempt: the receiver's key to ignore a repeat),
``webhook-timestamp`` (the attempt's, in seconds) and ``webhook-signature``
(``v1,<base64 HMAC-SHA256 of id.timestamp.body>`` keyed by the webhook's secret), made by
the ``standardwebhooks`` package, so its ``Webhook(secret).verify(body, headers)`` checks
them. A 2xx is sent; anything else, or no answer within the timeout, is tried again after
the outbox's backoff; a 410 Gone stops at once.

An A2A push notification goes the same way, to its config's URL under the same checks: the
update's JSON, with the config's token in ``X-A2A-Notification-Token`` and its credentials
(``scheme credentials``) in ``Authorization``, as A2A has it, besides ``webhook-id`` and
``webhook-timestamp``.
"""

from __future__ import annotations

import ipaddress
import logging
import socket
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from urllib.parse import urlsplit

import httpx
from standardwebhooks import Webhook as Signer

from pawflow.errors import FieldError, InvalidInput
from pawflow.redaction import hosts_only_in_http_logs
from pawflow.store.a2a_push import PushDelivery
from pawflow.store.a2a_tasks import PushConfig
from pawflow.store.webhooks import Webhook, WebhookDelivery

log = logging.getLogger("pawflow.channels")

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
MAX_URL = 2000


@dataclass(frozen=True)
class AllowedHosts:
    """Hosts a webhook may call although they are inside (loopback, private, …)."""

    names: frozenset[str] = frozenset()
    networks: tuple[Network, ...] = ()

    @classmethod
    def parse(cls, value: str | None) -> AllowedHosts:
        names: set[str] = set()
        networks: list[Network] = []
        for part in (value or "").split(","):
            item = part.strip().lower()
            if not item:
                continue
            try:
                networks.append(ipaddress.ip_network(item.strip("[]"), strict=False))
            except ValueError:
                names.add(item.rstrip("."))
        return cls(frozenset(names), tuple(networks))

    def allows(self, host: str, addresses: Iterable[str]) -> bool:
        if host.lower().rstrip(".") in self.names:
            return True
        return all(
            any(ipaddress.ip_address(a) in net for net in self.networks) for a in addresses
        ) and bool(self.networks)


def _inside(address: str) -> bool:
    ip = ipaddress.ip_address(address)
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return not ip.is_global or ip.is_multicast


def _resolve(host: str, port: int) -> list[str]:
    try:
        found = {str(info[4][0]) for info in socket.getaddrinfo(host, port)}
        return sorted(found, key=lambda a: (":" in a, a))  # IPv4 first
    except (OSError, UnicodeError) as exc:
        raise ValueError(f"cannot resolve {host}: {exc}") from exc


def check_target(url: str, allowed: AllowedHosts) -> list[str]:
    """The addresses ``url``'s host resolves to, all of which may be called; raises
    ``ValueError`` (with the reason) if any may not."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError("must be an http:// or https:// URL with a host")
    if parts.username or parts.password:
        raise ValueError("must not carry a user name or password")
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError as exc:
        raise ValueError(f"has an invalid port: {exc}") from exc
    addresses = _resolve(parts.hostname, port)
    if not addresses:
        raise ValueError(f"cannot resolve {parts.hostname}")
    if allowed.allows(parts.hostname, addresses):
        return addresses
    inward = [a for a in addresses if _inside(a)]
    if inward:
        raise ValueError(
            f"{parts.hostname} is a private or loopback address ({inward[0]});"
            " list it in PAWFLOW_WEBHOOK_ALLOWED_HOSTS to allow it"
        )
    return addresses


def pinned(url: str, address: str) -> tuple[str, str, dict[str, str]]:
    """``url`` with its host replaced by the checked ``address`` (so no later lookup can
    lead elsewhere), the ``Host`` header it had, and the TLS name to verify."""
    parts = urlsplit(url)
    host = f"[{address}]" if ":" in address else address
    netloc = host + (f":{parts.port}" if parts.port else "")
    tls = {"sni_hostname": parts.hostname or ""} if parts.scheme == "https" else {}
    return parts._replace(netloc=netloc).geturl(), parts.netloc.rpartition("@")[2], tls


def check_url(url: str, allowed: AllowedHosts) -> str:
    """``url`` as a webhook may have it, or :class:`InvalidInput` on ``url``."""
    if len(url) > MAX_URL:
        raise InvalidInput("url is too long", [FieldError("url", f"at most {MAX_URL} characters")])
    try:
        check_target(url, allowed)
    except ValueError as exc:
        raise InvalidInput(f"url {exc}", [FieldError("url", str(exc))]) from exc
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

    def __init__(self, allowed: AllowedHosts | None = None, *, timeout: float = 10.0) -> None:
        self.allowed = allowed or AllowedHosts()
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
        """POST ``payload`` to ``target`` once, at the address checked just before."""
        try:
            url, host, tls = pinned(target, check_target(target, self.allowed)[0])
        except ValueError as exc:
            return Attempt(None, f"the URL {exc}", permanent=True)
        try:
            with httpx.Client(timeout=self.timeout, follow_redirects=False) as http:
                response = http.post(
                    url,
                    content=payload.encode("utf-8"),
                    headers={**headers, "host": host},
                    extensions=tls,
                )
        except httpx.HTTPError as exc:
            return Attempt(None, f"{type(exc).__name__}: {exc}")
        status = response.status_code
        if 200 <= status < 300:
            return Attempt(status)
        return Attempt(status, f"HTTP {status}", permanent=status == 410)
