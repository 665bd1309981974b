"""The ``checkpoints`` table: durable checkpoints of agent runs, keyed ``(run_id, step_id)``.

A checkpoint lives until ``expires_at`` unless pinned; every read here leaves out the
expired ones, so they are gone to readers even before the sweep removes them.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Annotated, Any

from pawflow.clock import to_millis
from pawflow.store.engine.database import Tx, sql
from pawflow.store.engine.rows import JSON, decode, decode_all
from pawflow.store.runtime.reports import SWEEP_BATCH


@dataclass(frozen=True)
class Checkpoint:
    run_id: str
    step_id: str
    session_id: str | None
    agent: str
    halt_reason: str
    payload: Annotated[dict[str, Any], JSON]
    pinned: bool
    created_at: datetime
    expires_at: datetime


_LIVE = "(pinned = 1 OR expires_at > ?)"


def put(
    tx: Tx,
    run_id: str,
    step_id: str,
    encoded: bytes,
    *,
    agent: str,
    halt_reason: str,
    session_id: str | None,
    pinned: bool,
    now: datetime,
    ttl: timedelta,
) -> Checkpoint:
    """Write (or overwrite) the checkpoint of one step; ``encoded`` is its JSON payload."""
    sql(tx).execute(
        "INSERT INTO checkpoints (run_id, step_id, session_id, agent, halt_reason,"
        " payload, pinned, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
        " ON CONFLICT (run_id, step_id) DO UPDATE SET session_id = excluded.session_id,"
        " agent = excluded.agent, halt_reason = excluded.halt_reason,"
        " payload = excluded.payload, pinned = excluded.pinned,"
        " created_at = excluded.created_at, expires_at = excluded.expires_at",
        (
            run_id,
            step_id,
            session_id,
            agent,
            halt_reason,
            encoded,
            int(pinned),
            to_millis(now),
            to_millis(now + ttl),
        ),
    )
    found = get(tx, run_id, step_id, now)
    assert found is not None
    return found


def get(tx: Tx, run_id: str, step_id: str, now: datetime) -> Checkpoint | None:
    """The checkpoint, or None when there is none or it has expired."""
    row = sql(tx).one(
        f"SELECT * FROM checkpoints WHERE run_id = ? AND step_id = ? AND {_LIVE}",
        (run_id, step_id, to_millis(now)),
    )
    return None if row is None else decode(Checkpoint, row)


def latest(tx: Tx, run_id: str, now: datetime) -> Checkpoint | None:
    row = sql(tx).one(
        f"SELECT * FROM checkpoints WHERE run_id = ? AND {_LIVE}"
        " ORDER BY created_at DESC, step_id DESC LIMIT 1",
        (run_id, to_millis(now)),
    )
    return None if row is None else decode(Checkpoint, row)


def of_run(tx: Tx, run_id: str, now: datetime) -> list[Checkpoint]:
    """The run's live checkpoints, step by step."""
    rows = sql(tx).all(
        f"SELECT * FROM checkpoints WHERE run_id = ? AND {_LIVE} ORDER BY step_id",
        (run_id, to_millis(now)),
    )
    return decode_all(Checkpoint, rows)


def by_session(tx: Tx, session_id: str, now: datetime, limit: int) -> list[Checkpoint]:
    """The session's live checkpoints, newest first."""
    rows = sql(tx).all(
        f"SELECT * FROM checkpoints WHERE session_id = ? AND {_LIVE}"
        " ORDER BY created_at DESC, run_id, step_id DESC LIMIT ?",
        (session_id, to_millis(now), limit),
    )
    return decode_all(Checkpoint, rows)


def pin(
    tx: Tx, run_id: str, step_id: str, pinned: bool, now: datetime, ttl: timedelta
) -> Checkpoint | None:
    """Pin a live checkpoint (or unpin it, expiring ``ttl`` from now); None if there is none."""
    if get(tx, run_id, step_id, now) is None:
        return None
    sql(tx).execute(
        "UPDATE checkpoints SET pinned = ?, expires_at = ? WHERE run_id = ? AND step_id = ?",
        (int(pinned), to_millis(now + ttl), run_id, step_id),
    )
    return get(tx, run_id, step_id, now)


def delete(tx: Tx, run_id: str, step_id: str) -> bool:
    return bool(
        sql(tx).execute(
            "DELETE FROM checkpoints WHERE run_id = ? AND step_id = ?", (run_id, step_id)
        )
    )


def remove_expired(tx: Tx, now: datetime, limit: int = SWEEP_BATCH) -> int:
    """Remove up to ``limit`` expired, unpinned checkpoints; returns how many."""
    rows = sql(tx).all(
        "SELECT run_id, step_id FROM checkpoints WHERE pinned = 0 AND expires_at <= ?"
        " ORDER BY expires_at LIMIT ?" + sql(tx).skip_locked,
        (to_millis(now), limit),
    )
    for row in rows:
        sql(tx).execute(
            "DELETE FROM checkpoints WHERE run_id = ? AND step_id = ?",
            (row["run_id"], row["step_id"]),
        )
    return len(rows)
