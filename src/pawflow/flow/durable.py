"""The engine of a deployed flow, on durable queues: every FlowFile between two tasks is a row.

A FlowFile handed to a task is a row in the store (``store.queues``) until that task's
outcome is recorded. Workers take a batch of FlowFiles queued for one task (one transaction
marks them running and counts the attempt), run the task on each outside any transaction,
then record the outcomes in one transaction: the taken rows go, what the tasks emitted is
queued for the next tasks, and what they parked becomes a continuation. That transaction
also takes the worker's next batch, if one waits (one commit for both; the next batch is
still taken just before it runs, so no more is running at a crash). A task declared with
``side_effects`` (or ``batch: N``) takes one FlowFile (at most N) at a time, so a crash runs
it again on that many at most. A crash at any point leaves every FlowFile at the last task
boundary it passed: the new owner queues the rows that were running again, and the task
that was running at the crash runs again on them (at-least-once, with a higher
``ctx.attempt``). A resumed continuation joins the queue in the transaction that consumes
it (exactly once).

The rows are mirrored in memory, so scheduling and backpressure cost no query: only the
process holding the deployment's lease runs it, and every transaction here checks that lease
(its owner, and its epoch: held without a break since this engine started). Before each task
a worker also checks, by this process's monotonic clock, that the lease was renewed recently
enough to trust (``pawflow.store.Hold``, no statement): a process that was frozen or cut off
past that runs nothing more of its batch — the FlowFiles left wait, taken, until a renewal
succeeds, or go with the lease to the process that took it over, which runs them.
"""

from __future__ import annotations

import logging
import time
from collections import Counter, deque
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from pawflow.errors import InvalidInput, LeaseLost, QueueFull, Undeliverable
from pawflow.flow.definition import FlowDefinition
from pawflow.flow.engine import PARK_MODE_RESUME, Ending, Engine, Item, fan_out
from pawflow.flow.flowfile import FlowFile
from pawflow.flow.outcomes import Outcome, Park, decode, encode
from pawflow.flow.task import Emit, Resumption, RuntimeContext
from pawflow.ids import new_id
from pawflow.loops import Failures
from pawflow.store import NewQueueRow as NewRow
from pawflow.store import Unit

if TYPE_CHECKING:
    from pawflow.store import Continuation, Hold, Store
    from pawflow.store import Transaction as Tx

log = logging.getLogger("pawflow.flow")

DEFAULT_BATCH = 256
RETRY_AFTER = 1.0
"""Seconds to wait before taking work again after the store failed."""


Going = tuple[str, FlowFile, int]
"""Where a FlowFile goes on: its next task, itself, and the tasks it will have passed."""


def _row_for(task_id: str, flowfile: FlowFile, hops: int) -> tuple[NewRow, Going]:
    """The row queueing ``flowfile`` for ``task_id``, and where it goes on."""
    return NewRow(task_id, flowfile.id, encode(flowfile, None), hops), (task_id, flowfile, hops)


def _taken(items: list[Item]) -> None:
    """``items`` were taken in a transaction that committed: one more attempt each."""
    for item in items:
        item.attempts += 1
        item.taken = True


