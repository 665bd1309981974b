"""``Loop``: a named background thread that runs one pass every ``interval`` seconds, or at
once when woken, until stopped — the one way PawFlow runs background work.

A failed pass never ends the loop: it is logged (:class:`Failures`: the first failure with
its traceback, the next ones as one line with their count, then "recovered after N s"), the
loop waits a little longer after each failure in a row (up to ``MAX_BACKOFF`` seconds, never
less than its interval) and tries again. Every started loop of the process is listed by
:func:`background`, for the health check: a loop whose thread ended is reported as not
running. ``Service`` is what ``pawflow serve`` starts and stops for as long as it runs (a
``Loop`` is one).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any, Protocol, Self, runtime_checkable

from pawflow.errors import ConfigError

log = logging.getLogger("pawflow.loops")

MAX_BACKOFF = 2.0
"""Seconds a failing loop waits at most between two tries (its interval, if longer)."""
REMIND_EVERY = 60.0
"""Seconds between two lines about a failure that goes on (besides the 2nd, 4th, 8th…)."""


@runtime_checkable
class Service(Protocol):
    """Something that runs for as long as the server does."""

    def start(self) -> None: ...

    def stop(self) -> None: ...


def describe(exc: BaseException) -> str:
    """An error as one line: its type and its message."""
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


class Failures:
    """The failures in a row of one piece of background work, logged without flooding the
    log: the first with its traceback, the 2nd, 4th, 8th… (and one a minute) as one line
    with the count, and "recovered after N s" once it succeeds again."""

    def __init__(self, name: str, logger: logging.Logger | None = None) -> None:
        self.name = name
        self.log = logger or log
        self.count = 0
        """Failures since the last success."""
        self.since: float | None = None
        """When the first of them happened (``time.monotonic()``)."""
        self.error = ""
        """The last one, in one line."""
        self._next = 2
        self._said_at = 0.0
        self._lock = threading.Lock()

    def failed(self, exc: BaseException) -> None:
        now = time.monotonic()
        with self._lock:
            self.count += 1
            self.error = describe(exc)
            count = self.count
            if count == 1:
                self.since = self._said_at = now
                self._next = 2
                say = True
            else:
                say = count >= self._next or now - self._said_at >= REMIND_EVERY
                if say:
                    self._said_at = now
                    while self._next <= count:
                        self._next *= 2
            since = self.since or now
        if count == 1:
            self.log.error("%s failed: %s", self.name, self.error, exc_info=exc)
        elif say:
            elapsed = now - since
            self.log.warning(
                "%s failed again: %s (%d failures in %.0f s)", self.name, self.error, count, elapsed
            )

    def succeeded(self) -> None:
        if not self.count:  # the usual case, without the lock
            return
        with self._lock:
            count, since = self.count, self.since
            self.count, self.since, self.error = 0, None, ""
        if count:
            elapsed = time.monotonic() - (since or time.monotonic())
            times = "1 failure" if count == 1 else f"{count} failures"
            self.log.warning("%s recovered after %.1f s (%s)", self.name, elapsed, times)

    def backoff(self, base: float) -> float:
        """How long to wait before the next try: ``base`` doubled for each failure in a
        row, up to ``MAX_BACKOFF`` (or ``base``, if longer)."""
        if not self.count:
            return base
        doubled: float = base * 2.0 ** min(self.count - 1, 16)
        return min(doubled, max(base, MAX_BACKOFF))

    def state(self) -> str | None:
        """What is wrong, in words; None while it works."""
        with self._lock:
            if not self.count:
                return None
            elapsed = time.monotonic() - (self.since or time.monotonic())
            return f"failing for {elapsed:.0f} s ({self.count} failures): {self.error}"


class Loop:
    """Runs ``step()`` on a thread of its own every ``interval`` seconds, or when woken."""

    def __init__(
        self,
        name: str,
        step: Callable[[], Any],
        *,
        interval: float,
        join_timeout: float = 30.0,
        logger: logging.Logger | None = None,
    ) -> None:
        if interval <= 0:
            raise ConfigError(f"the {name} interval must be positive")
        self.name = name
        self.interval = interval
        self.passes = 0
        self.failures = Failures(name, logger)
        self._step = step
        self._join_timeout = join_timeout
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def running(self) -> bool:
        """Started and not stopped (its thread may still have ended: see :attr:`alive`)."""
        return self._thread is not None

    @property
    def alive(self) -> bool:
        """Whether its thread runs."""
        thread = self._thread
        return thread is not None and thread.is_alive()

    def start(self) -> None:
        if self._thread is not None:
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name=f"pawflow-{self.name}", daemon=True)
        self._thread.start()
        with _registry_lock:
            _started.add(self)

    def stop(self, *, waking: Callable[[], None] | None = None) -> None:
        """Stop the loop and wait for its thread (``waking`` ends a wait of its step's own:
        called once the loop is told to stop)."""
        self._stop.set()
        self._wake.set()
        if waking is not None:
            waking()
        with _registry_lock:
            _started.discard(self)
        if self._thread is not None:
            if self._thread is not threading.current_thread():
                self._thread.join(timeout=self._join_timeout)
            self._thread = None

    def wake(self) -> None:
        """Run a pass now rather than at the next interval (or the next try)."""
        self._wake.set()

    def stopping(self, wait: float = 0.0) -> bool:
        """Whether the loop is being stopped, waiting up to ``wait`` seconds for that (for a
        step that runs long: a listener's)."""
        return self._stop.wait(wait) if wait > 0 else self._stop.is_set()

    def state(self) -> str:
        """``running``, ``not running`` (its thread ended) or what its failures are."""
        if not self.alive:
            return "not running"
        return self.failures.state() or "running"

    def _run(self) -> None:
        while not self._stop.is_set():
            self._wake.clear()
            try:
                self._step()
            except Exception as exc:  # a failed pass must not end the loop; the next one retries
                self.failures.failed(exc)
                wait = self.failures.backoff(self.interval)
            else:
                self.failures.succeeded()
                wait = self.interval
            self.passes += 1
            self._wake.wait(wait)

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


_started: set[Loop] = set()
_registry_lock = threading.Lock()


def background() -> list[Loop]:
    """Every loop of this process that was started and not stopped, by name."""
    with _registry_lock:
        return sorted(_started, key=lambda loop: loop.name)


def wake_failing() -> None:
    """Wake every loop that is failing (what it needed may be back: the database)."""
    for loop in background():
        if loop.failures.count:
            loop.wake()
