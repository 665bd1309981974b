"""A local Web Push service: what a browser's push service does with a push, on loopback.

It hands out subscriptions (an endpoint and the device's keys, as a browser's
``PushSubscription.toJSON()`` has them, with the private key the device keeps), and for each
POST to an endpoint checks the VAPID ``Authorization`` (RFC 8292: an ES256 JWT signed by
the key in ``k``, for this origin, not expired nor valid past 24 hours), the headers a push
needs (``TTL``, ``Content-Encoding: aes128gcm``), and decrypts the body with the device's
keys (RFC 8291, by ``http_ece``), independently of the libraries that made them, and
refuses a body over 4096 bytes as the push services do. It answers the next status queued
for that endpoint (``201`` by default).
"""

from __future__ import annotations

import base64
import json
import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import http_ece
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


@dataclass
class Device:
    """A subscribed browser: its endpoint, and the keys it decrypts with."""

    name: str
    endpoint: str
    private_key: ec.EllipticCurvePrivateKey
    auth: bytes

    @property
    def p256dh(self) -> str:
        point = self.private_key.public_key().public_bytes(
            serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
        )
        return b64(point)

    def subscription(self) -> dict[str, Any]:
        return {"endpoint": self.endpoint, "keys": {"p256dh": self.p256dh, "auth": b64(self.auth)}}


@dataclass(frozen=True)
class Push:
    """One push the service took: to whom, what the VAPID token claimed, what it said."""

    device: str
    claims: dict[str, Any]
    vapid_key: str
    headers: dict[str, str]
    payload: dict[str, Any]


@dataclass
class PushService:
    now: Callable[[], datetime]
    url: str = ""
    devices: dict[str, Device] = field(default_factory=dict)
    statuses: dict[str, list[int]] = field(default_factory=dict)
    pushes: list[Push] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    gather: threading.Barrier | None = None
    """When set, each push is answered only once this many pushes are in (503 if they never
    are, within its timeout): pushes sent one after another never get through."""

    def device(self, name: str) -> Device:
        made = Device(
            name, f"{self.url}/push/{name}", ec.generate_private_key(ec.SECP256R1()), os.urandom(16)
        )
        self.devices[name] = made
        return made

    def answer(self, name: str, *statuses: int) -> None:
        """Answer the next pushes to ``name`` with ``statuses`` (then 201)."""
        with self.lock:
            self.statuses.setdefault(name, []).extend(statuses)

    def received(self) -> list[Push]:
        with self.lock:
            return list(self.pushes)

    def take(self, path: str, headers: dict[str, str], body: bytes) -> int:
        name = path.removeprefix("/push/")
        device = self.devices.get(name)
        if device is None:
            return 404
        if len(body) > 4096:  # RFC 8030: a push service may refuse more; all do
            with self.lock:
                self.refused.append(f"{len(body)} bytes")
            return 413
        try:
            claims, key = self.check_vapid(headers.get("authorization", ""))
            if headers.get("content-encoding") != "aes128gcm":
                raise ValueError(f"content-encoding {headers.get('content-encoding')!r}")
            if not headers.get("ttl", "").isdigit():
                raise ValueError("no TTL")
            plain = http_ece.decrypt(
                body, private_key=device.private_key, auth_secret=device.auth, version="aes128gcm"
            )
        except (ValueError, KeyError, InvalidSignature, AssertionError) as exc:
            with self.lock:
                self.refused.append(f"{type(exc).__name__}: {exc}")
            return 401 if "vapid" in str(exc).lower() or isinstance(exc, InvalidSignature) else 400
        with self.lock:
            self.pushes.append(Push(name, claims, key, headers, json.loads(plain)))
            queued = self.statuses.get(name, [])
            status = queued.pop(0) if queued else 201
        if self.gather is not None:
            try:
                self.gather.wait()
            except threading.BrokenBarrierError:
                return 503
        return status

    def check_vapid(self, authorization: str) -> tuple[dict[str, Any], str]:
        """The claims of a valid ``vapid t=…,k=…`` header, and its key; ValueError if not."""
        scheme, _, rest = authorization.partition(" ")
        if scheme.lower() != "vapid":
            raise ValueError(f"not a vapid Authorization: {authorization[:20]!r}")
        parts = dict(item.strip().split("=", 1) for item in rest.split(","))
        token, key = parts["t"], parts["k"]
        head, body, signature = token.split(".")
        if json.loads(unb64(head)) != {"typ": "JWT", "alg": "ES256"}:
            raise ValueError(f"vapid JWT header {unb64(head)!r}")
        public = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), unb64(key))
        raw = unb64(signature)
        der = encode_dss_signature(int.from_bytes(raw[:32]), int.from_bytes(raw[32:]))
        public.verify(der, f"{head}.{body}".encode(), ec.ECDSA(hashes.SHA256()))
        claims: dict[str, Any] = json.loads(unb64(body))
        now = self.now().timestamp()
        if claims.get("aud") != self.url:
            raise ValueError(f"vapid aud {claims.get('aud')!r} is not {self.url}")
        if not now < claims["exp"] <= now + 24 * 3600:
            raise ValueError(f"vapid exp {claims['exp']} is not within 24 h of {now}")
        if not str(claims.get("sub", "")).startswith(("mailto:", "https://")):
            raise ValueError(f"vapid sub {claims.get('sub')!r}")
        return claims, key


@contextmanager
def push_service(now: Callable[[], datetime]) -> Iterator[PushService]:
    service = PushService(now)

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("content-length") or 0))
            headers = {k.lower(): v for k, v in self.headers.items()}
            status = service.take(self.path, headers, body)
            self.send_response(status)
            self.send_header("content-length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    service.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield service
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
