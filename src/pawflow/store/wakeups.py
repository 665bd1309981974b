"""Scheduled agent wakeups: the answers agents wait for, each delivered once.

A wakeup is written in the same transaction that consumes the continuation it comes from
(the answer to an agent's question), together with the turn that runs it on the durable
turn queue (:mod:`pawflow.store.turns`), so an answer never gets lost or doubled on the
way. Running one is a claim, made by the turn that runs it — a conditional update from
``scheduled`` to ``running`` — and in that same transaction the wakeup's text enters the
conversation as a ``system`` message, shown to people. A process that dies mid-turn leaves
its turn's lease to run out within seconds; the turn's next claim re-runs the wakeup
without posting the message again.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Literal

from pawflow.clock import from_millis, to_millis
from pawflow.ids import new_id
from pawflow.records import Message
from pawflow.store import continuations
from pawflow.store.database import Tx
from pawflow.store.delivery import backoff
from pawflow.store.messages import append_message

log = logging.getLogger("pawflow.store.wakeups")

WakeupStatus = Literal["scheduled", "running", "done", "absorbed", "failed"]
MAX_ATTEMPTS = 5


@dataclass(frozen=True)
class Wakeup:
    id: str
    agent: str
    conversation_id: str
    user: str
    source: str
    text: str
    data: dict[str, Any]
    status: WakeupStatus
    due_at: datetime
    attempts: int
    message_id: str | None
    tool_started: bool
    last_error: str | None
    created_at: datetime

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> Wakeup:
        return cls(
            id=row["id"],
            agent=row["agent"],
            conversation_id=row["conversation_id"],
            user=row["user_id"],
            source=row["source"],
            text=row["text"],
            data=json.loads(row["data"]),
            status=row["status"],
            due_at=from_millis(row["due_at"]),
            attempts=row["attempts"],
            message_id=row["message_id"],
            tool_started=row["tool_started_at"] is not None,
            last_error=row["last_error"],
            created_at=from_millis(row["created_at"]),
        )


def schedule(
    tx: Tx,
    *,
    agent: str,
    conversation_id: str,
    user: str,
    source: str,
    text: str,
    data: dict[str, Any],
    now: datetime,
    due_at: datetime | None = None,
) -> str | None:
    """Schedule a wakeup; ``source`` (``confirmation:<id>``) makes it once-only.

    Returns the new wakeup's id; None when the source had one already.
    """
    at = to_millis(now)
    wakeup_id = new_id()
    changed = tx.execute(
        "INSERT INTO agent_wakeups (id, agent, conversation_id, user_id, source, text, data,"
        " status, due_at, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, 'scheduled', ?, ?)"
        " ON CONFLICT (source) DO NOTHING",
        (
            wakeup_id,
            agent,
            conversation_id,
            user,
            source,
            text,
            json.dumps(data),
            at if due_at is None else to_millis(due_at),
            at,
        ),
    )
    return wakeup_id if changed else None


def get(tx: Tx, wakeup_id: str) -> Wakeup | None:
    row = tx.one("SELECT * FROM agent_wakeups WHERE id = ?", (wakeup_id,))
    return None if row is None else Wakeup.from_row(row)


def by_source(tx: Tx, source: str) -> Wakeup | None:
    row = tx.one("SELECT * FROM agent_wakeups WHERE source = ?", (source,))
    return None if row is None else Wakeup.from_row(row)


def for_conversation(tx: Tx, conversation_id: str) -> list[Wakeup]:
    rows = tx.all(
        "SELECT * FROM agent_wakeups WHERE conversation_id = ? ORDER BY created_at, id",
        (conversation_id,),
    )
    return [Wakeup.from_row(row) for row in rows]


def due(tx: Tx, now: datetime, limit: int) -> list[Wakeup]:
    """Wakeups ready to run: scheduled and due, or running under a lease that ran out."""
    at = to_millis(now)
    # Two queries, each on its partial index: the cost follows what is due.
    rows = tx.all(
        "SELECT * FROM agent_wakeups WHERE status = 'scheduled' AND due_at <= ?"
        " ORDER BY due_at, id LIMIT ?",
        (at, limit),
    )
    rows += tx.all(
        "SELECT * FROM agent_wakeups WHERE status = 'running' AND lease_until <= ?"
        " ORDER BY lease_until, id LIMIT ?",
        (at, limit),
    )
    return [Wakeup.from_row(row) for row in rows[:limit]]


def claim(tx: Tx, wakeup: Wakeup, now: datetime, lease: timedelta) -> Message | bool | None:
    """Take a due wakeup for the turn that runs it; False when it is not due, or over.

    Its turn's claim is what keeps two processes from running it (see
    :mod:`pawflow.store.turns`): a wakeup still ``running`` is one whose turn was cut short,
    and the turn that took it over runs it now, whatever its own lease says. The first
    claim also posts the wakeup's text as a system-marked message (returned); a later one
    returns None and posts nothing again.
    """
    at = to_millis(now)
    changed = tx.execute(
        "UPDATE agent_wakeups SET status = 'running', lease_until = ?, attempts = attempts + 1"
        " WHERE id = ? AND ((status = 'scheduled' AND due_at <= ?) OR status = 'running')",
        (to_millis(now + lease), wakeup.id, at),
    )
    if not changed:
        return False
    current = get(tx, wakeup.id)
    if current is None or current.message_id is not None:
        return None
    message = append_message(
        tx,
        wakeup.conversation_id,
        role="system",
        author=f"agent:{wakeup.agent}",
        content=wakeup.text,
        data={"wakeup": wakeup.id, "source": wakeup.source, **wakeup.data},
        now=now,
    )
    tx.execute("UPDATE agent_wakeups SET message_id = ? WHERE id = ?", (message.id, wakeup.id))
    return message


def renew(tx: Tx, wakeup_id: str, now: datetime, lease: timedelta) -> bool:
    """Extend the lease of a running wakeup (the heartbeat of its turn)."""
    return bool(
        tx.execute(
            "UPDATE agent_wakeups SET lease_until = ? WHERE id = ? AND status = 'running'",
            (to_millis(now + lease), wakeup_id),
        )
    )


def mark_tool_started(tx: Tx, wakeup_id: str, now: datetime) -> bool:
    """Journal that the wakeup's approved call is about to run; False if it already was."""
    return bool(
        tx.execute(
            "UPDATE agent_wakeups SET tool_started_at = ? WHERE id = ? AND tool_started_at IS NULL",
            (to_millis(now), wakeup_id),
        )
    )


