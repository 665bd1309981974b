"""Running a flow: the engine, one-shot batch runs, and continuous instances.

The engine keeps one bounded queue in front of each task and hands FlowFiles to tasks one
at a time. A task is scheduled only while every queue it feeds has room (backpressure); when
nothing else can move, the fullest flow still makes progress rather than deadlocking.

A **batch** run drives the engine in the caller's thread until nothing is left to do and
reports where each FlowFile ended. An **instance** runs continuously on worker threads,
takes FlowFiles through ``inject`` and resumed continuations through ``deliver``, and keeps
running until stopped.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from pawflow.clock import Clock, SystemClock
from pawflow.errors import InvalidInput, PawFlowError, Undeliverable
from pawflow.flow.board import SignalBoard
from pawflow.flow.definition import FlowDefinition
from pawflow.flow.flowfile import FlowFile
from pawflow.flow.task import FlowScope, Parker, Resumption, RuntimeContext, TaskContext

if TYPE_CHECKING:
    from pawflow.store import Store
    from pawflow.store.continuations import Continuation
    from pawflow.store.database import Tx

log = logging.getLogger("pawflow.flow")

PARK_MODE_RESUME = "resume"
PARK_MODE_INJECT = "inject"


@dataclass(frozen=True)
class Ending:
    """Where a FlowFile left the flow: a relationship connected to nothing."""

    flowfile: FlowFile
    task_id: str
    relationship: str

    def to_dict(self) -> dict[str, object]:
        return {
            "id": self.flowfile.id,
            "task": self.task_id,
            "relationship": self.relationship,
            "attributes": dict(self.flowfile.attributes),
            "content": self.flowfile.text(),
            "lineage": list(self.flowfile.lineage),
        }


@dataclass
class _Item:
    flowfile: FlowFile
    resumption: Resumption | None = None


def _reason(exc: BaseException) -> str:
    if isinstance(exc, InvalidInput):
        return exc.message
    if isinstance(exc, PawFlowError):
        return str(exc)
    return f"{type(exc).__name__}: {exc}"


class Engine(Parker):
    """Queues, scheduling and routing for one running flow."""

    def __init__(
        self,
        flow: FlowDefinition,
        runtime: RuntimeContext,
        *,
        keep_endings: int | None = None,
        on_end: Callable[[Ending], None] | None = None,
        on_park: Callable[[Continuation], None] | None = None,
    ) -> None:
        self.flow = flow
        self.runtime = runtime
        self.capacity = flow.queue_capacity
        self.endings: deque[Ending] = deque(maxlen=keep_endings)
        self.ended: Counter[tuple[str, str]] = Counter()
        self.processed = 0
        self.parked = 0
        self.last_active = runtime.clock.now()
        self._on_end = on_end
        self._on_park = on_park
        self._queues: dict[str, deque[_Item]] = {task_id: deque() for task_id in flow.tasks}
        self._order = list(flow.tasks)
        self._cursor = 0
        self._feeds = {
            task_id: {t for targets in flow.connections.get(task_id, {}).values() for t in targets}
            for task_id in flow.tasks
        }
        self._in_flight = 0
        self._cond = threading.Condition()

    # -- queues -------------------------------------------------------------------------

    def offer(
        self,
        task_id: str,
        flowfile: FlowFile,
        *,
        force: bool = False,
        resumption: Resumption | None = None,
    ) -> None:
        """Queue ``flowfile`` for ``task_id``; ``Undeliverable`` when full (unless forced)."""
        if task_id not in self._queues:
            raise InvalidInput(f"flow {self.flow.name!r} has no task {task_id!r}")
        with self._cond:
            queue = self._queues[task_id]
            if not force and len(queue) >= self.capacity:
                raise Undeliverable(
                    f"backpressure: the queue of task {task_id!r} is full ({self.capacity})"
                )
            queue.append(_Item(flowfile, resumption))
            self._cond.notify()

    def snapshot_endings(self) -> list[Ending]:
        """The endings kept so far (a copy, safe while workers run)."""
        with self._cond:
            return list(self.endings)

    def has_room(self, task_id: str) -> bool:
        with self._cond:
            return len(self._queues[task_id]) < self.capacity

    def queued(self) -> int:
        with self._cond:
            return sum(len(q) for q in self._queues.values())

    @property
    def idle(self) -> bool:
        with self._cond:
            return self._in_flight == 0 and not any(self._queues.values())

    def wait_until_idle(self, timeout: float) -> bool:
        with self._cond:
            return self._cond.wait_for(
                lambda: self._in_flight == 0 and not any(self._queues.values()), timeout
            )

    def wake_all(self) -> None:
        with self._cond:
            self._cond.notify_all()

    def take(self, timeout: float = 0.0) -> tuple[str, _Item] | None:
        """The next task and FlowFile to process; waits up to ``timeout`` for one."""
        with self._cond:
            picked = self._pick()
            if picked is None and timeout > 0:
                self._cond.wait(timeout)
                picked = self._pick()
            if picked is None:
                return None
            self._in_flight += 1
            return picked, self._queues[picked].popleft()

    def _pick(self) -> str | None:
        count = len(self._order)
        fallback = None
        for step in range(count):
            task_id = self._order[(self._cursor + step) % count]
            if not self._queues[task_id]:
                continue
            if all(len(self._queues[t]) < self.capacity for t in self._feeds[task_id]):
                self._cursor = (self._cursor + step + 1) % count
                return task_id
            fallback = fallback or task_id
        return fallback  # everything downstream is full: move anyway rather than deadlock

    # -- processing ---------------------------------------------------------------------

    def process(self, task_id: str, item: _Item) -> None:
        """Run one task on one FlowFile and route what it emits."""
        task = self.flow.tasks[task_id]
        try:
            ctx = TaskContext(task, item.flowfile, self.runtime, self, item.resumption)
            try:
                emitted = list(task.process(item.flowfile, ctx))
            except Exception as exc:
                if not isinstance(exc, PawFlowError):
                    log.exception("task %s of flow %s failed", task_id, self.flow.name)
                failed = item.flowfile.evolve(
                    update={"failure.reason": _reason(exc), "failure.task": task_id}
                )
                emitted = [("failure", failed)]
            for relationship, flowfile in emitted:
                self._route(task_id, relationship, flowfile)
        finally:
            with self._cond:
                self._in_flight -= 1
                self.processed += 1
                self.last_active = self.runtime.clock.now()
                self._cond.notify_all()

    def _route(self, task_id: str, relationship: str, flowfile: FlowFile) -> None:
        targets = self.flow.targets(task_id, relationship)
        if not targets:
            ending = Ending(flowfile, task_id, relationship)
            with self._cond:
                self.endings.append(ending)
                self.ended[(task_id, relationship)] += 1
            if self._on_end is not None:
                self._on_end(ending)
            return
        for index, target in enumerate(targets):
            # A FlowFile sent down several connections is cloned for all but the first.
            self.offer(target, flowfile if index == 0 else flowfile.child(), force=True)

    # -- parking (the Parker tasks see) ------------------------------------------------

    def park(
        self,
        task_id: str,
        flowfile: FlowFile,
        *,
        signal_id: str | None = None,
        timeout: str | None = None,
        until: str | datetime | None = None,
    ) -> Continuation:
        store = self.runtime.store
        if store is None or not self.runtime.deployed:
            raise Undeliverable("only a deployed flow can park FlowFiles")
        payload = flowfile.encode({"task": task_id, "mode": PARK_MODE_RESUME})
        continuation = store.park(
            self.runtime.target,
            signal_id=signal_id,
            timeout=timeout,
            until=until,
            payload=payload,
        )
        with self._cond:
            self.parked += 1
        if self._on_park is not None:
            self._on_park(continuation)
        return continuation

    def hold(
        self, task_id: str, flowfile: FlowFile, key: str, deadline: datetime | None
    ) -> Resumption | None:
        board = self.runtime.board
        if board is None:
            raise Undeliverable("this runtime has no signal board")

        def release(outcome: str, value: object) -> None:
            self.offer(task_id, flowfile, force=True, resumption=Resumption(outcome, key, value))

        passed, value = board.wait(
            self.runtime.board_key(key),
            self,
            release,
            now=self.runtime.clock.now(),
            deadline=deadline,
        )
        return Resumption("signaled", key, value) if passed else None


# -- batch runs ---------------------------------------------------------------------------


@dataclass
class BatchResult:
    """Where every FlowFile of a batch run ended, in the order they ended."""

    flow: str
    endings: list[Ending] = field(default_factory=list)

    @property
    def failures(self) -> list[Ending]:
        return [e for e in self.endings if e.relationship == "failure"]

    def at(self, task_id: str, relationship: str | None = None) -> list[Ending]:
        return [
            e
            for e in self.endings
            if e.task_id == task_id and (relationship is None or e.relationship == relationship)
        ]


def run_batch(
    flow: FlowDefinition,
    flowfiles: Iterable[FlowFile] | None = None,
    *,
    store: Store | None = None,
    scope: FlowScope | None = None,
    clock: Clock | None = None,
) -> BatchResult:
    """Run ``flow`` once over ``flowfiles`` (one empty FlowFile by default) to the end.

    Tasks that need a store or a conversation get them from ``store`` and ``scope``;
    durable waits and timers fail (they need a deployed flow to come back to).
    """
    runtime = RuntimeContext(
        flow.name,
        store=store,
        scope=scope,
        clock=clock or (store.clock if store is not None else SystemClock()),
        board=SignalBoard(),
    )
    engine = Engine(flow, runtime)
    for flowfile in flowfiles if flowfiles is not None else [FlowFile.create()]:
        engine.offer(flow.start, flowfile, force=True)
    board = runtime.board
    assert board is not None
    while True:
        picked = engine.take()
        if picked is not None:
            engine.process(*picked)
            continue
        # Nothing else in this run can notify a waiting FlowFile any more: time it out.
        if board.release_all(engine, runtime.clock.now()) == 0:
            break
    return BatchResult(flow.name, list(engine.endings))


# -- continuous instances -------------------------------------------------------------------


class FlowInstance:
    """A deployed flow running continuously on worker threads."""

    def __init__(
        self,
        instance_id: str,
        flow: FlowDefinition,
        *,
        store: Store,
        scope: FlowScope,
        board: SignalBoard | None = None,
        workers: int = 1,
        keep_endings: int = 10_000,
        on_park: Callable[[Continuation], None] | None = None,
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
        self.engine = Engine(flow, self.runtime, keep_endings=keep_endings, on_park=on_park)
        self.workers = max(1, workers)
        self._threads: list[threading.Thread] = []
        self._stop = threading.Event()
        self._state = "new"
        self._lock = threading.Lock()
        self._delivering = 0

    @property
    def target(self) -> str:
        return self.runtime.target

    @property
    def running(self) -> bool:
        return self._state == "running"

    @property
    def idle(self) -> bool:
        """Nothing queued, processing, held in memory, or being handed over."""
        board = self.runtime.board
        held = board.waiting(self.engine) if board is not None else 0
        with self._lock:
            delivering = self._delivering
        return self.engine.idle and held == 0 and delivering == 0

    def start(self) -> None:
        with self._lock:
            if self._state != "new":
                return
            self._state = "running"
        for index in range(self.workers):
            thread = threading.Thread(
                target=self._work, name=f"pawflow-flow-{self.flow.name}-{index}", daemon=True
            )
            self._threads.append(thread)
            thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        """Stop taking FlowFiles, finish those inside (held ones time out), then end."""
        with self._lock:
            if self._state in ("stopping", "stopped"):
                return
            started = self._state == "running"
            self._state = "stopping"
        board = self.runtime.board
        if board is not None:
            board.release_all(self.engine, self.runtime.clock.now())
        deadline = time.monotonic() + timeout
        while started and not self.idle and time.monotonic() < deadline:
            self.engine.wait_until_idle(min(0.1, max(deadline - time.monotonic(), 0.0)))
        if not self.idle:
            log.warning(
                "flow instance %s stopped with %d FlowFile(s) still queued",
                self.id,
                self.engine.queued(),
            )
        self._stop.set()
        self.engine.wake_all()
        for thread in self._threads:
            thread.join(timeout=5)
        with self._lock:
            self._state = "stopped"

    def inject(self, flowfile: FlowFile, entry_task_id: str | None = None) -> None:
        """Hand a FlowFile to ``entry_task_id`` (the start task by default).

        Raises ``Undeliverable`` when the instance is not running or that queue is full.
        """
        if not self.running:
            raise Undeliverable(f"flow instance {self.id} is not running")
        self.engine.offer(entry_task_id or self.flow.start, flowfile)

    def deliver(self, continuation: Continuation, tx: Tx) -> None:
        """Take a resolved continuation inside the transaction that consumes it.

        The FlowFile joins its task's queue only once that transaction has committed;
        a full queue raises, so the store keeps the continuation and retries it later.
        """
        if not self.running:
            raise Undeliverable(f"flow instance {self.id} is not running")
        flowfile, header = FlowFile.decode(continuation.payload)
        task_id = header.get("task") or self.flow.start
        if not isinstance(task_id, str) or task_id not in self.flow.tasks:
            raise Undeliverable(f"flow {self.flow.name!r} has no task {task_id!r}")
        if not self.engine.has_room(task_id):
            raise Undeliverable(f"backpressure: the queue of task {task_id!r} is full")
        resumption = None
        if header.get("mode", PARK_MODE_RESUME) == PARK_MODE_RESUME:
            resumption = Resumption(
                continuation.outcome or "signaled", continuation.signal_id, continuation.value
            )
        with self._lock:
            self._delivering += 1

        def hand_over() -> None:
            try:
                self.engine.offer(task_id, flowfile, force=True, resumption=resumption)
            finally:
                with self._lock:
                    self._delivering -= 1

        tx.after_commit(hand_over)

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
        while not self._stop.is_set():
            picked = self.engine.take(timeout=0.25)
            if picked is not None:
                self.engine.process(*picked)
            if time.monotonic() - last_expiry > 0.25:
                last_expiry = time.monotonic()
                self.poke()
