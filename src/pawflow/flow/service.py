"""The flow service: runs every deployed flow of the store as a continuous instance.

``FlowService(store).start()`` registers the store's delivery handler for ``flow:`` targets,
starts an instance for each running deployment, and from then on follows the deployments
table (deploy, stop, start, redeploy — from any process) every ``reconcile_interval``
seconds. A resolved continuation whose instance is not running stays in the store; when the
instance starts, ``store.deliver_due()`` hands it over.

Instances of flows that declare ``idle_stop`` are stopped after that long without work —
never while the store still holds a timer or signal continuation for them.
"""

from __future__ import annotations

import heapq
import logging
import threading
import time
from collections.abc import Mapping
from datetime import datetime

from pawflow.durations import deadline_after
from pawflow.flow import deployments
from pawflow.flow.board import SignalBoard
from pawflow.flow.deployments import Deployment
from pawflow.flow.executors import TARGET_KIND, ExecutorRegistry, FlowDeliveryHandler
from pawflow.flow.flowfile import FlowFile
from pawflow.flow.registry import TaskRegistry
from pawflow.flow.runtime import FlowInstance
from pawflow.flow.task import FlowScope
from pawflow.store import Store
from pawflow.store import continuations as cont
from pawflow.store.continuations import Continuation

log = logging.getLogger("pawflow.flow.service")


class FlowService:
    """Runs the store's running deployments in this process."""

    def __init__(
        self,
        store: Store,
        *,
        registry: TaskRegistry | None = None,
        reconcile_interval: float | None = 1.0,
        workers: int = 1,
        stop_timeout: float = 10.0,
    ) -> None:
        self.store = store
        self.registry = registry
        self.reconcile_interval = reconcile_interval
        self.workers = workers
        self.stop_timeout = stop_timeout
        self.executors = ExecutorRegistry()
        self.handler = FlowDeliveryHandler(self.executors)
        self.board = SignalBoard()
        self._versions: dict[str, int] = {}
        self._failed: dict[str, int] = {}
        self._deadlines: list[datetime] = []
        self._lock = threading.RLock()
        # Workers report parked timers while reconcile may hold _lock waiting for them.
        self._deadlines_lock = threading.Lock()
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._started = False

    # -- lifecycle ----------------------------------------------------------------------

    def start(self) -> None:
        with self._lock:
            if self._started:
                return
            self._started = True
            self._stopping.clear()
            self.store.register_handler(TARGET_KIND, self.handler)
            self.reconcile()
        if self.reconcile_interval is not None:
            self._thread = threading.Thread(target=self._run, name="pawflow-flows", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        """Stop every instance here (each finishes what it holds); parked FlowFiles stay."""
        self._stopping.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=30)
            self._thread = None
        with self._lock:
            if not self._started:
                return
            self._started = False
            self.store.deliveries.unregister(TARGET_KIND)
            for instance_id in self.executors.ids():
                self._stop_instance(instance_id)

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
        """Bring the instances here in line with the deployments table."""
        with self._lock:
            if not self._started:
                return
            wanted = {d.id: d for d in deployments.list_deployments(self.store, status="running")}
            for instance_id in self.executors.ids():
                found = wanted.get(instance_id)
                if found is None or found.version != self._versions.get(instance_id):
                    self._stop_instance(instance_id)
            started = False
            for deployment in wanted.values():
                if self.executors.get(deployment.id) is None:
                    if self._failed.get(deployment.id) == deployment.version:
                        continue  # the same broken version: wait for a new one
                    started |= self._start_instance(deployment)
            self._stop_idle(wanted)
        if started:
            self.store.deliver_due()

    def _start_instance(self, deployment: Deployment) -> bool:
        try:
            flow = deployment.load(self.registry)
        except Exception as exc:
            log.error("cannot start flow deployment %s: %s", deployment.id, exc)
            self._failed[deployment.id] = deployment.version
            with self.store.transaction() as tx:
                deployments.record_error(tx, deployment.id, str(exc))
            return False
        instance = FlowInstance(
            deployment.id,
            flow,
            store=self.store,
            scope=FlowScope(deployment.user, deployment.conversation_id),
            board=self.board,
            workers=self.workers,
            on_park=self._on_park,
        )
        instance.start()
        self.executors.add(instance)
        self._versions[deployment.id] = deployment.version
        self._failed.pop(deployment.id, None)
        log.info("flow %s (%s) running", deployment.name, deployment.id)
        return True

    def _stop_instance(self, instance_id: str) -> None:
        # Out of the registry first: from now on its deliveries wait in the store.
        instance = self.executors.remove(instance_id)
        self._versions.pop(instance_id, None)
        if instance is not None:
            instance.stop(self.stop_timeout)
            log.info("flow %s (%s) stopped", instance.flow.name, instance_id)

    def _stop_idle(self, wanted: Mapping[str, Deployment]) -> None:
        now = self.store.now()
        for instance_id in self.executors.ids():
            instance = self.executors.get(instance_id)
            if instance is None or instance.flow.idle_stop is None:
                continue
            limit = deadline_after(instance.engine.last_active, instance.flow.idle_stop)
            if limit is None or now < limit or not instance.idle:
                continue
            # A parked wait or timer, or a resolved one not yet taken, keeps it running.
            if self.store.pending_continuations(instance.target):
                continue
            deployments.change_status(self.store, instance_id, "stopped", reason="idle")
            self._stop_instance(instance_id)

    # -- timers -------------------------------------------------------------------------

    def _on_park(self, continuation: Continuation) -> None:
        if continuation.deadline is None or continuation.status != "parked":
            return
        with self._deadlines_lock:
            heapq.heappush(self._deadlines, continuation.deadline)
        self._wake.set()

    def _release_due_timers(self) -> None:
        """Release what is due now rather than at the next sweep, so timers are on time."""
        now = self.store.now()
        with self._deadlines_lock:
            if not self._deadlines or self._deadlines[0] > now:
                return
            while self._deadlines and self._deadlines[0] <= now:
                heapq.heappop(self._deadlines)
        with self.store.transaction() as tx:
            cont.release_due(tx, now, 500)
        self.store.deliver_due()

    def _seconds_to_next_deadline(self) -> float | None:
        with self._deadlines_lock:
            if not self._deadlines:
                return None
            return max((self._deadlines[0] - self.store.now()).total_seconds(), 0.0)

    def _run(self) -> None:
        interval = self.reconcile_interval or 1.0
        next_reconcile = time.monotonic() + interval
        while not self._stopping.is_set():
            wait = max(next_reconcile - time.monotonic(), 0.0)
            until_timer = self._seconds_to_next_deadline()
            if until_timer is not None:
                wait = min(wait, until_timer)
            self._wake.wait(wait)
            self._wake.clear()
            if self._stopping.is_set():
                return
            try:
                self._release_due_timers()
                if time.monotonic() >= next_reconcile:
                    next_reconcile = time.monotonic() + interval
                    self.reconcile()
            except Exception:  # a failed pass must not end the loop; the next one retries
                log.exception("flow service pass failed")
