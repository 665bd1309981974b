"""Request limits: body size counted while it streams in, and a per-user request rate."""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import parse_qsl

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from pawflow.errors import FieldError
from pawflow.server.errors import HTTPProblem, problem_response

UPLOAD_OVERHEAD = 64 * 1024
"""Room for multipart boundaries and headers around an upload of the maximum size."""


def encoded_upload_limit(max_body: int, max_upload: int) -> int:
    """The largest JSON body that may carry an upload in base64 (a third larger than its
    bytes), as ``/mcp`` does for PawFlow's MCP App; never less than ``max_body``."""
    return max(max_body, 4 * ((max_upload + 2) // 3) + UPLOAD_OVERHEAD)


CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:;"
    " connect-src 'self'; font-src 'self'; manifest-src 'self'; form-action 'self';"
    " frame-ancestors 'none'; base-uri 'none'"
)
"""Only this origin's own files run or style a page: no inline script or style anywhere."""

SECURITY_HEADERS = (
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"same-origin"),
    (b"content-security-policy", CONTENT_SECURITY_POLICY.encode()),
)


class BodyLimit:
    """Reads a request body in full before the app sees it, refusing it past ``limit_for``.

    The bytes are counted as they arrive: a ``Content-Length`` may refuse a body early but
    never admits one, so a chunked body, or one longer than it claimed, is still stopped.
    """

    def __init__(self, app: ASGIApp, limit_for: Callable[[str], int]) -> None:
        self.app = app
        self.limit_for = limit_for

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] in ("GET", "HEAD", "OPTIONS"):
            await self.app(scope, receive, send)
            return
        limit = self.limit_for(scope["path"])
        declared = _content_length(scope)
        if declared is not None and declared > limit:
            await self._too_large(scope, receive, send, limit)
            return
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                await self._too_large(scope, receive, send, limit)
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        whole = b"".join(chunks)
        delivered = False

        async def replay() -> Message:
            nonlocal delivered
            if not delivered:
                delivered = True
                return {"type": "http.request", "body": whole, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    async def _too_large(self, scope: Scope, receive: Receive, send: Send, limit: int) -> None:
        problem = HTTPProblem(
            413,
            f"request body too large: the limit is {limit} bytes",
            headers={"Connection": "close"},
        )
        await problem_response(problem)(scope, receive, send)


def _content_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", ()):
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


class HeaderLimit:
    """Refuses, with a 431, a request whose target and headers take more than ``limit`` bytes.

    The HTTP parser bounds what it buffers of an incomplete request (see ``running.py``);
    a request that arrived whole is measured here, before any route sees it.
    """

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            size = len(scope.get("raw_path") or b"") + len(scope.get("query_string") or b"")
            size += sum(len(name) + len(value) + 4 for name, value in scope.get("headers", ()))
            if size > self.limit:
                problem = HTTPProblem(
                    431,
                    f"request headers too large: the limit is {self.limit} bytes",
                    headers={"Connection": "close"},
                )
                await problem_response(problem)(scope, receive, send)
                return
        await self.app(scope, receive, send)


class SingleQueryValues:
    """Refuses, with a 422 naming it, a parameter given twice in the query of an API route:
    every parameter of the API is one value, and which of two would be taken is a guess."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        query: bytes = (scope.get("query_string") or b"") if scope["type"] == "http" else b""
        if b"&" in query and str(scope.get("path", "")).startswith("/api/"):
            seen: set[str] = set()
            for name, _ in parse_qsl(
                query.decode("latin-1"), keep_blank_values=True, errors="replace"
            ):
                if name in seen:
                    message = "given more than once: give one value"
                    problem = HTTPProblem(
                        422, f"{name}: {message}", errors=[FieldError(name, message)]
                    )
                    await problem_response(problem)(scope, receive, send)
                    return
                seen.add(name)
        await self.app(scope, receive, send)


class SecurityHeaders:
    """The same protective headers on every response, errors included."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", ()))
                present = {name.lower() for name, _ in headers}
                headers.extend(h for h in SECURITY_HEADERS if h[0] not in present)
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, with_headers)


@dataclass
class _Bucket:
    tokens: float
    stamp: float


MAX_KEYS = 10_000
"""Buckets kept at most; beyond it, those full again are forgotten rather than grow."""


class TokenBuckets:
    """A token bucket per key: ``burst`` at once, refilled at ``per_minute`` a minute."""

    def __init__(
        self,
        per_minute: int,
        burst: int,
        *,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.rate = per_minute / 60.0
        self.burst = float(burst)
        self._monotonic = monotonic
        self._buckets: dict[str, _Bucket] = {}
        self._lock = threading.Lock()

    def _refilled(self, key: str, now: float) -> _Bucket:
        bucket = self._buckets.get(key)
        if bucket is None:
            if len(self._buckets) >= MAX_KEYS:
                self._buckets = {
                    k: b
                    for k, b in self._buckets.items()
                    if b.tokens + (now - b.stamp) * self.rate < self.burst
                }
            bucket = self._buckets[key] = _Bucket(self.burst, now)
        bucket.tokens = min(self.burst, bucket.tokens + (now - bucket.stamp) * self.rate)
        bucket.stamp = now
        return bucket

    def _wait(self, tokens: float) -> int:
        return math.ceil((1.0 - tokens) / self.rate) if self.rate > 0 else 60

    def take(self, key: str) -> int | None:
        """Spend a token of ``key``; None, or the seconds to wait when there is none."""
        with self._lock:
            bucket = self._refilled(key, self._monotonic())
            if bucket.tokens >= 1.0:
                bucket.tokens -= 1.0
                return None
            return self._wait(bucket.tokens)

    def waiting(self, key: str) -> int | None:
        """The seconds ``key`` must wait for a token (None: it has one), spending nothing."""
        with self._lock:
            tokens = self._refilled(key, self._monotonic()).tokens
        return None if tokens >= 1.0 else self._wait(tokens)

    def spend(self, key: str) -> None:
        """Spend a token of ``key`` whether or not it has one (down to empty)."""
        with self._lock:
            bucket = self._refilled(key, self._monotonic())
            bucket.tokens = max(0.0, bucket.tokens - 1.0)


class RateLimiter(TokenBuckets):
    """Requests per user."""

    def check(self, user: str) -> None:
        """Take one token for ``user``, or raise a 429 saying when to retry."""
        wait = self.take(user)
        if wait is not None:
            raise HTTPProblem(
                429, f"too many requests: retry in {wait} s", headers={"Retry-After": str(wait)}
            )
