"""Throttling failed authentication by client address.

Every failed token, session-cookie or sign-in-link guess takes a token from the address's
bucket; an empty bucket refuses further attempts from that address with a 429 until it
refills. Successful requests cost nothing here (the per-user rate limit covers them), so a
guesser is slowed to ``per_minute`` guesses while legitimate clients never notice.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from pawflow.server.errors import HTTPProblem

MAX_ADDRESSES = 10_000


@dataclass
class _Bucket:
    tokens: float
    stamp: float


class FailureThrottle:
    """A token bucket per client address, spent only by failed authentication."""

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

    def _refilled(self, address: str, now: float) -> _Bucket:
        bucket = self._buckets.get(address)
        if bucket is None:
            if len(self._buckets) >= MAX_ADDRESSES:  # forget addresses that are full again
                self._buckets = {
                    a: b
                    for a, b in self._buckets.items()
                    if b.tokens + (now - b.stamp) * self.rate < self.burst
                }
            bucket = self._buckets[address] = _Bucket(self.burst, now)
        bucket.tokens = min(self.burst, bucket.tokens + (now - bucket.stamp) * self.rate)
        bucket.stamp = now
        return bucket

    def check(self, address: str) -> None:
        """Raise a 429 while ``address`` has used up its failed attempts."""
        now = self._monotonic()
        with self._lock:
            tokens = self._refilled(address, now).tokens
        if tokens < 1.0:
            wait = math.ceil((1.0 - tokens) / self.rate) if self.rate > 0 else 60
            raise HTTPProblem(
                429,
                f"too many failed sign-in attempts: retry in {wait} s",
                headers={"Retry-After": str(wait)},
            )

    def failed(self, address: str) -> None:
        """Count one failed attempt from ``address``."""
        now = self._monotonic()
        with self._lock:
            bucket = self._refilled(address, now)
            bucket.tokens = max(0.0, bucket.tokens - 1.0)
