"""Deployments: flow definitions stored with their scope, for the server to run.

A deployment is keyed by (user, conversation, flow name): deploying the same flow into the
same conversation again replaces its definition and keeps its id, so FlowFiles parked by
the earlier version still find their instance (``flow:<deployment id>``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from pawflow.clock import iso
from pawflow.errors import InvalidInput, NotFound
from pawflow.flow.definition import FlowDefinition, parse_flow
from pawflow.flow.engine import PARK_MODE_INJECT
from pawflow.flow.executors import target_of
from pawflow.flow.flowfile import FlowFile
from pawflow.flow.registry import TaskRegistry
from pawflow.flow.task import FlowScope
from pawflow.ids import new_id
from pawflow.store import DEPLOYMENT_CHANGED as CHANGED_NOTICE
from pawflow.store import DeploymentRow, Store, Transaction, Unit
from pawflow.store import DeploymentStatus as Status

Tx = Transaction

__all__ = ["CHANGED_NOTICE", "IDLE", "Deployment", "Status"]


@dataclass(frozen=True)
class Deployment(DeploymentRow):
    """A stored deployment, with the flow it runs."""

    @classmethod
    def of_row(cls, row: DeploymentRow) -> Deployment:
        return cls(**dataclasses.asdict(row))

    def load(self, registry: TaskRegistry | None = None) -> FlowDefinition:
        """The validated flow this deployment runs."""
        return parse_flow(
            self.definition,
            registry=registry,
            base_dir=Path(self.base_dir) if self.base_dir else None,
            source_name=f"deployment {self.id} ({self.name})",
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "user": self.user,
            "conversation_id": self.conversation_id,
            "status": self.status,
            "status_reason": self.status_reason,
            "version": self.version,
            "last_error": self.last_error,
            "created_at": iso(self.created_at),
            "updated_at": iso(self.updated_at),
        }


# -- rows ---------------------------------------------------------------------------------


def get(u: Unit, deployment_id: str) -> Deployment:
    return Deployment.of_row(u.deployments.get(deployment_id))


def all_deployments(
    u: Unit, *, user: str | None = None, status: Status | None = None
) -> list[Deployment]:
    return [
        Deployment.of_row(row) for row in u.deployments.all_deployments(user=user, status=status)
    ]


def set_status(
    tx: Tx, deployment_id: str, status: Status, *, reason: str | None, now: datetime
) -> Deployment:
    u = Unit(tx, now)
    return Deployment.of_row(u.deployments.set_status(deployment_id, status, reason=reason))


def record_error(u: Unit, deployment_id: str, error: str | None) -> None:
    u.deployments.record_error(deployment_id, error)


# -- operations on a store ------------------------------------------------------------------


def deploy(
    store: Store,
    definition: str,
    *,
    conversation_id: str,
    user: str | None = None,
    base_dir: str | Path | None = None,
    registry: TaskRegistry | None = None,
) -> tuple[Deployment, bool]:
    """Store (or replace) a running deployment; returns it and whether it is new.

    The definition is validated first. ``user`` defaults to the conversation's owner and
    needs write access to the conversation (see ``scope_in``).
    """
    directory = Path(base_dir).resolve() if base_dir is not None else None
    flow = parse_flow(definition, registry=registry, base_dir=directory)
    with store.unit() as u:
        deploying_user = scope_in(u, conversation_id, user).user
        row, created = u.deployments.save(
            name=flow.name,
            definition=definition,
            base_dir=_text(directory),
            user=deploying_user,
            conversation_id=conversation_id,
        )
        return Deployment.of_row(row), created


def scope_in(u: Unit, conversation_id: str, user: str | None) -> FlowScope:
    """The scope a flow acting for ``user`` (default: the owner) gets in a conversation.

    The user needs write access there: it is whom the flow asks, and where.
    """
    conversation = u.conversations.find_conversation(conversation_id)
    if conversation is None:
        raise NotFound("conversation")
    acting = user or conversation.owner
    if not u.conversations.may_write(conversation_id, acting):
        raise InvalidInput(
            f"{acting} cannot run flows in conversation {conversation_id}:"
            " it needs write access there"
        )
    return FlowScope(acting, conversation_id)


def resolve_scope(store: Store, conversation_id: str, user: str | None = None) -> FlowScope:
    with store.unit(write=False) as u:
        return scope_in(u, conversation_id, user)


def _text(path: Path | None) -> str | None:
    return None if path is None else str(path)


def get_deployment(store: Store, deployment_id: str) -> Deployment:
    with store.unit(write=False) as u:
        return get(u, deployment_id)


def list_deployments(
    store: Store, *, user: str | None = None, status: Status | None = None
) -> list[Deployment]:
    with store.unit(write=False) as u:
        return all_deployments(u, user=user, status=status)


def change_status(
    store: Store, deployment_id: str, status: Status, *, reason: str | None = None
) -> Deployment:
    with store.unit() as u:
        return set_status(u.tx, deployment_id, status, reason=reason, now=store.now())


IDLE = "idle"
"""The reason a deployment stopped after ``idle_stop`` without work."""


def _lock(tx: Tx, deployment_id: str) -> None:
    """Serialize an idle stop with the injections into the deployment."""
    tx.lock_key(f"pawflow:flow-deployment:{deployment_id}")


def stop_if_idle(store: Store, deployment_id: str) -> bool:
    """Stop a deployment for idleness if nothing waits for it in the store: no continuation
    (parked, or resolved and not yet delivered) and no FlowFile in its queues. One
    transaction; False (still running) when something waits."""
    target = target_of(deployment_id)
    with store.unit() as u:
        _lock(u.tx, deployment_id)
        # Continuations first: a delivery deletes one and queues its FlowFile together.
        if u.continuations.pending_for_target(target) or u.queues.counts(target):
            return False
        set_status(u.tx, deployment_id, "stopped", reason=IDLE, now=store.now())
        return True


def inject(
    store: Store,
    deployment_id: str,
    flowfile: FlowFile,
    task_id: str | None = None,
    *,
    registry: TaskRegistry | None = None,
) -> str:
    """Hand a FlowFile to a deployment from any process, durably; returns the task id.

    It travels as an already-resolved continuation, so whichever process runs the
    instance takes it (now, or when the instance next starts). A deployment stopped for
    idleness runs again to take it; one stopped by hand keeps it until it is started.
    """
    deployment = get_deployment(store, deployment_id)
    flow = deployment.load(registry)
    entry = task_id or flow.start
    if entry not in flow.tasks:
        raise InvalidInput(f"flow {flow.name!r} has no task {entry!r}")
    signal_id = f"flow-inject:{new_id()}"
    with store.unit() as u:
        _lock(u.tx, deployment_id)
        u.continuations.park(
            target_of(deployment_id),
            payload=flowfile.encode({"task": entry, "mode": PARK_MODE_INJECT}),
            payload_cap=store.payload_cap,
            signal_id=signal_id,
        )
        u.continuations.fire_signal(signal_id, None)
        u.deployments.wake_if_stopped(deployment_id, IDLE)
    return entry
