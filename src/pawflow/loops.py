"""``Loop``: a named background thread that runs one pass every ``interval`` seconds, or at
once when woken, until stopped — the one way PawFlow runs background work.

A failed pass is logged and the loop goes on: the next pass retries. ``Service`` is what
``pawflow serve`` starts and stops for as long as it runs (a ``Loop`` is one).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any, Protocol, Self, runtime_checkable

from pawflow.errors import ConfigError

log = logging.getLogger("pawflow.loops")


@runtime_checkable
class Service(Protocol):
    """Something that runs for as long as the server does."""

    def start(self) -> None: ...

    def stop(self) -> None: ...


class Loop:
    """Runs ``step()`` on a thread of its own every ``interval`` seconds, or when woken."""

    def __init__(
        self,
        name: str,
        step: Callable[[], Any],
        *,
        interval: float,
        join_timeout: float = 30.0,
    ) -> None:
        if interval <= 0:
            raise ConfigError(f"the {name} interval must be positive")
        self.name = name
        self.interval = interval
        self.passes = 0
        self._step = step
        self._join_timeout = join_timeout
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def running(self) -> bool:
        return self._thread is not None

    def start(self) -> None:
        if self._thread is not None:
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name=f"pawflow-{self.name}", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=self._join_timeout)
            self._thread = None

    def wake(self) -> None:
        """Run a pass now rather than at the next interval."""
        self._wake.set()

    def _run(self) -> None:
        while not self._stop.is_set():
            self._wake.clear()
            try:
                self._step()
            except Exception:  # a failed pass must not end the loop; the next one retries
                log.exception("%s pass failed", self.name)
            self.passes += 1
            self._wake.wait(self.interval)

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
