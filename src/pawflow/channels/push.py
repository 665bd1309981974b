"""Web Push: a request reaches a person's browsers and phones, through their push services.

A person turns it on per device from the web chat's settings ("Notify this device"): the
browser subscribes at its push service with the server's VAPID public key, and the page
hands the subscription to the server (``subscribe_push``; :mod:`pawflow.store.reach.web_push`).
The ``push`` channel then sends each outbox row to every device of its recipient: a JSON
payload encrypted to the device's keys as RFC 8291 has it (``aes128gcm``, by pywebpush),
POSTed to the device's endpoint with a VAPID ``Authorization`` (RFC 8292, signed by
py-vapid with the key pair kept in the store, :func:`server_keys`), a ``TTL`` up to the
request's deadline, ``Urgency: high`` and a ``Topic`` of the request, so a copy sent again
after a crash replaces the first at the push service while it waits there.

The page's service worker shows the payload as a notification. A confirm or a choice of at
most :data:`MAX_ACTIONS` options carries its answers as the notification's actions; pressing
one POSTs that answer to the row's answer link (``/a/<token>``, spent by the answer: any
other device's press after it is told the request was answered), and showing the
notification answers nothing. Tapping the notification itself opens the answer link's page.

A push service's ``404`` or ``410`` for an endpoint removes that subscription; a row whose
devices are all gone fails for good. A device that cannot be reached now (no answer, ``429``,
``5xx``) fails the row, which the outbox tries again after its backoff, unless another
device of the person took it. A sent notification cannot change: :meth:`PushChannel.settle`
does nothing, and an action pressed on a settled request opens the page that says how it
ended.

Endpoints are URLs the browser chose, so they follow the egress rule of every outbound URL
a user can aim (:mod:`pawflow.egress`, ``PAWFLOW_EGRESS_ALLOWED_HOSTS``): ``subscribe_push``
refuses one it does not allow, and :meth:`PushChannel.target` checks each again before it is
called; the push goes through the rule's client, to the very address checked, the whole
attempt within ``PAWFLOW_DELIVERY_TIMEOUT``.
"""

from __future__ import annotations

import base64
import hashlib
import json
import logging
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

import httpx

from pawflow.channels.base import DeliveryError, Outgoing, utc
from pawflow.egress import EgressRule, Target
from pawflow.errors import EgressRefused
from pawflow.interactions import Kind
from pawflow.records import Interaction
from pawflow.redaction import hosts_only_in_http_logs
from pawflow.store import OutboxRow, Store, Subscription, VapidKeys

log = logging.getLogger("pawflow.channels")

MAX_ACTIONS = 3
"""A choice with more options than this opens its page instead (browsers show 2 to 4)."""
MAX_TTL = timedelta(days=28)
DEFAULT_TTL = timedelta(days=1)
"""How long a push service keeps a notification for a device that is offline."""
JWT_LIFETIME = timedelta(hours=12)
"""A VAPID token's ``exp`` (push services refuse more than 24 h)."""
WORKERS = 8 * 20
"""Threads pushing at most: the dispatcher's attempts in flight on a lane (8) times the devices
a person may have (20), so no attempt waits for another's pushes to start its own."""
MAX_BODY = 1000
MAX_TITLE = 120
"""Characters of the question and of its title a notification carries (a payload holds at
most 4 kB, about 3990 bytes of JSON once encrypted)."""


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def server_keys(store: Store) -> VapidKeys:
    """The server's VAPID key pair: the one kept in the store, or a new one kept now (the
    first start with push on)."""
    with store.unit(write=False) as u:
        found = u.web_push.keys()
    if found is not None:
        return found
    from cryptography.hazmat.primitives import serialization  # noqa: PLC0415
    from py_vapid import Vapid  # noqa: PLC0415 - only servers with push on load it

    vapid = Vapid()
    vapid.generate_keys()
    public = vapid.public_key.public_bytes(
        serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
    )
    with store.unit() as u:
        return u.web_push.keep_keys(vapid.private_pem().decode(), _b64(public))


