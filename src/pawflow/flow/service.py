"""The flow service: runs deployed flows of the store as continuous instances.

``FlowService(store).start()`` registers the store's delivery handler for ``flow:`` targets
and from then on follows the deployments table (deploy, stop, start, redeploy — from any
process) every ``reconcile_interval`` seconds.

Several processes (``pawflow serve`` on one PostgreSQL database, or on one SQLite file) share
the deployments through leases (``store.leases``): a process runs a deployment, and drains its
queues, only while it holds the lease ``flow:<deployment id>``, running out ``lease_ttl``
seconds after its last renewal and renewed every third of that (the rule of every lease,
``pawflow.store.LeaseTerms``); its workers trust it for two thirds of ``lease_ttl`` after a
renewal began, by the monotonic clock, and run nothing more until the next. Each process also keeps
a ``flow-process:<owner>`` lease; it takes no more than its fair share, ceil(deployments /
live processes), and gives up what is above it, so work spreads over the processes. When a
process dies its leases run out and the others take its deployments over (within
``lease_ttl`` plus one reconcile); a resolved continuation waits in the store meanwhile.

Instances of flows that declare ``idle_stop`` are stopped after that long without work —
never while the store still holds work for them: a timer or signal continuation, an injected
FlowFile not yet delivered, a FlowFile in their queues. An injection wakes a deployment
stopped so (``deployments.inject``).
"""

from __future__ import annotations

import heapq
import logging
import math
import os
import secrets
import socket
import threading
import time
from collections.abc import Mapping
from datetime import datetime, timedelta

from pawflow.durations import deadline_after
from pawflow.flow import deployments
from pawflow.flow.board import SignalBoard
from pawflow.flow.deployments import Deployment
from pawflow.flow.executors import TARGET_KIND, ExecutorRegistry, FlowDeliveryHandler, target_of
from pawflow.flow.flowfile import FlowFile
from pawflow.flow.instance import FlowInstance
from pawflow.flow.registry import TaskRegistry
from pawflow.flow.task import FlowScope
from pawflow.loops import Loop
from pawflow.store import Continuation, Hold, LeaseTerms, Store, elapsed

log = logging.getLogger("pawflow.flow.service")

PROCESS_LEASE = "flow-process:"
TICK = 0.25
"""Seconds between passes of the service loop (timers due, heartbeats, reconciles)."""


def new_owner() -> str:
    """This process's name in the leases table: host, process id, and a random part."""
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}"


