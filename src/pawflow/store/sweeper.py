"""The sweeper: expires requests, times out waits, fires timers, retries deliveries.

Each pass works through *due* rows only (partial indexes on the deadlines), in leased
batches, so its cost follows what is due, not what is parked. Several processes may sweep
one database: on PostgreSQL batches are leased with ``FOR UPDATE SKIP LOCKED``, on SQLite
write transactions are serialized anyway.
"""

from __future__ import annotations

from pawflow.loops import Loop
from pawflow.store.store import Store

DEFAULT_INTERVAL = 15.0


class Sweeper(Loop):
    """Runs ``store.sweep()`` every ``interval`` seconds on a thread of its own."""

    def __init__(self, store: Store, *, interval: float = DEFAULT_INTERVAL) -> None:
        super().__init__("sweeper", store.sweep, interval=interval)
        self.store = store
