"""A2A push notifications on their way: one delivery per push config of a task, per update.

When a task changes (:func:`enqueue`, in the transaction that records the update), one
delivery is written for each push config the task has, its body fixed then (the SDK's
``StreamResponse`` JSON of the update). The outbox's dispatcher claims, sends and records
them exactly as it does webhook deliveries (:mod:`pawflow.store.reach.webhooks`: each claim counts
an attempt and moves ``next_at`` past the backoff before anything is sent); the config is
read again at each attempt, so a config deleted meanwhile stops its deliveries. The rows are
the task's delivery log; one sent or given up is kept for a retention after it was written,
then forgotten by the retention sweep (:func:`prune_settled`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pawflow.clock import from_millis
from pawflow.ids import new_id
from pawflow.store.engine.database import Tx, sql
from pawflow.store.reach.a2a_tasks import PushConfig, push_config, push_configs
from pawflow.store.reach.lanes import Busy
from pawflow.store.reach.webhooks import (
    DeliveryStatus,
    Queue,
    claim_rows,
    insert_capped,
    prune_rows,
    record_failed,
    record_sent,
)

TABLE: Queue = "a2a_push_deliveries"
LOG_LIMIT = 200


@dataclass(frozen=True)
class PushDelivery:
    """One update of a task on its way to one of its push configs."""

    id: str
    task_id: str
    config_id: str
    event: str
    payload: str
    status: DeliveryStatus
    attempts: int
    next_at: datetime
    last_error: str | None
    response_status: int | None
    created_at: datetime
    sent_at: datetime | None

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> PushDelivery:
        return cls(
            id=row["id"],
            task_id=row["task_id"],
            config_id=row["config_id"],
            event=row["event"],
            payload=row["payload"],
            status=row["status"],
            attempts=int(row["attempts"]),
            next_at=from_millis(int(row["next_at"])),
            last_error=row["last_error"],
            response_status=row["response_status"],
            created_at=from_millis(int(row["created_at"])),
            sent_at=None if row["sent_at"] is None else from_millis(int(row["sent_at"])),
        )


def enqueue(tx: Tx, task_id: str, event: str, payload: str, now: datetime) -> int:
    """One queued delivery of ``payload`` per push config of the task; how many."""
    configs = push_configs(tx, task_id)
    for config in configs:
        columns = {
            "id": "msg_" + new_id(),
            "task_id": task_id,
            "config_id": config.id,
            "event": event,
            "payload": payload,
        }
        insert_capped(tx, TABLE, columns, now)
    return len(configs)


def claim_due(tx: Tx, now: datetime, limit: int, busy: Busy = ()) -> list[PushDelivery]:
    """Claim due deliveries, as :func:`pawflow.store.reach.webhooks.claim_due` does."""
    return [PushDelivery.from_row(row) for row in claim_rows(tx, TABLE, now, limit, busy)]


def config_of(tx: Tx, delivery: PushDelivery) -> PushConfig | None:
    """The config the delivery goes to; None once deleted."""
    return push_config(tx, delivery.task_id, delivery.config_id)


def mark_sent(tx: Tx, claimed: PushDelivery, response_status: int, now: datetime) -> bool:
    return record_sent(tx, TABLE, claimed.id, claimed.attempts, response_status, now)


def mark_failed(
    tx: Tx,
    claimed: PushDelivery,
    reason: str,
    *,
    response_status: int | None = None,
    permanent: bool = False,
) -> bool:
    return record_failed(
        tx,
        TABLE,
        claimed.id,
        claimed.attempts,
        reason,
        response_status=response_status,
        permanent=permanent,
    )


def log(tx: Tx, task_id: str, limit: int = LOG_LIMIT) -> list[PushDelivery]:
    """The task's push deliveries, newest first."""
    rows = sql(tx).all(
        "SELECT * FROM a2a_push_deliveries WHERE task_id = ?"
        " ORDER BY created_at DESC, id DESC LIMIT ?",
        (task_id, max(1, min(limit, LOG_LIMIT))),
    )
    return [PushDelivery.from_row(row) for row in rows]


def prune_settled(tx: Tx, before: datetime, limit: int) -> int:
    """Forget up to ``limit`` deliveries written before ``before`` that were sent or given
    up; how many."""
    return prune_rows(tx, TABLE, before, limit)