def default_subject(base_url: str, mail_from: str | None) -> str:
    """Whom a push service may contact about this server's pushes (the VAPID ``sub``): the
    notification mail's sender, else the server's https address, else a placeholder."""
    if mail_from:
        return f"mailto:{mail_from.strip().strip('<>')}"
    if base_url.startswith("https://"):
        return base_url.rstrip("/")
    return "mailto:pawflow@localhost"


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def actions_of(request: Interaction) -> list[dict[str, str]]:
    """The answers a notification offers as its actions: ``{"action": "N", "title"}`` where
    ``N`` is what the answer link's ``pick`` takes."""
    if request.kind == Kind.CONFIRM:
        labels = ["Yes", "No"]
    elif request.kind == Kind.CHOICE and len(request.options or []) <= MAX_ACTIONS:
        labels = [str(option["label"]) for option in request.options or []]
    else:
        return []
    return [{"action": str(i), "title": _cut(label, 40)} for i, label in enumerate(labels)]


def payload(message: Outgoing) -> dict[str, Any]:
    """What the service worker gets: the notification's words (the question, then who asks,
    where and by when), its actions, the answer link and the conversation's page. The
    deadline is said in UTC; ``deadline`` lets the device say it in its own time zone."""
    request = message.request
    context = "\n".join(message.context())
    question = _cut(request.message.strip(), max(MAX_BODY - len(context) - 2, 200))
    expires = request.expires_at
    return {
        "v": 1,
        "request_id": request.id,
        "tag": f"pawflow:{request.id}",
        "title": _cut(message.subject, MAX_TITLE),
        "body": f"{question}\n\n{context}".strip(),
        "answer_url": message.answer_url,
        "conversation_url": message.conversation_url,
        "actions": actions_of(request),
        "expires_at": None if expires is None else expires.isoformat(),
        "deadline": None if expires is None else {"at": expires.isoformat(), "text": utc(expires)},
    }


@dataclass(frozen=True)
class Sent:
    """What one device's push service said: its status (None: no answer)."""

    subscription: Subscription
    status: int | None
    error: str | None = None
    retry: bool = False
    """Whether trying again later may help (no answer, 429, 5xx)."""


