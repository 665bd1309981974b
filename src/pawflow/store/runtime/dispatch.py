"""Deliveries in this process: the registered handlers, and the change notices that wake them.

A store hands what its transactions resolved to the handlers registered here before they
commit (:meth:`Dispatcher.deliver_here`); what other processes resolve arrives as a change
notice, and is delivered from the database (:meth:`Dispatcher.deliver_due`).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from datetime import datetime

from pawflow.store.engine import waits
from pawflow.store.engine.database import TOUCHED, Database, Tx
from pawflow.store.runtime import continuations as cont
from pawflow.store.runtime.delivery import (
    Delivery,
    DeliveryHandler,
    DeliveryRegistry,
    anything_due,
    deliver_due,
    deliver_resolved,
)
from pawflow.store.runtime.reports import SWEEP_BATCH


class Dispatcher:
    """The handlers of one store in this process, and the notices it listens to."""

    def __init__(self, db: Database, now: Callable[[], datetime]) -> None:
        self.db = db
        self.now = now
        self.registry = DeliveryRegistry()
        self._changed = threading.Condition()
        self._change_count = 0
        self._stop_listening: Callable[[], None] | None = None
        self._listen_lock = threading.Lock()
        self._delivering = threading.local()
        self._handing_on = False
        """A thread is about to deliver what a notice heard on an event loop woke."""

    def close(self) -> None:
        if self._stop_listening is not None:
            self._stop_listening()
            self._stop_listening = None

    def register(self, kind: str, handler: DeliveryHandler | Callable[[Delivery], None]) -> None:
        self.registry.register(kind, handler)
        self.ensure_listening()
        self.deliver_due()

    def deliver_due(self, limit: int = SWEEP_BATCH, *, target: str | None = None) -> int:
        """Hand resolved continuations to the handlers registered in this process; with
        ``target``, that requester's whether due or not (its queue has room again)."""
        if getattr(self._delivering, "active", False):
            self._delivering.again = True  # a delivery resolved more: the outer loop goes on
            return 0
        self._delivering.active = True
        delivered = 0
        try:
            while True:
                self._delivering.again = False
                delivered += deliver_due(
                    self.db, self.registry, self.now(), limit=limit, target=target
                )
                if not self._delivering.again:
                    return delivered
        finally:
            self._delivering.active = False

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        """Deliver nothing in this thread until the block ends (a sweep counts them after)."""
        self._delivering.active = True
        try:
            yield
        finally:
            self._delivering.active = False

    def deliver_here(self, tx: Tx, now: datetime) -> None:
        """Deliver what ``tx`` resolved to this process's handlers, before it commits."""
        if tx.resolved:
            deliver_resolved(tx, self.registry, now)

    # -- change notices -------------------------------------------------------------------

    def ensure_listening(self) -> None:
        with self._listen_lock:
            if self._stop_listening is None:
                self._stop_listening = self.db.listen(self._on_notice)

    @property
    def listening(self) -> bool:
        return self._stop_listening is not None

    def changes(self) -> int:
        """How many change notices arrived so far."""
        with self._changed:
            return self._change_count

    def wait_change(self, seen: int, timeout: float) -> None:
        """Wait up to ``timeout`` seconds for a notice after the ``seen``-th."""
        with self._changed:
            if self._change_count == seen:
                self._changed.wait(timeout=timeout)

    def _on_notice(self, notice: str) -> None:
        with self._changed:
            self._change_count += 1
            self._changed.notify_all()
        if not self.registry.kinds():
            return
        if notice == cont.RESOLVED_NOTICE or (
            notice in ("changed", TOUCHED) and anything_due(self.db, self.now())
        ):
            if waits.within():  # the commit of a call on an event loop: handlers take time
                self._deliver_on_a_thread()
            else:
                self.deliver_due()

    def _deliver_on_a_thread(self) -> None:
        """:meth:`deliver_due` on a thread of its own (one at a time: a notice heard before
        it starts is delivered by it)."""
        with self._listen_lock:
            if self._handing_on:
                return
            self._handing_on = True

        def deliver() -> None:
            with self._listen_lock:
                self._handing_on = False
            self.deliver_due()

        threading.Thread(target=deliver, name="pawflow-deliver", daemon=True).start()
