"""Which flow instances run in this process, and the store's delivery handler for them.

Continuations parked by a flow target ``flow:<instance id>``. The handler accepts a target
only while that instance runs here; otherwise the continuation stays resolved in the store
and is delivered once the instance runs again (in this process or another).
"""

from __future__ import annotations

import threading

from pawflow.errors import Undeliverable
from pawflow.flow.flowfile import FlowFile
from pawflow.flow.instance import FlowInstance
from pawflow.store import Delivery

TARGET_KIND = "flow"


def target_of(instance_id: str) -> str:
    return f"{TARGET_KIND}:{instance_id}"


class ExecutorRegistry:
    """Running flow instances by id."""

    def __init__(self) -> None:
        self._instances: dict[str, FlowInstance] = {}
        self._lock = threading.Lock()

    def add(self, instance: FlowInstance) -> None:
        with self._lock:
            self._instances[instance.id] = instance

    def remove(self, instance_id: str) -> FlowInstance | None:
        with self._lock:
            return self._instances.pop(instance_id, None)

    def get(self, instance_id: str) -> FlowInstance | None:
        with self._lock:
            return self._instances.get(instance_id)

    def ids(self) -> list[str]:
        with self._lock:
            return sorted(self._instances)

    def inject(
        self, instance_id: str, flowfile: FlowFile, entry_task_id: str | None = None
    ) -> None:
        """Hand ``flowfile`` to a running instance; ``Undeliverable`` if it is not here."""
        instance = self.get(instance_id)
        if instance is None:
            raise Undeliverable(f"flow instance {instance_id} is not running in this process")
        instance.inject(flowfile, entry_task_id)


class FlowDeliveryHandler:
    """The store's handler for ``flow:`` targets."""

    def __init__(self, executors: ExecutorRegistry) -> None:
        self.executors = executors

    def _instance(self, target: str) -> FlowInstance | None:
        kind, _, key = target.partition(":")
        if kind != TARGET_KIND:
            return None
        instance = self.executors.get(key)
        return instance if instance is not None and instance.running else None

    def accepts(self, target: str) -> bool:
        return self._instance(target) is not None

    def deliver(self, delivery: Delivery) -> None:
        instance = self._instance(delivery.continuation.target)
        if instance is None:
            raise Undeliverable(f"{delivery.continuation.target} is not running here")
        instance.deliver(delivery.continuation, delivery.tx)