def finish(tx: Tx, wakeup_id: str, now: datetime) -> None:
    """A wakeup ends with its turn."""
    tx.execute(
        "UPDATE agent_wakeups SET status = 'done', lease_until = NULL, finished_at = ?"
        " WHERE id = ? AND status = 'running'",
        (to_millis(now), wakeup_id),
    )


def retry_later(tx: Tx, wakeup: Wakeup, error: str, now: datetime) -> WakeupStatus:
    """Put a failed run back in the queue with backoff, or give up after a few attempts."""
    row = tx.one("SELECT attempts FROM agent_wakeups WHERE id = ?", (wakeup.id,))
    attempts = 0 if row is None else int(row["attempts"])
    status: WakeupStatus = "failed" if attempts >= MAX_ATTEMPTS else "scheduled"
    tx.execute(
        "UPDATE agent_wakeups SET status = ?, due_at = ?, lease_until = NULL, last_error = ?,"
        " finished_at = ? WHERE id = ? AND status = 'running'",
        (
            status,
            to_millis(now + backoff(attempts)),
            error[:1000],
            to_millis(now) if status == "failed" else None,
            wakeup.id,
        ),
    )
    return status


def absorb(tx: Tx, *, source: str, target: str, signal_id: str) -> bool:
    """Take an answer for the turn that is still waiting on it, so no wakeup follows.

    The answer is either still a resolved continuation (deleted here) or already a scheduled
    wakeup (marked ``absorbed``). False when a poller already claimed it: then the wakeup
    carries the answer, and the waiting turn must not.
    """
    # The continuation first: on PostgreSQL a delivery in flight holds its row; once it
    # commits, the wakeup it wrote is visible to the next statement.
    deleted = continuations.discard(tx, target, signal_id)
    absorbed = tx.execute(
        "UPDATE agent_wakeups SET status = 'absorbed' WHERE source = ? AND status = 'scheduled'",
        (source,),
    )
    if deleted or absorbed:
        return True
    # Neither: nothing was ever parked (the answer is ours) unless a wakeup exists.
    return by_source(tx, source) is None
