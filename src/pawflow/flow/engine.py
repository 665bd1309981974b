"""Running a flow: the engine, and one-shot batch runs in memory.

The engine keeps one bounded queue in front of each task and hands FlowFiles to tasks one
at a time. A task is scheduled only while every queue it feeds has room (backpressure); when
nothing else can move, the fullest flow still makes progress rather than deadlocking.

A **batch** run drives the engine in the caller's thread until nothing is left to do and
reports where each FlowFile ended. Its queues live in memory only: nothing of a batch run
survives its process, and a FlowFile that passes more than ``max_hops`` tasks stops the run
(a flow that loops without end). Deployed flows run on durable queues (``flow.durable``).
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections import Counter, deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from pawflow.clock import Clock, SystemClock
from pawflow.errors import HopLimitReached, InvalidInput, PawFlowError, QueueFull, Undeliverable
from pawflow.flow.board import SignalBoard
from pawflow.flow.definition import FlowDefinition
from pawflow.flow.flowfile import FlowFile
from pawflow.flow.task import Emit, FlowScope, Parker, Resumption, RuntimeContext, TaskContext
from pawflow.store import resuming
from pawflow.telemetry import log_context

if TYPE_CHECKING:
    from pawflow.store import Store

log = logging.getLogger("pawflow.flow")

PARK_MODE_RESUME = "resume"
PARK_MODE_INJECT = "inject"
DEFAULT_MAX_HOPS = 1000


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
class Item:
    flowfile: FlowFile
    resumption: Resumption | None = None
    hops: int = 0
    """How many tasks this FlowFile (or the one it was cloned from) has passed."""
    row_id: int | None = None
    """Its row in the durable queue (deployed flows only)."""
    attempts: int = 0
    taken: bool = False
    """Already marked as running in the store (a FlowFile a task held, released)."""


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
        max_hops: int | None = None,
    ) -> None:
        self.flow = flow
        self.runtime = runtime
        self.max_hops = max_hops
        self.capacity = flow.queue_capacity
        self.endings: deque[Ending] = deque(maxlen=keep_endings)
        self.ended: Counter[tuple[str, str]] = Counter()
        self.processed = 0
        self.parked = 0
        self.last_active = runtime.clock.now()
        self._on_end = on_end
        self._queues: dict[str, deque[Item]] = {task_id: deque() for task_id in flow.tasks}
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
        hops: int = 0,
    ) -> None:
        """Queue ``flowfile`` for ``task_id``; ``Undeliverable`` when full (unless forced)."""
        if task_id not in self._queues:
            raise InvalidInput(f"flow {self.flow.name!r} has no task {task_id!r}")
        with self._cond:
            queue = self._queues[task_id]
            if not force and len(queue) >= self.capacity:
                raise QueueFull(
                    f"backpressure: the queue of task {task_id!r} is full ({self.capacity})"
                )
            queue.append(Item(flowfile, resumption, hops))
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
            return self._is_idle()

    def wait_until_idle(self, timeout: float) -> bool:
        with self._cond:
            return self._cond.wait_for(self._is_idle, timeout)

    def _is_idle(self) -> bool:
        """Nothing queued or processing (called holding the lock)."""
        return self._in_flight == 0 and not any(self._queues.values())

    def wake_all(self) -> None:
        with self._cond:
            self._cond.notify_all()

    def take(self, timeout: float = 0.0) -> tuple[str, Item] | None:
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

    def run_task(self, task_id: str, item: Item, parker: Parker) -> list[Emit]:
        """What one task emits for one FlowFile; a failure leaves by ``failure``. Its log
        lines name the deployment (a batch of them: :meth:`deployment_logged`, then
        :meth:`run_logged`)."""
        with self.deployment_logged():
            return self.run_logged(task_id, item, parker)

    def deployment_logged(self) -> contextlib.AbstractContextManager[None]:
        """The block whose log lines name this engine's deployment, if it has one."""
        return log_context(deployment_id=self.runtime.instance_id)

    def run_logged(self, task_id: str, item: Item, parker: Parker) -> list[Emit]:
        """:meth:`run_task` inside :meth:`deployment_logged` (entered once for a batch)."""
        task = self.flow.tasks[task_id]
        resumed = item.resumption
        ctx = TaskContext(
            task,
            item.flowfile,
            self.runtime,
            parker,
            resumed,
            attempt=max(item.attempts, 1),
            hops=item.hops,
        )
        store, deployment = self.runtime.store, self.runtime.instance_id
        with contextlib.ExitStack() as resume:
            if resumed is not None and store is not None and deployment is not None:
                # A FlowFile back from a wait: its resume is a span linked to the ask.
                resume.enter_context(
                    resuming(store, resumed.signal_id, "flow", deployment_id=deployment)
                )
            try:
                return list(task.process(item.flowfile, ctx))
            except Exception as exc:
                if not isinstance(exc, PawFlowError):
                    log.exception("task %s of flow %s failed", task_id, self.flow.name)
                failed = item.flowfile.evolve(
                    update={"failure.reason": _reason(exc), "failure.task": task_id}
                )
                return [("failure", failed)]

    def process(self, task_id: str, item: Item) -> None:
        """Run one task on one FlowFile and route what it emits."""
        try:
            for relationship, flowfile in self.run_task(task_id, item, ItemParker(self, item)):
                self._route(task_id, relationship, flowfile, item.hops + 1)
        finally:
            with self._cond:
                self._in_flight -= 1
                self.processed += 1
                self.last_active = self.runtime.clock.now()
                self._cond.notify_all()

    def _route(self, task_id: str, relationship: str, flowfile: FlowFile, hops: int) -> None:
        targets = self.flow.targets(task_id, relationship)
        if not targets:
            self.record_endings([Ending(flowfile, task_id, relationship)])
            return
        if self.max_hops is not None and hops >= self.max_hops:
            raise HopLimitReached(
                f"flow {self.flow.name!r}: FlowFile {flowfile.lineage_start} passed"
                f" {self.max_hops} tasks without leaving the flow (last at task {task_id!r},"
                f" going on by {relationship!r}); the flow loops without end, or needs a"
                " higher hop limit"
            )
        for target, copy in fan_out(flowfile, targets):
            self.offer(target, copy, force=True, hops=hops)

    def record_endings(self, endings: list[Ending]) -> None:
        with self._cond:
            for ending in endings:
                self.endings.append(ending)
                self.ended[(ending.task_id, ending.relationship)] += 1
        if self._on_end is not None:
            for ending in endings:
                self._on_end(ending)

    # -- parking (the Parker tasks see) ------------------------------------------------

    def park(
        self,
        task_id: str,
        flowfile: FlowFile,
        *,
        signal_id: str | None = None,
        timeout: str | None = None,
        until: str | datetime | None = None,
    ) -> None:
        # Only a deployed flow, on durable queues, can park (flow.durable).
        raise Undeliverable("only a deployed flow can park FlowFiles")

    def hold(
        self, task_id: str, flowfile: FlowFile, key: str, deadline: datetime | None
    ) -> Resumption | None:
        return self.wait_on_board(
            key,
            deadline,
            lambda resumed: self.offer(task_id, flowfile, force=True, resumption=resumed),
        )

    def wait_on_board(
        self, key: str, deadline: datetime | None, release: Callable[[Resumption], None]
    ) -> Resumption | None:
        """Wait on the signal board: the resumption now, or ``release`` called with it later."""
        board = self.runtime.board
        if board is None:
            raise Undeliverable("this runtime has no signal board")
        passed, value = board.wait(
            self.runtime.board_key(key),
            self,
            lambda outcome, value: release(Resumption(outcome, key, value)),
            now=self.runtime.clock.now(),
            deadline=deadline,
        )
        return Resumption("signaled", key, value) if passed else None


