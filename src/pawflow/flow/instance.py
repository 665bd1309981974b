"""A deployed flow running continuously on worker threads, on durable queues.

An instance runs in the one process holding its deployment's lease. It starts from what the
store holds (``DurableEngine.load``), takes FlowFiles through ``inject`` and resumed
continuations through ``deliver``, and runs until stopped. Stopping finishes the batches in
flight and the FlowFiles ``waitForSignal`` held (they leave by ``expired``); everything still
queued stays in the store for the next owner.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from pawflow.errors import Undeliverable
from pawflow.flow.board import SignalBoard
from pawflow.flow.definition import FlowDefinition
from pawflow.flow.durable import DEFAULT_BATCH, DurableEngine
from pawflow.flow.engine import Ending
from pawflow.flow.flowfile import FlowFile
from pawflow.flow.task import FlowScope, RuntimeContext
from pawflow.loops import Failures

if TYPE_CHECKING:
    from pawflow.store import Continuation, Hold, Store
    from pawflow.store import Transaction as Tx

log = logging.getLogger("pawflow.flow")

POLL = 0.25
"""Seconds a worker waits for work before it times out due in-memory waits."""


class FlowInstance:
    """A deployed flow running continuously on worker threads."""

    def __init__(
        self,
        instance_id: str,
        flow: FlowDefinition,
        *,
        store: Store,
        scope: FlowScope,
        owner: str,
        board: SignalBoard | None = None,
        workers: int = 1,
        batch: int = DEFAULT_BATCH,
        keep_endings: int = 10_000,
        on_park: Callable[[Continuation], None] | None = None,
        hold: Hold | None = None,
    ) -> None:
        self.id = instance_id
        self.flow = flow
        self.store = store
        self.scope = scope
        self.runtime = RuntimeContext(
            flow.name,
            store=store,
            scope=scope,
            instance_id=instance_id,
            clock=store.clock,
            board=board or SignalBoard(),
        )
        self.engine = DurableEngine(
            flow,
            self.runtime,
            store=store,
            owner=owner,
            batch=batch,
            keep_endings=keep_endings,
            on_park=on_park,
            on_room=self._offer_room,
            hold=hold,
        )
        self.workers = max(1, workers)
        self._threads: list[threading.Thread] = []
        self._stop = threading.Event()
        self._state = "new"
        self._lock = threading.Lock()

    @property
    def target(self) -> str:
        return self.runtime.target

    @property
    def running(self) -> bool:
        """Taking work: started, not stopping, its lease held, not closed for an idle stop."""
        engine = self.engine
        return self._state == "running" and not engine.lost and not engine.closed

    @property
    def lease_hold(self) -> Hold | None:
        """The deployment's lease as this process's monotonic clock sees it (the flow
        service renews it; the workers check it before each task)."""
        return self.engine.lease_hold

    @property
    def lost(self) -> bool:
        """Another process took the deployment over (this one lost its lease)."""
        return self.engine.lost

    @property
    def idle(self) -> bool:
        """Nothing queued, processing, held in memory, or being handed over."""
        board = self.runtime.board
        held = board.waiting(self.engine) if board is not None else 0
        return self.engine.idle and held == 0

    def close_if_idle(self) -> bool:
        """Take no new work from now on, if it has none (an idle stop is being decided);
        False when it has some. :meth:`reopen` takes work again."""
        board = self.runtime.board
        if board is not None and board.waiting(self.engine):
            return False
        return self.engine.close_if_idle()

    def reopen(self) -> None:
        self.engine.reopen()

    def _offer_room(self, target: str) -> bool:
        """A batch made room after a FlowFile was held back: take the waiting ones now.
        True when as many came as were asked for (more may wait)."""
        limit = self.flow.queue_capacity
        try:
            return self.store.deliver_due(limit=limit, target=target) >= limit
        except Exception:  # the sweeper offers them again; the worker goes on
            log.warning("flow %s: offering held FlowFiles failed", target, exc_info=True)
            return False

    def start(self) -> None:
        """Load what the store holds for this deployment, then start the workers."""
        with self._lock:
            if self._state != "new":
                return
            self.engine.load()
            self._state = "running"
        for index in range(self.workers):
            thread = threading.Thread(
                target=self._work, name=f"pawflow-flow-{self.flow.name}-{index}", daemon=True
            )
            self._threads.append(thread)
            thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        """Finish the batches in flight and what was held; queued FlowFiles stay stored."""
        with self._lock:
            if self._state in ("stopping", "stopped"):
                return
            started = self._state == "running"
            self._state = "stopping"
        self.engine.draining = True
        board = self.runtime.board
        if board is not None:
            board.release_all(self.engine, self.runtime.clock.now())
        if started and not self.engine.settled(timeout):
            log.warning("flow instance %s stopped with a batch still running", self.id)
        self._stop.set()
        self.engine.wake_all()
        for thread in self._threads:
            thread.join(timeout=5)
        with self._lock:
            self._state = "stopped"

    def inject(self, flowfile: FlowFile, entry_task_id: str | None = None) -> None:
        """Queue a FlowFile for ``entry_task_id`` (the start task by default), durably.

        Raises ``Undeliverable`` when the instance is not running or that queue is full.
        """
        self.inject_many([flowfile], entry_task_id)

    def inject_many(self, flowfiles: Sequence[FlowFile], entry_task_id: str | None = None) -> None:
        """Queue several FlowFiles in one transaction (all of them, or none)."""
        if not self.running:
            raise Undeliverable(f"flow instance {self.id} is not running")
        self.engine.inject(entry_task_id or self.flow.start, flowfiles)

    def deliver(self, continuation: Continuation, tx: Tx) -> None:
        """Queue a resolved continuation's FlowFile in the transaction that consumes it.

        A full queue raises, so the store keeps the continuation and retries it later.
        """
        if not self.running:
            raise Undeliverable(f"flow instance {self.id} is not running")
        self.engine.accept(continuation, tx)

    def endings(self) -> list[Ending]:
        """Where FlowFiles left this instance (the most recent ``keep_endings``)."""
        return self.engine.snapshot_endings()

    def poke(self) -> None:
        """Time out in-memory waits that are due now (workers also do this on their own)."""
        board = self.runtime.board
        if board is not None:
            board.expire(self.runtime.clock.now(), owner=self.engine)

    def wait_idle(self, timeout: float = 10.0) -> bool:
        deadline = time.monotonic() + timeout
        while not self.idle:
            if time.monotonic() > deadline:
                return False
            self.engine.wait_until_idle(0.05)
        return True

    def _work(self) -> None:
        last_expiry = time.monotonic()
        failures = Failures(f"a worker of flow {self.id}", log)
        picked = None
        # A batch taken with the last one's record runs even once stopping: it is in flight.
        while picked is not None or not self._stop.is_set():
            try:
                if picked is None:
                    picked = self.engine.take_batch(timeout=POLL)
                if picked is not None:
                    picked = self.engine.process_batch(*picked)
                if time.monotonic() - last_expiry > POLL:
                    last_expiry = time.monotonic()
                    self.poke()
            except Exception as exc:  # a worker outlives whatever a batch runs into
                picked = None
                failures.failed(exc)
                self._stop.wait(failures.backoff(POLL))
            else:
                failures.succeeded()
