"""The sweeper: expires requests, times out waits, fires timers, retries deliveries.

Each pass works through *due* rows only (partial indexes on the deadlines), in leased
batches, so its cost follows what is due, not what is parked. Several processes may sweep
one database: on PostgreSQL batches are leased with ``FOR UPDATE SKIP LOCKED``, on SQLite
write transactions are serialized anyway.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pawflow.store.store import Store

log = logging.getLogger("pawflow.sweeper")

DEFAULT_INTERVAL = 15.0

SweepStep = Callable[["Store"], dict[str, int]]


@dataclass
class SweepReport:
    """What one pass did, by step: ``expired``, ``released``, ``delivered``, …"""

    counts: dict[str, int] = field(default_factory=dict)

    def __getitem__(self, key: str) -> int:
        return self.counts.get(key, 0)

    def add(self, counts: dict[str, int]) -> None:
        for key, value in counts.items():
            self.counts[key] = self.counts.get(key, 0) + value

    @property
    def total(self) -> int:
        return sum(self.counts.values())


class Sweeper:
    """Runs ``store.sweep()`` every ``interval`` seconds on a thread of its own."""

    def __init__(self, store: Store, *, interval: float = DEFAULT_INTERVAL) -> None:
        if interval <= 0:
            raise ValueError("the sweep interval must be positive")
        self.store = store
        self.interval = interval
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        self.passes = 0

    def start(self) -> None:
        if self._thread is not None:
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="pawflow-sweeper", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=30)
            self._thread = None

    def wake(self) -> None:
        """Run a pass now rather than at the next interval."""
        self._wake.set()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.store.sweep()
            except Exception:  # a failed pass must not end the loop; the next one retries
                log.exception("sweep pass failed")
            self.passes += 1
            self._wake.wait(self.interval)
            self._wake.clear()

    def __enter__(self) -> Sweeper:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
