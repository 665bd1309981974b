"""``TurnRunner``: takes turns off the durable queue and runs them, a few at a time.

A pass claims the due turns of the agents this process owns (and the turns of no agent)
while worker slots are free, and hands each to a worker; a conversation whose lock is held
here is passed over until its turn in progress ends. :meth:`renew` is the heartbeat of the
turns in progress: it extends their leases and records where each one is (the stage
``pawflow session inspect`` shows). A turn's lease follows the rule of every lease
(``pawflow.store.LeaseTerms``): :meth:`confirm` says, by this process's monotonic clock and
without a statement, whether it was renewed recently enough to go on — and renews it there
when it was not, so that a pause costs a statement rather than the turn — which a turn asks
before each model call and tool call. :meth:`run_due` is the same work done in the calling
thread, for a service started without threads (which checks nothing: no heartbeat runs).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import timedelta

from pawflow.loops import Loop
from pawflow.store import Hold, LeaseTerms, QueuedTurn, Store, TurnKey, elapsed

log = logging.getLogger("pawflow.chat.runner")

BATCH = 20


@dataclass
class _Running:
    turn: QueuedTurn
    key: TurnKey
    hold: Hold
    stage: str | None = None


class TurnRunner:
    def __init__(
        self,
        store: Store,
        run: Callable[[QueuedTurn], object],
        *,
        owner: str,
        lease: timedelta,
        agents: Callable[[], Sequence[str] | None],
        lock_for: Callable[[str], threading.Lock],
        workers: int = 4,
        interval: float | None = None,
    ) -> None:
        self.store = store
        self.owner = owner
        self.lease = lease
        self.terms = LeaseTerms(lease)
        self.lease_clock: Callable[[], float] = elapsed
        """What the turns' leases are measured by (:func:`elapsed`; a test may drive its own)."""
        self.workers = max(1, workers)
        self._run = run
        self._agents = agents
        self._lock_for = lock_for
        self._running: dict[str, _Running] = {}
        self._guard = threading.Lock()
        self._executor: ThreadPoolExecutor | None = None
        self.loop = None if interval is None else Loop("turns", self.step, interval=interval)

    # -- lifecycle --------------------------------------------------------------------------

    def start(self) -> None:
        if self.loop is None or self.loop.running:
            return
        self._executor = ThreadPoolExecutor(self.workers, thread_name_prefix="pawflow-turn")
        self.loop.start()

    def stop(self) -> None:
        if self.loop is not None:
            self.loop.stop()
        executor, self._executor = self._executor, None
        if executor is not None:
            # Turns not started stay queued; a turn in progress ends or is taken over.
            executor.shutdown(wait=True, cancel_futures=True)

    def wake(self) -> None:
        if self.loop is not None:
            self.loop.wake()

    # -- where turns are --------------------------------------------------------------------

    def set_stage(self, turn_id: str, stage: str) -> None:
        with self._guard:
            running = self._running.get(turn_id)
            if running is not None:
                running.stage = stage

    def running(self) -> list[QueuedTurn]:
        with self._guard:
            return [r.turn for r in self._running.values()]

    def renew(self) -> None:
        """The heartbeat of the turns in progress here."""
        with self._guard:
            beats = [(r.key, r.stage) for r in self._running.values()]
        if not beats:
            return
        began = self.lease_clock()
        lost = []
        with self.store.unit() as u:  # every heartbeat in one transaction
            for key, stage in beats:
                if not u.turns.renew(key, self.lease, stage):
                    lost.append(key)
        for key in lost:
            log.warning("turn %s was taken over by another process", key.turn_id)
        renewed = {key for key, _ in beats} - set(lost)
        with self._guard:
            for running in self._running.values():
                if running.key in renewed:
                    running.hold.renewed(began)

    def confirm(self, key: TurnKey, stage: str | None = None) -> bool:
        """Whether a turn running here may go on: its lease was renewed recently enough, or
        is renewed now; False once another process has it (always True without a
        heartbeat: a service started without threads)."""
        if self.loop is None:
            return True
        with self._guard:
            running = self._running.get(key.turn_id)
        if running is None:
            return True
        return running.hold.confirm(lambda: self._renew(key, stage))

    def _renew(self, key: TurnKey, stage: str | None) -> bool:
        """Renew one turn's lease now; False once it is no longer ours."""
        with self.store.unit() as u:
            return u.turns.renew(key, self.lease, stage)

    # -- claiming and running ---------------------------------------------------------------

    def claim(self, turn_id: str) -> QueuedTurn | None:
        hold = Hold(self.terms, clock=self.lease_clock)
        began = hold.begin()
        with self.store.unit() as u:
            claimed = u.turns.claim(turn_id, self.owner, self.lease)
        if claimed is not None:
            hold.renewed(began)
            with self._guard:
                self._running[claimed.id] = _Running(claimed, claimed.key, hold)
        return claimed

    def run_claimed(self, turn: QueuedTurn) -> object:
        try:
            return self._run(turn)
        finally:
            with self._guard:
                self._running.pop(turn.id, None)

    def _take(self, turn: QueuedTurn) -> tuple[QueuedTurn, threading.Lock] | None:
        lock = self._lock_for(turn.conversation_id)
        if not lock.acquire(blocking=False):
            return None  # a turn of this conversation is in progress here
        try:
            claimed = self.claim(turn.id)
        except Exception:
            lock.release()
            raise
        if claimed is None:
            lock.release()
            return None
        return claimed, lock

    def _work(self, turn: QueuedTurn, lock: threading.Lock) -> None:
        try:
            self.run_claimed(turn)
        except Exception:  # the turn's lease runs out and it is retried
            log.exception("turn %s failed", turn.id)
        finally:
            lock.release()
            self.wake()  # a slot is free; the conversation may have more

    def step(self) -> int:
        """One pass: fill the free worker slots with due turns; returns how many started."""
        executor = self._executor
        if executor is None:
            return 0
        with self._guard:
            free = self.workers - len(self._running)
        started = 0
        if free <= 0:
            return 0
        for turn in self._due(BATCH):
            if started >= free:
                break
            taken = self._take(turn)
            if taken is None:
                continue
            try:
                executor.submit(self._work, *taken)
            except RuntimeError:  # shutting down: its lease runs out and another takes it
                taken[1].release()
                return started
            started += 1
        return started

    def _due(self, limit: int) -> list[QueuedTurn]:
        """The turns ready to run for this process's agents (and turns of no agent)."""
        agents = self._agents()
        with self.store.unit(write=False) as u:
            return u.turns.due(agents, limit)

    def run_due(self, limit: int = BATCH) -> list[QueuedTurn]:
        """Run the due turns in this thread, one after another; returns those that ran."""
        ran: list[QueuedTurn] = []
        for turn in self._due(limit):
            taken = self._take(turn)
            if taken is None:
                continue
            claimed, lock = taken
            try:
                if self.run_claimed(claimed):
                    ran.append(claimed)
            finally:
                lock.release()
        return ran
