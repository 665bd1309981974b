"""What a deployment holds right now: its FlowFiles per task, and which process runs it.

Counts come from the durable queues: ``queued`` (waiting for the task), ``running`` (taken
by the task, or held by ``waitForSignal``), ``parked`` (waiting on a signal or a timer).
``incoming`` counts FlowFiles handed over (injected, or resumed) that have not joined a queue
yet, because no process runs the deployment or its queue is full.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import yaml

from pawflow.flow.deployments import Deployment, all_deployments, get
from pawflow.flow.executors import target_of
from pawflow.store import QUEUE_STATUSES as STATUSES
from pawflow.store import Store, Unit


@dataclass(frozen=True)
class DeploymentStatus:
    deployment: Deployment
    tasks: dict[str, dict[str, int]]
    """Per task (in the flow's order): how many FlowFiles are queued, running, parked."""
    incoming: int
    runner: str | None
    """The process holding the deployment's lease (host:pid:…), if one does."""

    def total(self, status: str) -> int:
        return sum(counts[status] for counts in self.tasks.values())

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.deployment.to_dict(),
            "runner": self.runner,
            "incoming": self.incoming,
            "tasks": self.tasks,
        }


def _task_order(deployment: Deployment) -> list[str]:
    """The task ids in the order the definition lists them (read, not loaded: no imports)."""
    try:
        document = yaml.safe_load(deployment.definition)
    except yaml.YAMLError:
        return []
    tasks = document.get("tasks") if isinstance(document, dict) else None
    return [str(task) for task in tasks] if isinstance(tasks, dict) else []


def _status(u: Unit, deployment: Deployment, order: list[str], store: Store) -> DeploymentStatus:
    target = target_of(deployment.id)
    found = u.queues.counts(target).get(target, {})
    tasks: dict[str, dict[str, int]] = {task: dict.fromkeys(STATUSES, 0) for task in order}
    for task, per_status in sorted(found.items()):
        tasks.setdefault(task, dict.fromkeys(STATUSES, 0)).update(dict(per_status.items()))
    parked = sum(per_status["parked"] for per_status in tasks.values())
    incoming = max(u.continuations.pending_for_target(target) - parked, 0)
    lease = u.leases.get(target)
    runner = lease.owner if lease is not None and lease.expires_at > store.now() else None
    return DeploymentStatus(deployment, tasks, incoming, runner)


def deployment_status(store: Store, deployment_id: str) -> DeploymentStatus:
    """One deployment's counts; ``NotFound`` when there is none with that id."""
    with store.unit(write=False) as u:
        deployment = get(u, deployment_id)
    order = _task_order(deployment)
    with store.unit(write=False) as u:
        return _status(u, deployment, order, store)


def deployment_statuses(store: Store, *, user: str | None = None) -> list[DeploymentStatus]:
    """Every deployment (of ``user``), with its counts."""
    with store.unit(write=False) as u:
        found = all_deployments(u, user=user)
    orders = {d.id: _task_order(d) for d in found}
    with store.unit(write=False) as u:
        return [_status(u, d, orders[d.id], store) for d in found]