class DurableEngine(Engine):
    """Queues mirrored by rows in the store, for the one process holding the lease."""

    def __init__(
        self,
        flow: FlowDefinition,
        runtime: RuntimeContext,
        *,
        store: Store,
        owner: str,
        batch: int = DEFAULT_BATCH,
        keep_endings: int | None = None,
        on_park: Callable[[Continuation], None] | None = None,
        on_room: Callable[[str], bool] | None = None,
        hold: Hold | None = None,
    ) -> None:
        super().__init__(flow, runtime, keep_endings=keep_endings)
        self.store = store
        self.target = runtime.target
        self.lease = runtime.target
        self.owner = owner
        # Rows this engine has running carry this token: a successor in the same process
        # (a redeploy) requeues them, and this engine can then no longer finish them.
        self.token = f"{owner}/{new_id()}"
        self.epoch: int | None = None
        """When the lease changed hands last, as :meth:`load` found it: the fence of every
        later transaction (a lease that went elsewhere and came back is not this engine's)."""
        self.lease_hold = hold
        """The lease as this process's monotonic clock sees it; None: not checked."""
        self._waiting_for_lease = False
        self.batch = max(1, batch)
        self.lost = False
        self.draining = False
        self.closed = False
        """Refusing new work: it is being stopped for idleness (:meth:`close_if_idle`)."""
        self._on_park = on_park
        self._on_room = on_room
        self._held_back = False
        """A FlowFile was refused for want of room: offer the target's waiting ones again
        once a batch has made room (:meth:`process_batch`)."""
        self._ready: deque[tuple[str, Item]] = deque()
        self._pending: Counter[str] = Counter()
        self._retry_at = 0.0
        self._failures = Failures(f"{self.target}: writing to the store", log)
        """Failed takes and records: logged once with the traceback, then counted."""

    # -- arriving -----------------------------------------------------------------------

    def load(self) -> int:
        """Start from the store: what was running at a crash is queued again. Returns the count."""
        with self.store.unit() as u:
            self.epoch = u.queues.fence(self.lease, self.owner)
            rows = u.queues.recover(self.target)
        unknown: Counter[str] = Counter()
        loaded = 0
        with self._cond:
            for row in rows:
                if row.task not in self._queues:
                    unknown[row.task] += 1
                    continue
                try:
                    flowfile, resumption = decode(row.payload)
                except InvalidInput as exc:
                    log.error("flow %s: queue row %s is unreadable: %s", self.target, row.id, exc)
                    continue
                item = Item(flowfile, resumption, row.hops, row.id, row.attempts)
                self._queues[row.task].append(item)
                loaded += 1
            self._cond.notify_all()
        for task_id, count in unknown.items():
            log.warning(
                "flow %s: %d FlowFile(s) wait for task %r, which this version does not have;"
                " they stay in the store",
                self.target,
                count,
                task_id,
            )
        return loaded

    def inject(self, task_id: str, flowfiles: Sequence[FlowFile]) -> None:
        """Queue ``flowfiles`` for ``task_id`` in one transaction.

        ``Undeliverable`` when they do not all fit (backpressure) or another process runs
        the deployment now.
        """
        if task_id not in self._queues:
            raise InvalidInput(f"flow {self.flow.name!r} has no task {task_id!r}")
        count = len(flowfiles)
        self._reserve(task_id, count)
        try:
            with self.store.unit() as u:
                u.queues.fence(self.lease, self.owner, self.epoch)
                rows = [NewRow(task_id, f.id, encode(f, None)) for f in flowfiles]
                ids = u.queues.enqueue(self.target, rows)
        except LeaseLost as exc:
            self._unreserve(task_id, count)
            self.lose()
            raise Undeliverable(str(exc)) from exc
        except BaseException:
            self._unreserve(task_id, count)
            raise
        with self._cond:
            self._pending[task_id] -= count
            if not self.lost:
                queue = self._queues[task_id]
                queue.extend(Item(f, None, 0, i) for f, i in zip(flowfiles, ids, strict=True))
                self._cond.notify_all()

    def accept(self, continuation: Continuation, tx: Tx) -> None:
        """Queue a resolved continuation's FlowFile inside the transaction that consumes it."""
        u = Unit(tx, self.store.now)
        flowfile, header = FlowFile.decode(continuation.payload)
        task_id = header.get("task") or self.flow.start
        if not isinstance(task_id, str) or task_id not in self._queues:
            raise Undeliverable(f"flow {self.flow.name!r} has no task {task_id!r}")
        resumption = None
        if header.get("mode", PARK_MODE_RESUME) == PARK_MODE_RESUME:
            resumption = Resumption(
                continuation.outcome or "signaled", continuation.signal_id, continuation.value
            )
        hops = _whole(header.get("hops"))
        self._reserve(task_id)
        try:
            u.queues.fence(self.lease, self.owner, self.epoch)
            u.queues.unpark(continuation.id)
            [row_id] = u.queues.enqueue(
                self.target,
                [NewRow(task_id, flowfile.id, encode(flowfile, resumption), hops)],
            )
        except LeaseLost as exc:
            self._unreserve(task_id)
            self.lose()
            raise Undeliverable(str(exc)) from exc
        except BaseException:
            self._unreserve(task_id)
            raise
        item = Item(flowfile, resumption, hops, row_id)
        tx.after_commit(lambda: self._arrive(task_id, item))

    def release_held(self, task_id: str, item: Item) -> None:
        with self._cond:
            if not self.lost:
                self._ready.append((task_id, item))
                self._cond.notify()

    def close_if_idle(self) -> bool:
        """Refuse new work from now on, if none is here now; False (still open) if some is.

        What is refused meanwhile waits in the store (a continuation delivered later), where
        an idle stop looks for it.
        """
        with self._cond:
            if self.lost or not self._is_idle():
                return False
            self.closed = True
            return True

    def reopen(self) -> None:
        with self._cond:
            self.closed = False

    def _reserve(self, task_id: str, count: int = 1) -> None:
        with self._cond:
            if self.lost:
                raise Undeliverable(f"{self.target} runs in another process now")
            if self.closed:
                raise Undeliverable(f"{self.target} is stopping")
            if len(self._queues[task_id]) + self._pending[task_id] + count > self.capacity:
                self._held_back = True
                raise QueueFull(
                    f"backpressure: the queue of task {task_id!r} is full ({self.capacity})"
                )
            self._pending[task_id] += count

    def _unreserve(self, task_id: str, count: int = 1) -> None:
        with self._cond:
            self._pending[task_id] -= count

    def _arrive(self, task_id: str, item: Item) -> None:
        with self._cond:
            self._pending[task_id] -= 1
            if not self.lost:
                self._queues[task_id].append(item)
                self._cond.notify()

    # -- taking and recording ---------------------------------------------------------------

    def take_batch(self, timeout: float = 0.0) -> tuple[str, list[Item]] | None:
        """The next task and the FlowFiles queued for it; waits up to ``timeout`` for some."""
        with self._cond:
            picked = self._pick_batch()
            if picked is None and timeout > 0:
                self._cond.wait(timeout)
                picked = self._pick_batch()
            if picked is not None:
                self._in_flight += len(picked[1])
            return picked

    def _pick_batch(self) -> tuple[str, list[Item]] | None:
        if self.lost or not self._trusted():
            return None
        if self._ready:
            held_task, item = self._ready.popleft()
            return held_task, [item]
        if self.draining or time.monotonic() < self._retry_at:
            return None
        task_id = self._pick()
        if task_id is None:
            return None
        queue = self._queues[task_id]
        rooms = [self.capacity - len(self._queues[t]) for t in self._feeds[task_id]]
        limit = self.flow.batch_limit(task_id) or self.batch
        size = max(1, min([self.batch, limit, len(queue), *rooms]))
        return task_id, [queue.popleft() for _ in range(size)]

    def process_batch(self, task_id: str, items: list[Item]) -> tuple[str, list[Item]] | None:
        """Run ``task_id`` on ``items`` and record the outcomes in one transaction.

        That transaction also takes this worker's next batch, if one is queued (one commit,
        one fence, for both): returned, taken, for the worker to run next (:meth:`_record`).
        """
        following = None
        try:
            if self._take(task_id, items):
                results = []
                confirmed = True
                with self.deployment_logged():
                    for index, item in enumerate(items):
                        if not self._confirmed():  # frozen or cut off: the lease may be elsewhere
                            self._wait_for_lease(task_id, items[index:])
                            confirmed = False
                            break
                        outcome = Outcome(self, item)
                        results.append((item, outcome, self.run_logged(task_id, item, outcome)))
                if results:
                    following = self._record(task_id, results, take_next=confirmed)
        finally:
            with self._cond:
                self._in_flight -= len(items)
                self.processed += len(items)
                self.last_active = self.runtime.clock.now()
                self._cond.notify_all()
                offer, self._held_back = self._held_back and not self.lost, False
            if offer and self._on_room is not None and self._on_room(self.target):
                with self._cond:  # all it asked for came: more may wait
                    self._held_back = True
        return following

    def _take(self, task_id: str, items: list[Item]) -> bool:
        fresh = [item for item in items if not item.taken]
        if not fresh:
            return True
        try:
            with self.store.unit() as u:
                u.queues.fence(self.lease, self.owner, self.epoch)
                self._take_rows(u, fresh)
        except LeaseLost:
            self.lose()
            return False
        except Exception as exc:
            self._failures.failed(exc)
            self._put_back(task_id, items)
            return False
        self._failures.succeeded()
        _taken(fresh)
        return True

    def _take_rows(self, u: Unit, fresh: list[Item]) -> None:
        """Mark the rows of ``fresh`` running for this worker, in ``u``'s transaction (once it
        commits: :func:`_taken`)."""
        ids = [item.row_id for item in fresh if item.row_id is not None]
        if u.queues.take(ids, self.token) != len(fresh):
            raise LeaseLost(f"rows of {self.target} were taken over")

    def _record(
        self, task_id: str, results: list[tuple[Item, Outcome, list[Emit]]], *, take_next: bool
    ) -> tuple[str, list[Item]] | None:
        """Record a batch's outcomes and, in the same transaction, take the next batch (picked
        now, as :meth:`take_batch` would, so none of what this batch emits is in it); returns
        that batch, taken. A failed transaction puts both batches back, neither recorded nor
        taken; a lost lease drops both."""
        endings: list[Ending] = []
        # Per FlowFile taken: its rows to queue (each with where it goes on), then its parks.
        # The rows are made, and their FlowFiles encoded, before the transaction begins.
        plans: list[tuple[Item, bool, list[tuple[NewRow, Going | None]], list[Park]]] = []
        routes: dict[str, tuple[str, ...]] = {}  # each relationship's targets, looked up once
        for item, outcome, emitted in results:
            rows: list[tuple[NewRow, Going | None]] = []
            for relationship, flowfile in emitted:
                targets = routes.get(relationship)
                if targets is None:
                    targets = routes[relationship] = self.flow.targets(task_id, relationship)
                if not targets:
                    endings.append(Ending(flowfile, task_id, relationship))
                elif len(targets) == 1:  # fan_out's own case, without its call and list
                    rows.append(_row_for(targets[0], flowfile, item.hops + 1))
                else:
                    rows += [_row_for(t, c, item.hops + 1) for t, c in fan_out(flowfile, targets)]
            plans.append((item, outcome.held, rows, outcome.parks))
        now = self.store.now()
        parked: list[Continuation] = []
        queued: list[tuple[int, Going]] = []
        following = self.take_batch() if take_next else None
        fresh = [] if following is None else [item for item in following[1] if not item.taken]
        try:
            with self.store.unit() as u:
                u.queues.fence(self.lease, self.owner, self.epoch)
                moves: list[tuple[int, NewRow]] = []
                inserts: list[tuple[NewRow, Going | None]] = []
                finished: list[int] = []
                for item, held, rows, parks in plans:
                    for park in parks:
                        parked.append(self._park(u.tx, park, now))
                        place = NewRow(
                            park.task_id, park.flowfile.id, b"", park.hops, "parked", parked[-1].id
                        )
                        rows.append((place, None))
                    if held or item.row_id is None:
                        inserts += rows  # a held FlowFile keeps its row running
                    elif rows:
                        row, going = rows[0]
                        moves.append((item.row_id, row))
                        if going is not None:
                            queued.append((item.row_id, going))
                        inserts += rows[1:]
                    else:
                        finished.append(item.row_id)
                done = u.queues.move(moves, self.token) + u.queues.finish(finished, self.token)
                if done != len(moves) + len(finished):
                    raise LeaseLost(f"rows of {self.target} were taken over")
                ids = u.queues.enqueue(self.target, [row for row, _ in inserts])
                queued += [
                    (row_id, next_task)
                    for row_id, (_, next_task) in zip(ids, inserts, strict=True)
                    if next_task is not None
                ]
                if fresh:
                    self._take_rows(u, fresh)
        except LeaseLost:
            self.lose()
            self._drop(following)
            return None
        except Exception as exc:  # it runs again
            self._failures.failed(exc)
            if following is not None:
                self._put_back(*following)
                self._drop(following)
            self._put_back(task_id, [item for item, held, _, _ in plans if not held])
            return None
        self._failures.succeeded()
        _taken(fresh)
        with self._cond:
            if not self.lost:
                for row_id, (target, flowfile, hops) in queued:
                    self._queues[target].append(Item(flowfile, None, hops, row_id))
            self.parked += len(parked)
            self._cond.notify_all()
        self.record_endings(endings)
        if self._on_park is not None:
            for continuation in parked:
                self._on_park(continuation)
        if self.lost:  # meanwhile: the next batch is the new owner's
            self._drop(following)
            return None
        return following

    def _drop(self, batch: tuple[str, list[Item]] | None) -> None:
        """A batch taken with :meth:`take_batch` that will not run (now): no longer in flight."""
        if batch is not None:
            with self._cond:
                self._in_flight -= len(batch[1])
                self._cond.notify_all()

    def _park(self, tx: Tx, park: Park, now: datetime) -> Continuation:
        u = Unit(tx, now)
        return u.continuations.park(
            self.target,
            payload=park.payload,
            payload_cap=self.store.payload_cap,
            signal_id=park.signal_id,
            deadline=park.deadline,
        )

    def _trusted(self) -> bool:
        """The lease was renewed recently enough to work under (no statement: the time
        since the last renewal began, by this process's monotonic clock)."""
        hold = self.lease_hold
        if hold is None or hold.valid:
            if self._waiting_for_lease:
                self._waiting_for_lease = False
                log.info("flow %s: its lease was renewed; it runs on", self.target)
            return True
        return False

    def _confirmed(self) -> bool:
        """Before a task: the lease is trusted, or renewed now (a statement only after a
        pause past two thirds of its time to live), since this engine's epoch."""
        hold = self.lease_hold
        if hold is None:
            return True
        return self._trusted() or hold.confirm(lambda: self._renew_lease(hold.terms.ttl))

    def _renew_lease(self, ttl: timedelta) -> bool:
        """Renew the lease this engine runs under, if held without a break since its epoch."""
        with self.store.unit() as u:
            return u.leases.renew(self.lease, self.owner, ttl, self.epoch)

    def _wait_for_lease(self, task_id: str, items: list[Item]) -> None:
        """Keep the rest of a batch, taken, until the lease is renewed (or is lost, and
        another process runs them)."""
        age = None if self.lease_hold is None else self.lease_hold.age
        if age is None:
            log.warning(
                "flow %s: another process holds its lease now; %d FlowFile(s) of task %s"
                " are left to it",
                self.target,
                len(items),
                task_id,
            )
        else:
            log.warning(
                "flow %s: its lease was last renewed %.1f s ago and could not be renewed now;"
                " %d FlowFile(s) of task %s wait until it is",
                self.target,
                age,
                len(items),
                task_id,
            )
        with self._cond:
            self._waiting_for_lease = True
            for item in reversed(items):
                self._queues[task_id].appendleft(item)

    def _put_back(self, task_id: str, items: list[Item]) -> None:
        """Queue again what could not be taken or recorded; it runs again after a pause."""
        with self._cond:
            self._retry_at = time.monotonic() + RETRY_AFTER
            for item in reversed(items):
                item.taken = False
                self._queues[task_id].appendleft(item)

    def lose(self) -> None:
        """Another process owns the deployment now: forget everything, take nothing more."""
        with self._cond:
            if self.lost:
                return
            self.lost = True
            for queue in self._queues.values():
                queue.clear()
            self._ready.clear()
            self._cond.notify_all()
        log.warning("flow %s runs in another process now; it stops here", self.target)

    # -- state --------------------------------------------------------------------------

    def _is_idle(self) -> bool:
        return super()._is_idle() and not self._ready and not any(self._pending.values())

    def settled(self, timeout: float) -> bool:
        """Wait until no batch runs and no released FlowFile waits (what a stop finishes)."""
        with self._cond:
            return self._cond.wait_for(lambda: self._in_flight == 0 and not self._ready, timeout)


def _whole(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0
