"""Time goes through a clock so tests can move it instead of sleeping."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta
from typing import Protocol

from pawflow.durations import parse_duration


class Clock(Protocol):
    def now(self) -> datetime:
        """The current time, timezone-aware UTC."""
        ...


class SystemClock:
    def now(self) -> datetime:
        return datetime.now(UTC)


class FakeClock:
    """A clock that only moves when told to; safe to share between threads."""

    def __init__(self, start: datetime | None = None) -> None:
        self._now = start or datetime(2026, 1, 1, tzinfo=UTC)
        if self._now.tzinfo is None:
            raise ValueError("FakeClock needs a timezone-aware start")
        self._lock = threading.Lock()

    def now(self) -> datetime:
        with self._lock:
            return self._now

    def advance(self, delta: timedelta | str) -> datetime:
        """Move forward by a timedelta or a duration such as ``"1d"``."""

        step = parse_duration(delta) if isinstance(delta, str) else delta
        with self._lock:
            if step is not None:
                self._now = self._now + step
            return self._now

    def set(self, when: datetime) -> None:
        with self._lock:
            self._now = when


def to_millis(when: datetime) -> int:
    """Epoch milliseconds, the form every timestamp takes in the store."""
    return int(when.timestamp() * 1000)


def from_millis(millis: int) -> datetime:
    return datetime.fromtimestamp(millis / 1000, tz=UTC)


def iso(when: datetime) -> str:
    """ISO-8601 UTC with a ``Z``, millisecond precision, as records carry it."""
    return when.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
