"""A2A tasks and their push-notification configs, kept so that they outlive the process.

A task is its user's and its agent's: it is found only by the user who started it, through
the agent it was started with; another user's task, or another agent's, is as unknown as one
that does not exist. The task itself is kept as the A2A SDK's JSON (this module does not read
it); its context, its state and its time are kept beside it to list and order tasks.

A push-notification config is a task's and its user's, keyed by the task and the config's id;
its URL, token and ``Authorization`` scheme and credentials are kept beside the SDK's JSON of
the whole config so the dispatcher can send without the SDK (:mod:`pawflow.store.reach.a2a_push`).

A task that finished (:data:`FINISHED`) is kept for a retention after its last update, then
forgotten with its configs by the retention sweep (:func:`prune_finished`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pawflow.clock import to_millis
from pawflow.store.engine.database import Tx, sql

LIST_LIMIT = 1000
"""The most tasks :func:`list_for` reads at once (newest first)."""
FINISHED = (
    "TASK_STATE_COMPLETED",
    "TASK_STATE_FAILED",
    "TASK_STATE_CANCELED",
    "TASK_STATE_REJECTED",
)
"""The states a task never leaves, by the SDK's names (as :func:`save` is given them); the
index ``a2a_tasks_finished`` names the same, in this order."""
_FINISHED = "state IN (" + ", ".join(f"'{state}'" for state in FINISHED) + ")"


@dataclass(frozen=True)
class StoredTask:
    id: str
    context_id: str
    state: str
    task: str
    """The SDK's JSON of the task."""


def save(
    tx: Tx,
    task_id: str,
    *,
    user: str,
    agent: str,
    context_id: str,
    state: str,
    task: str,
    now: datetime,
) -> bool:
    """Write the task (new, or an update of the user's own under the same agent); False when
    its id is another user's or another agent's task (nothing is written)."""
    written = sql(tx).execute(
        "INSERT INTO a2a_tasks (id, user_id, agent, context_id, state, task, created_at,"
        " updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET"
        " context_id = excluded.context_id, state = excluded.state, task = excluded.task,"
        " updated_at = excluded.updated_at"
        " WHERE a2a_tasks.user_id = excluded.user_id AND a2a_tasks.agent = excluded.agent",
        (task_id, user, agent, context_id, state, task, to_millis(now), to_millis(now)),
    )
    return written > 0


def _task(row: dict[str, Any]) -> StoredTask:
    return StoredTask(row["id"], row["context_id"], row["state"], row["task"])


def get(tx: Tx, task_id: str, *, user: str, agent: str) -> StoredTask | None:
    """The user's task under ``agent``; None for another's, exactly as for an unknown id."""
    row = sql(tx).one(
        "SELECT id, context_id, state, task FROM a2a_tasks"
        " WHERE id = ? AND user_id = ? AND agent = ?",
        (task_id, user, agent),
    )
    return None if row is None else _task(row)


def list_for(
    tx: Tx, *, user: str, agent: str, context_id: str | None = None, state: str | None = None
) -> list[StoredTask]:
    """The user's tasks under ``agent`` (of one context, in one state), newest first."""
    where, params = ["user_id = ?", "agent = ?"], [user, agent]
    if context_id:
        where.append("context_id = ?")
        params.append(context_id)
    if state:
        where.append("state = ?")
        params.append(state)
    rows = sql(tx).all(
        "SELECT id, context_id, state, task FROM a2a_tasks WHERE "
        + " AND ".join(where)
        + " ORDER BY updated_at DESC, id DESC LIMIT ?",
        (*params, LIST_LIMIT),
    )
    return [_task(row) for row in rows]


def delete(tx: Tx, task_id: str, *, user: str, agent: str) -> bool:
    """Forget the user's task and its push configs; False if there was no such task."""
    if get(tx, task_id, user=user, agent=agent) is None:
        return False
    sql(tx).execute("DELETE FROM a2a_push_configs WHERE task_id = ?", (task_id,))
    sql(tx).execute("DELETE FROM a2a_tasks WHERE id = ?", (task_id,))
    return True