class PushChannel:
    """The ``push`` channel: one encrypted push per device of the row's recipient."""

    name = "push"

    def __init__(
        self,
        store: Store,
        keys: VapidKeys,
        *,
        subject: str,
        rule: EgressRule | None = None,
        timeout: float = 10.0,
    ) -> None:
        self.store = store
        self.keys = keys
        self.subject = subject
        self.rule = rule or EgressRule()
        self.timeout = timeout
        self._pool: ThreadPoolExecutor | None = None
        self._closed = False
        self._lock = threading.Lock()
        hosts_only_in_http_logs()  # an endpoint's path is the device's address

    def close(self) -> None:
        """Let the pushes' threads go (the dispatcher closes its channels as it stops): what
        is in flight ends by its deadline; an attempt after this fails, to be tried again."""
        with self._lock:
            pool, self._pool = self._pool, None
            self._closed = True
        if pool is not None:
            pool.shutdown(wait=False)

    def _threads(self) -> ThreadPoolExecutor:
        """The pool every attempt pushes to a person's devices with: made on the first
        attempt to more than one device, kept until :meth:`close` (threads are started as
        pushes need them, and reused)."""
        with self._lock:
            if self._closed:
                raise DeliveryError("the push channel is closed: the server is stopping")
            if self._pool is None:
                self._pool = ThreadPoolExecutor(WORKERS, thread_name_prefix="pawflow-push")
            return self._pool

    def render(self, message: Outgoing) -> dict[str, Any]:
        return payload(message)

    def send(self, message: Outgoing) -> str | None:
        with self.store.unit(write=False) as u:
            devices = u.web_push.of_user(message.row.recipient)
        if not devices:
            raise DeliveryError(
                f"{message.row.recipient} has no device subscribed to push", permanent=True
            )
        # As UTF-8, not \u escapes: a question in any script fits the 4 kB a push holds.
        rendered = self.render(message)
        data = json.dumps(rendered, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
        ttl = self._ttl(message.request)
        topic = _b64(hashlib.sha256(message.request.id.encode()).digest()[:16])
        results = self._push_all(devices, data, ttl=ttl, topic=topic)
        delivered = [r for r in results if r.error is None]
        gone = [r for r in results if r.status in (404, 410)]
        if gone:
            with self.store.unit() as u:
                for result in gone:
                    u.web_push.remove_gone(result.subscription)
            log.info("push: %d subscription(s) of %s are gone", len(gone), message.row.recipient)
        if delivered:
            for result in results:
                if result.error is not None and result not in gone:
                    log.warning("push to a device failed: %s", result.error)
            return f"{len(delivered)} of {len(devices)} device(s)"
        reasons = "; ".join(sorted({str(r.error) for r in results}))
        retry = any(r.retry for r in results)
        if gone and len(gone) == len(results):
            reasons = "the push service says every subscribed device is gone"
        raise DeliveryError(f"push: {reasons}", permanent=not retry)

    def _push_all(
        self, devices: Sequence[Subscription], data: bytes, *, ttl: int, topic: str
    ) -> list[Sent]:
        """Push to every device at once: an attempt takes one deadline, not one per device
        (a person has at most ``MAX_DEVICES``)."""
        if len(devices) == 1:
            return [self.push(devices[0], data, ttl=ttl, topic=topic)]
        pool = self._threads()
        return list(pool.map(lambda d: self.push(d, data, ttl=ttl, topic=topic), devices))

    def _ttl(self, request: Interaction) -> int:
        now = self.store.now()
        left = DEFAULT_TTL if request.expires_at is None else request.expires_at - now
        return int(max(timedelta(seconds=60), min(left, MAX_TTL)).total_seconds())

    def headers(self, endpoint: str, now: datetime) -> dict[str, str]:
        """The VAPID ``Authorization`` for ``endpoint``'s push service, valid 12 hours."""
        from py_vapid import Vapid  # noqa: PLC0415

        parts = urlsplit(endpoint)
        claims = {
            "aud": f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}",
            "sub": self.subject,
            "exp": int((now + JWT_LIFETIME).timestamp()),
        }
        signed: dict[str, str] = Vapid.from_pem(self.keys.private_pem.encode()).sign(claims)
        return {"authorization": signed["Authorization"]}

    def target(self, endpoint: str) -> Target:
        """``endpoint`` checked by the egress rule, its host resolved once (the addresses the
        push connects to); raises :class:`EgressRefused` with the reason it may not be
        called."""
        return self.rule.check_url(endpoint)

    def push(self, device: Subscription, data: bytes, *, ttl: int, topic: str) -> Sent:
        """Encrypt ``data`` to ``device`` and POST it once to its push service."""
        from pywebpush import WebPusher  # noqa: PLC0415 - 0.2 s, paid by the first push

        try:
            target = self.target(device.endpoint)
        except EgressRefused as exc:
            return Sent(device, None, f"the endpoint {exc.message}")
        try:
            body = WebPusher(device.info()).encode(data, "aes128gcm")["body"]
        except Exception as exc:  # keys checked when subscribed: a damaged row
            return Sent(device, None, f"cannot encrypt to this device: {exc}")
        headers = {
            **self.headers(device.endpoint, self.store.now()),
            "content-encoding": "aes128gcm",
            "content-type": "application/octet-stream",
            "ttl": str(ttl),
            "urgency": "high",
            "topic": topic,
        }
        try:
            with self.rule.client(self.timeout, target) as http:
                response = http.post(device.endpoint, content=body, headers=headers)
        except httpx.TimeoutException:
            error = f"no complete answer within {self.timeout:g} s"
            return Sent(device, None, error, retry=True)
        except httpx.HTTPError as exc:
            return Sent(device, None, f"{type(exc).__name__}: {exc}", retry=True)
        status = response.status_code
        if 200 <= status < 300:
            return Sent(device, status)
        retry = status == 429 or status >= 500
        return Sent(device, status, f"the push service answered {status}", retry=retry)

    def settle(self, row: OutboxRow, request: Interaction) -> None:
        """A shown notification cannot change; its page says how the request ended."""