class ItemParker(Parker):
    """The parker a task gets in a batch run: a held FlowFile keeps its hop count."""

    def __init__(self, engine: Engine, item: Item) -> None:
        self.engine = engine
        self.item = item

    def park(
        self,
        task_id: str,
        flowfile: FlowFile,
        *,
        signal_id: str | None = None,
        timeout: str | None = None,
        until: str | datetime | None = None,
    ) -> None:
        self.engine.park(task_id, flowfile, signal_id=signal_id, timeout=timeout, until=until)

    def hold(
        self, task_id: str, flowfile: FlowFile, key: str, deadline: datetime | None
    ) -> Resumption | None:
        hops = self.item.hops
        return self.engine.wait_on_board(
            key,
            deadline,
            lambda resumed: self.engine.offer(
                task_id, flowfile, force=True, resumption=resumed, hops=hops
            ),
        )


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
    max_hops: int = DEFAULT_MAX_HOPS,
) -> BatchResult:
    """Run ``flow`` once over ``flowfiles`` (one empty FlowFile by default) to the end.

    Tasks that need a store or a conversation get them from ``store`` and ``scope``;
    durable waits and timers fail (they need a deployed flow to come back to). The queues
    are in memory. A FlowFile about to pass its ``max_hops``-th task raises
    ``HopLimitReached``: the flow would never end.
    """
    if max_hops < 1:
        raise InvalidInput("the hop limit must be at least 1")
    runtime = RuntimeContext(
        flow.name,
        store=store,
        scope=scope,
        clock=clock or (store.clock if store is not None else SystemClock()),
        board=SignalBoard(),
    )
    engine = Engine(flow, runtime, max_hops=max_hops)
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


def fan_out(flowfile: FlowFile, targets: Sequence[str]) -> list[tuple[str, FlowFile]]:
    """A FlowFile sent down several connections is cloned for all but the first."""
    if len(targets) == 1:
        return [(targets[0], flowfile)]
    return [
        (target, flowfile if index == 0 else flowfile.child())
        for index, target in enumerate(targets)
    ]