def prune_finished(tx: Tx, before: datetime, limit: int) -> int:
    """Forget up to ``limit`` tasks that finished before ``before`` (their last update), and
    their push configs; how many. Their pushes, sent or given up, go by their own age
    (:func:`pawflow.store.reach.a2a_push.prune_settled`); one still queued fails for want of its
    config, then goes too."""
    at = to_millis(before)
    gone = sql(tx).all(
        f"DELETE FROM a2a_tasks WHERE id IN (SELECT id FROM a2a_tasks WHERE {_FINISHED}"
        f" AND updated_at < ? ORDER BY updated_at LIMIT ?) AND {_FINISHED} AND updated_at < ?"
        " RETURNING id",
        (at, limit, at),
    )
    ids = [row["id"] for row in gone]
    if ids:
        marks = ", ".join("?" for _ in ids)
        sql(tx).execute(f"DELETE FROM a2a_push_configs WHERE task_id IN ({marks})", ids)
    return len(ids)


# -- push-notification configs ---------------------------------------------------------------


@dataclass(frozen=True)
class PushConfig:
    task_id: str
    id: str
    user: str
    url: str
    token: str | None
    auth_scheme: str | None
    auth_credentials: str | None
    config: str
    """The SDK's JSON of the whole config."""

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> PushConfig:
        return cls(
            task_id=row["task_id"],
            id=row["id"],
            user=row["user_id"],
            url=row["url"],
            token=row["token"],
            auth_scheme=row["auth_scheme"],
            auth_credentials=row["auth_credentials"],
            config=row["config"],
        )


def set_push(tx: Tx, config: PushConfig, now: datetime) -> bool:
    """Write the user's config (new, or replacing theirs of the same id); False when that id
    is another user's config of the task (nothing is written)."""
    written = sql(tx).execute(
        "INSERT INTO a2a_push_configs (task_id, id, user_id, url, token, auth_scheme,"
        " auth_credentials, config, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
        " ON CONFLICT (task_id, id) DO UPDATE SET url = excluded.url, token = excluded.token,"
        " auth_scheme = excluded.auth_scheme, auth_credentials = excluded.auth_credentials,"
        " config = excluded.config WHERE a2a_push_configs.user_id = excluded.user_id",
        (
            config.task_id,
            config.id,
            config.user,
            config.url,
            config.token,
            config.auth_scheme,
            config.auth_credentials,
            config.config,
            to_millis(now),
        ),
    )
    return written > 0


def push_configs(tx: Tx, task_id: str, *, user: str | None = None) -> list[PushConfig]:
    """The task's configs, the user's only unless ``user`` is None (the dispatch path)."""
    if user is None:
        rows = sql(tx).all(
            "SELECT * FROM a2a_push_configs WHERE task_id = ? ORDER BY created_at, id", (task_id,)
        )
    else:
        rows = sql(tx).all(
            "SELECT * FROM a2a_push_configs WHERE task_id = ? AND user_id = ?"
            " ORDER BY created_at, id",
            (task_id, user),
        )
    return [PushConfig.from_row(row) for row in rows]


def push_config(tx: Tx, task_id: str, config_id: str) -> PushConfig | None:
    row = sql(tx).one(
        "SELECT * FROM a2a_push_configs WHERE task_id = ? AND id = ?", (task_id, config_id)
    )
    return None if row is None else PushConfig.from_row(row)


def delete_push(tx: Tx, task_id: str, *, user: str, config_id: str | None = None) -> int:
    """Forget the user's config ``config_id`` of the task (all of theirs when None)."""
    if config_id is None:
        return sql(tx).execute(
            "DELETE FROM a2a_push_configs WHERE task_id = ? AND user_id = ?", (task_id, user)
        )
    return sql(tx).execute(
        "DELETE FROM a2a_push_configs WHERE task_id = ? AND user_id = ? AND id = ?",
        (task_id, user, config_id),
    )
