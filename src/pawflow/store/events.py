"""The durable event log: one row per recipient, written in the transaction it announces."""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from pawflow.clock import to_millis
from pawflow.records import Event
from pawflow.store.database import Tx

EVENT_NOTICE = "event"


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
    # Sequence numbers must become visible in order, or a reader resuming after seq N could
    # skip a smaller one committed later; one writer at a time keeps them in commit order.
    tx.lock_key("pawflow:events")
    encoded = json.dumps(data)
    at = to_millis(now)
    for user in recipients:
        tx.execute(
            "INSERT INTO events (user_id, conversation_id, type, data, created_at)"
            " VALUES (?, ?, ?, ?, ?)",
            (user, conversation_id, type_, encoded, at),
        )
    tx.notify(EVENT_NOTICE)


def events_after(tx: Tx, user: str, after_seq: int, limit: int) -> list[Event]:
    rows = tx.all(
        "SELECT seq, type, conversation_id, data, created_at FROM events"
        " WHERE user_id = ? AND seq > ? ORDER BY seq LIMIT ?",
        (user, after_seq, limit),
    )
    return [Event.from_row(row) for row in rows]
