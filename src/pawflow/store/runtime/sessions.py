"""The ``session_continuations`` table: what each session (a conversation) waits on.

At most one continuation is pending per session: a partial unique index enforces it, so a
second pending insert fails with ``Conflict``. Closing one (answered, superseded, expired,
withdrawn) keeps the row, for the audit.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any

from pawflow.clock import to_millis
from pawflow.ids import new_id
from pawflow.store.engine.database import Tx, sql
from pawflow.store.engine.rows import JSON, decode, decode_all, encode_json


@dataclass(frozen=True)
class SessionRow:
    """A row of ``session_continuations``."""

    id: str
    session_id: str
    owner: str
    kind: str
    origin: str
    question: str
    run_id: str | None
    step_id: str | None
    intent: str | None
    payload: Annotated[Any, JSON]
    status: str
    reply: str | None
    created_at: datetime
    expires_at: datetime
    closed_at: datetime | None


def insert(
    tx: Tx,
    *,
    session_id: str,
    owner: str,
    kind: str,
    origin: str,
    question: str,
    run_id: str | None,
    step_id: str | None,
    intent: str | None,
    payload: Any,
    now: datetime,
    expires_at: datetime,
) -> SessionRow:
    """Open a continuation: a second pending one in the session raises ``Conflict``."""
    row = sql(tx).one(
        "INSERT INTO session_continuations (id, session_id, owner, kind, origin, question,"
        " run_id, step_id, intent, payload, status, created_at, expires_at, seq)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?,"
        " (SELECT COALESCE(MAX(seq), 0) + 1 FROM session_continuations WHERE session_id = ?))"
        " RETURNING *",
        (
            new_id(),
            session_id,
            owner,
            kind,
            origin,
            question,
            run_id,
            step_id,
            intent,
            None if payload is None else encode_json(payload),
            to_millis(now),
            to_millis(expires_at),
            session_id,
        ),
    )
    assert row is not None
    return decode(SessionRow, row)


def lock(tx: Tx, session_id: str) -> None:
    """Serialize the transactions that open or close a continuation of the session."""
    tx.lock_key(f"session:{session_id}")


def supersede_pending(tx: Tx, session_id: str, now: datetime) -> None:
    """Close the session's pending continuation, if any, as ``superseded``."""
    sql(tx).execute(
        "UPDATE session_continuations SET status = 'superseded', closed_at = ?"
        " WHERE session_id = ? AND status = 'pending'",
        (to_millis(now), session_id),
    )


def pending(tx: Tx, session_id: str) -> SessionRow | None:
    """The session's pending continuation as stored (its TTL not checked)."""
    row = sql(tx).one(
        "SELECT * FROM session_continuations WHERE session_id = ? AND status = 'pending'",
        (session_id,),
    )
    return None if row is None else decode(SessionRow, row)


def close(
    tx: Tx, continuation_id: str, status: str, now: datetime, reply: str | None
) -> SessionRow | None:
    """Close a pending continuation; None when it is not pending (or unknown)."""
    row = sql(tx).one(
        "UPDATE session_continuations SET status = ?, reply = ?, closed_at = ?"
        " WHERE id = ? AND status = 'pending' RETURNING *",
        (status, reply, to_millis(now), continuation_id),
    )
    return None if row is None else decode(SessionRow, row)


def get(tx: Tx, continuation_id: str) -> SessionRow | None:
    row = sql(tx).one("SELECT * FROM session_continuations WHERE id = ?", (continuation_id,))
    return None if row is None else decode(SessionRow, row)


def history(tx: Tx, session_id: str) -> list[SessionRow]:
    rows = sql(tx).all(
        "SELECT * FROM session_continuations WHERE session_id = ? ORDER BY seq", (session_id,)
    )
    return decode_all(SessionRow, rows)


def by_run(tx: Tx, run_id: str) -> list[SessionRow]:
    rows = sql(tx).all(
        "SELECT * FROM session_continuations WHERE run_id = ? ORDER BY session_id, seq",
        (run_id,),
    )
    return decode_all(SessionRow, rows)


def expire_due(tx: Tx, now: datetime) -> int:
    """Mark the pending continuations past their TTL expired; returns how many."""
    at = to_millis(now)
    return sql(tx).execute(
        "UPDATE session_continuations SET status = 'expired', closed_at = ?"
        " WHERE status = 'pending' AND expires_at <= ?",
        (at, at),
    )
