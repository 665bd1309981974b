"""The durable event log: one row per recipient, written in the transaction it announces.

Each user's events are numbered by their own counter (``user_seq``), so an event id says
nothing about anyone else's activity; ``seq`` stays the log's internal, global order (the
retention sweep prunes by it). A notice names the user whose log grew (by a digest, so
user names never travel on a notification channel), and only that user's streams wake.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from pawflow.clock import to_millis
from pawflow.records import Event
from pawflow.store.database import Tx

EVENT_NOTICE = "event"
"""The notice prefix: ``event:<user key>``, see :func:`user_key`."""


def user_key(user: str) -> str:
    """A short, fixed-length key for a user's notices."""
    return hashlib.sha256(user.encode("utf-8", "surrogatepass")).hexdigest()[:24]


def event_notice(user: str) -> str:
    return f"{EVENT_NOTICE}:{user_key(user)}"


def append_event(
    tx: Tx,
    audience: Iterable[str],
    conversation_id: str | None,
    type_: str,
    data: dict[str, Any],
    now: datetime,
) -> None:
    recipients = sorted(set(audience))
    if not recipients:
        return
    # A user's numbers must become visible in order, or a reader resuming after N could
    # skip a smaller one committed later. Each user's counter row is held until commit;
    # taking them under one lock, in sorted order, keeps writers from deadlocking.
    tx.lock_key("pawflow:events")
    encoded = json.dumps(data)
    at = to_millis(now)
    for user in recipients:
        row = tx.one(
            "INSERT INTO event_counters (user_id, last_seq) VALUES (?, 1)"
            " ON CONFLICT (user_id) DO UPDATE SET last_seq = event_counters.last_seq + 1"
            " RETURNING last_seq",
            (user,),
        )
        assert row is not None
        tx.execute(
            "INSERT INTO events (user_id, user_seq, conversation_id, type, data, created_at)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            (user, row["last_seq"], conversation_id, type_, encoded, at),
        )
        tx.notify(event_notice(user))


def last_seq(tx: Tx, user: str) -> int:
    """The number of the user's newest event ever logged (0 before the first)."""
    row = tx.one("SELECT last_seq FROM event_counters WHERE user_id = ?", (user,))
    return 0 if row is None else int(row["last_seq"])


def events_after(tx: Tx, user: str, after_seq: int, limit: int) -> list[Event]:
    rows = tx.all(
        "SELECT user_seq, type, conversation_id, data, created_at FROM events"
        " WHERE user_id = ? AND user_seq > ? ORDER BY user_seq LIMIT ?",
        (user, after_seq, limit),
    )
    return [Event.from_row({**row, "seq": row["user_seq"]}) for row in rows]


PRUNE_BATCH = 5000


def prune_events(tx: Tx, cutoff: datetime) -> int:
    """Remove one batch from the start of the log, older than ``cutoff``; how many went."""
    row = tx.one(
        "SELECT max(seq) AS seq FROM (SELECT seq FROM events WHERE created_at < ?"
        " ORDER BY seq LIMIT ?) AS batch",
        (to_millis(cutoff), PRUNE_BATCH),
    )
    if row is None or row["seq"] is None:
        return 0
    return tx.execute("DELETE FROM events WHERE seq <= ?", (int(row["seq"]),))
