"""The ``flow_deployments`` table: flow definitions stored with their scope.

A deployment is keyed by (user, conversation, flow name): deploying the same flow into the
same conversation again replaces its definition and keeps its id.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Literal

from pawflow.clock import to_millis
from pawflow.errors import NotFound
from pawflow.ids import new_id
from pawflow.store.engine.database import Tx, sql
from pawflow.store.engine.rows import Column, decode, decode_all

Status = Literal["running", "stopped"]
CHANGED_NOTICE = "flows"


@dataclass(frozen=True)
class DeploymentRow:
    """A row of ``flow_deployments``."""

    id: str
    name: str
    definition: str
    base_dir: str | None
    user: Annotated[str, Column("user_id")]
    conversation_id: str
    status: Status
    status_reason: str | None
    version: int
    last_error: str | None
    created_at: datetime
    updated_at: datetime


def get(tx: Tx, deployment_id: str) -> DeploymentRow:
    row = sql(tx).one("SELECT * FROM flow_deployments WHERE id = ?", (deployment_id,))
    if row is None:
        raise NotFound("flow deployment")
    return decode(DeploymentRow, row)


def all_deployments(
    tx: Tx, *, user: str | None = None, status: Status | None = None
) -> list[DeploymentRow]:
    clauses, params = [], []
    if user is not None:
        clauses.append("user_id = ?")
        params.append(user)
    if status is not None:
        clauses.append("status = ?")
        params.append(status)
    where = f" WHERE {' AND '.join(clauses)}" if clauses else ""
    rows = sql(tx).all(f"SELECT * FROM flow_deployments{where} ORDER BY created_at, id", params)
    return decode_all(DeploymentRow, rows)


def set_status(
    tx: Tx, deployment_id: str, status: Status, *, reason: str | None, now: datetime
) -> DeploymentRow:
    changed = sql(tx).execute(
        "UPDATE flow_deployments SET status = ?, status_reason = ?, last_error = NULL,"
        " updated_at = ? WHERE id = ?",
        (status, reason, to_millis(now), deployment_id),
    )
    if not changed:
        raise NotFound("flow deployment")
    tx.notify(CHANGED_NOTICE)
    return get(tx, deployment_id)


def record_error(tx: Tx, deployment_id: str, error: str | None) -> None:
    sql(tx).execute(
        "UPDATE flow_deployments SET last_error = ? WHERE id = ?",
        (None if error is None else error[:2000], deployment_id),
    )


def save(
    tx: Tx,
    *,
    name: str,
    definition: str,
    base_dir: str | None,
    user: str,
    conversation_id: str,
    now: datetime,
) -> tuple[DeploymentRow, bool]:
    """Store (or replace) a running deployment; returns it and whether it is new.

    The same definition again keeps its version, so a running instance goes on.
    """
    at = to_millis(now)
    existing = sql(tx).one(
        "SELECT id, definition, base_dir FROM flow_deployments WHERE user_id = ?"
        " AND conversation_id = ? AND name = ?",
        (user, conversation_id, name),
    )
    if existing is not None and (existing["definition"], existing["base_dir"]) == (
        definition,
        base_dir,
    ):
        sql(tx).execute(
            "UPDATE flow_deployments SET status = 'running', status_reason = NULL,"
            " updated_at = ? WHERE id = ?",
            (at, existing["id"]),
        )
        deployment_id, created = str(existing["id"]), False
    elif existing is not None:
        sql(tx).execute(
            "UPDATE flow_deployments SET definition = ?, base_dir = ?, status = 'running',"
            " status_reason = NULL, last_error = NULL, version = version + 1,"
            " updated_at = ? WHERE id = ?",
            (definition, base_dir, at, existing["id"]),
        )
        deployment_id, created = str(existing["id"]), False
    else:
        deployment_id, created = new_id(), True
        sql(tx).execute(
            "INSERT INTO flow_deployments (id, name, definition, base_dir, user_id,"
            " conversation_id, status, version, created_at, updated_at)"
            " VALUES (?, ?, ?, ?, ?, ?, 'running', 1, ?, ?)",
            (deployment_id, name, definition, base_dir, user, conversation_id, at, at),
        )
    tx.notify(CHANGED_NOTICE)
    return get(tx, deployment_id), created


def wake_if_stopped(tx: Tx, deployment_id: str, reason: str, now: datetime) -> bool:
    """Run again a deployment stopped for ``reason``; False when it was not."""
    woken = sql(tx).execute(
        "UPDATE flow_deployments SET status = 'running', status_reason = NULL,"
        " updated_at = ? WHERE id = ? AND status = 'stopped' AND status_reason = ?",
        (to_millis(now), deployment_id, reason),
    )
    if woken:
        tx.notify(CHANGED_NOTICE)
    return bool(woken)