class FlowService:
    """Runs, in this process, the running deployments whose leases it holds."""

    def __init__(
        self,
        store: Store,
        *,
        registry: TaskRegistry | None = None,
        reconcile_interval: float | None = 1.0,
        workers: int = 1,
        stop_timeout: float = 10.0,
        lease_ttl: float | timedelta | None = None,
        heartbeat: float | None = None,
    ) -> None:
        self.terms = LeaseTerms.of(lease_ttl)
        if heartbeat is None:
            heartbeat = self.terms.renew_every
        if not 0 < heartbeat <= self.terms.renew_every:
            raise ValueError("the heartbeat must be at most a third of the lease's time to live")
        self.store = store
        self.registry = registry
        self.reconcile_interval = reconcile_interval
        self.workers = workers
        self.stop_timeout = stop_timeout
        self.lease_ttl = self.terms.ttl
        self.heartbeat_interval = heartbeat
        self.owner = new_owner()
        self.executors = ExecutorRegistry()
        self.handler = FlowDeliveryHandler(self.executors)
        self.board = SignalBoard()
        self._versions: dict[str, int] = {}
        self._failed: dict[str, int] = {}
        self._deadlines: list[datetime] = []
        self._lock = threading.RLock()
        # Workers report parked timers while reconcile may hold _lock waiting for them.
        self._deadlines_lock = threading.Lock()
        self._loop: Loop | None = None
        self._next_reconcile = 0.0
        self._next_heartbeat = 0.0
        self._deliver_soon = False
        self._started = False

    # -- lifecycle ----------------------------------------------------------------------

    def start(self) -> None:
        with self._lock:
            if self._started:
                return
            self._started = True
            self.store.register_handler(TARGET_KIND, self.handler)
            self.reconcile()
        if self.reconcile_interval is not None:
            self._next_reconcile = time.monotonic() + self.reconcile_interval
            self._next_heartbeat = time.monotonic() + self.heartbeat_interval
            self._loop = Loop("flows", self._pass, interval=min(TICK, self.reconcile_interval))
            self._loop.start()

    def stop(self) -> None:
        """Stop every instance here and give its lease up; queued and parked FlowFiles stay."""
        if self._loop is not None:
            self._loop.stop()
            self._loop = None
        with self._lock:
            if not self._started:
                return
            self._started = False
            self.store.deliveries.unregister(TARGET_KIND)
            for instance_id in self.executors.ids():
                self._stop_instance(instance_id)
            with self.store.unit() as u:
                u.leases.release(PROCESS_LEASE + self.owner, self.owner)

    def __enter__(self) -> FlowService:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- instances ----------------------------------------------------------------------

    def instance(self, deployment_id: str) -> FlowInstance | None:
        return self.executors.get(deployment_id)

    def inject(
        self, deployment_id: str, flowfile: FlowFile, entry_task_id: str | None = None
    ) -> None:
        """Hand a FlowFile to an instance running here (``Undeliverable`` otherwise)."""
        self.executors.inject(deployment_id, flowfile, entry_task_id)

    def reconcile(self) -> None:
        """Bring the instances here in line with the deployments table and the leases."""
        with self._lock:
            if not self._started:
                return
            with self.store.unit() as u:
                u.leases.acquire(PROCESS_LEASE + self.owner, self.owner, self.lease_ttl)
            wanted = {d.id: d for d in deployments.list_deployments(self.store, status="running")}
            for instance_id in self.executors.ids():
                instance = self.executors.get(instance_id)
                found = wanted.get(instance_id)
                if instance is not None and instance.lost:
                    self._stop_instance(instance_id, release=False)
                elif found is None or found.version != self._versions.get(instance_id):
                    self._stop_instance(instance_id)
            share = self._fair_share(len(wanted))
            # Above the fair share (another process came up): give the newest ones up.
            for instance_id in self.executors.ids()[share:]:
                self._stop_instance(instance_id)
            with self.store.unit(write=False) as u:
                holders = {lease.name: lease.owner for lease in u.leases.held("flow:")}
            started = False
            for deployment in wanted.values():
                if len(self.executors.ids()) >= share:
                    break
                if self.executors.get(deployment.id) is not None:
                    continue
                if self._failed.get(deployment.id) == deployment.version:
                    continue  # the same broken version: wait for a new one
                holder = holders.get(target_of(deployment.id))
                if holder is not None and holder != self.owner:
                    continue
                began = elapsed()
                with self.store.unit() as u:
                    taken = u.leases.acquire(target_of(deployment.id), self.owner, self.lease_ttl)
                if taken:
                    started |= self._start_instance(deployment, self._hold(began))
            self._stop_idle(wanted)
            deliver, self._deliver_soon = started or self._deliver_soon, False
        if deliver:
            self.store.deliver_due()

    def heartbeat(self) -> None:
        """Renew this process's leases; an instance whose lease another took stops here."""
        with self._lock:
            if not self._started:
                return
            with self.store.unit() as u:
                u.leases.acquire(PROCESS_LEASE + self.owner, self.owner, self.lease_ttl)
            for instance_id in self.executors.ids():
                instance = self.executors.get(instance_id)
                epoch = None if instance is None else instance.engine.epoch
                began = elapsed()
                with self.store.unit() as u:
                    kept = u.leases.renew(target_of(instance_id), self.owner, self.lease_ttl, epoch)
                if kept:
                    if instance is not None and instance.lease_hold is not None:
                        instance.lease_hold.renewed(began)
                    continue
                if instance is not None and instance.lease_hold is not None:
                    instance.lease_hold.lost()
                log.warning("flow %s moved to another process", instance_id)
                self._stop_instance(instance_id, release=False)

    def _hold(self, began: float) -> Hold | None:
        """How the workers of an instance see its lease, taken at ``began``: trusted for two
        thirds of its time to live after each renewal. Without the service's loop, whoever
        drives :meth:`heartbeat` decides when it is renewed, and the workers do not check."""
        if self.reconcile_interval is None:
            return None
        hold = Hold(self.terms)
        hold.renewed(began)
        return hold

    def _fair_share(self, deployments_count: int) -> int:
        with self.store.unit(write=False) as u:
            live = {lease.owner for lease in u.leases.held(PROCESS_LEASE)} | {self.owner}
        return math.ceil(deployments_count / len(live))

    def _start_instance(self, deployment: Deployment, hold: Hold | None) -> bool:
        try:
            flow = deployment.load(self.registry)
        except Exception as exc:
            log.error("cannot start flow deployment %s: %s", deployment.id, exc)
            self._failed[deployment.id] = deployment.version
            with self.store.unit() as u:
                deployments.record_error(u, deployment.id, str(exc))
            with self.store.unit() as u:
                u.leases.release(target_of(deployment.id), self.owner)
            return False
        instance = FlowInstance(
            deployment.id,
            flow,
            store=self.store,
            scope=FlowScope(deployment.user, deployment.conversation_id),
            owner=self.owner,
            board=self.board,
            workers=self.workers,
            on_park=self._on_park,
            hold=hold,
        )
        try:
            instance.start()
        except Exception as exc:  # the store failed, or another process took it meanwhile
            log.warning("flow deployment %s did not start here: %s", deployment.id, exc)
            with self.store.unit() as u:
                u.leases.release(target_of(deployment.id), self.owner)
            return False
        self.executors.add(instance)
        self._versions[deployment.id] = deployment.version
        self._failed.pop(deployment.id, None)
        log.info("flow %s (%s) running", deployment.name, deployment.id)
        return True

    def _stop_instance(self, instance_id: str, *, release: bool = True) -> None:
        # Out of the registry first: from now on its deliveries wait in the store.
        instance = self.executors.remove(instance_id)
        self._versions.pop(instance_id, None)
        if instance is not None:
            instance.stop(self.stop_timeout)
            log.info("flow %s (%s) stopped here", instance.flow.name, instance_id)
        if release:
            with self.store.unit() as u:
                u.leases.release(target_of(instance_id), self.owner)

    def _stop_idle(self, wanted: Mapping[str, Deployment]) -> None:
        now = self.store.now()
        for instance_id in self.executors.ids():
            instance = self.executors.get(instance_id)
            if instance is None or instance.flow.idle_stop is None:
                continue
            limit = deadline_after(instance.engine.last_active, instance.flow.idle_stop)
            if limit is None or now < limit or not instance.close_if_idle():
                continue
            # It takes no new work now; what arrives meanwhile waits in the store, where a
            # parked wait or timer, or a FlowFile not yet delivered or run, keeps it running.
            stopped = False
            try:
                stopped = deployments.stop_if_idle(self.store, instance_id)
            finally:
                if not stopped:
                    instance.reopen()
            if stopped:
                self._stop_instance(instance_id)
            else:
                self._deliver_soon = True  # what was refused meanwhile

    # -- timers -------------------------------------------------------------------------

    def _on_park(self, continuation: Continuation) -> None:
        if continuation.deadline is None or continuation.status != "parked":
            return
        with self._deadlines_lock:
            heapq.heappush(self._deadlines, continuation.deadline)

    def _release_due_timers(self) -> None:
        """Release what is due now rather than at the next sweep, so timers are on time."""
        now = self.store.now()
        with self._deadlines_lock:
            if not self._deadlines or self._deadlines[0] > now:
                return
            while self._deadlines and self._deadlines[0] <= now:
                heapq.heappop(self._deadlines)
        with self.store.unit() as u:
            u.continuations.release_due(500)
        self.store.deliver_due()

    def _pass(self) -> None:
        self._release_due_timers()
        now = time.monotonic()
        if now >= self._next_heartbeat:
            self._next_heartbeat = now + self.heartbeat_interval
            self.heartbeat()
        if self.reconcile_interval is not None and now >= self._next_reconcile:
            self._next_reconcile = now + self.reconcile_interval
            self.reconcile()
