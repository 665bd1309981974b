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
from pawflow.records import Event, Interaction
from pawflow.store.engine.database import Tx, sql

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
    """Log an event for each of ``audience``, written when the transaction commits."""
    _stage(tx, audience, (conversation_id, type_, json.dumps(data), None, to_millis(now)))


def append_interaction_event(
    tx: Tx, audience: Iterable[str], record: Interaction, type_: str, now: datetime
) -> None:
    """Log an interaction's event by reference: readers rebuild its JSON from the record.

    ``interaction_request`` shows the record as it was asked (pending); the other types
    show it as it is, since a request leaves ``pending`` once and never changes again.
    """
    _stage(tx, audience, (record.conversation_id, type_, "", record.id, to_millis(now)))


_STAGED = "events"
_Event = tuple[str | None, str, str, str | None, int]
"""conversation, type, data (JSON text, or empty for a reference), ref, created_at"""


def _stage(tx: Tx, audience: Iterable[str], event: _Event) -> None:
    recipients = sorted(set(audience))
    if not recipients:
        return
    staged: list[tuple[list[str], _Event]] | None = tx.local.get(_STAGED)
    if staged is None:
        staged = tx.local[_STAGED] = []
        tx.before_commit(lambda: _write(tx, staged))
    staged.append((recipients, event))


_NEXT_SEQ = (
    "max(COALESCE((SELECT max(user_seq) FROM events WHERE user_id = ?), 0),"
    " COALESCE((SELECT last_seq FROM event_counters WHERE user_id = ?), 0))"
)
"""SQLite: a user's newest number: their newest event's, or, once the retention sweep pruned
all of them, the last it pruned (kept in ``event_counters``)."""


def _write(tx: Tx, staged: list[tuple[list[str], _Event]]) -> None:
    """Number and insert the transaction's events, as its last statements.

    A user's numbers must become visible in order, or a reader resuming after N could skip
    a smaller one committed later. On SQLite, whose writers take turns, each event takes
    the number after the user's newest in the statement that inserts it. On PostgreSQL,
    each user's counter row stays locked until commit: all of them are taken here, at the
    very end, in one sorted order, so two writers never wait for each other in a circle,
    and no lock but a counter's is needed.
    """
    if tx.dialect == "postgres":
        counts: dict[str, int] = {}
        for recipients, _ in staged:
            for user in recipients:
                counts[user] = counts.get(user, 0) + 1
        _write_numbered(tx, staged, counts)
        return
    for recipients, (conversation_id, type_, encoded, ref, at) in staged:
        for user in recipients:
            sql(tx).execute(
                "INSERT INTO events (user_id, user_seq, conversation_id, type, data, ref,"
                f" created_at) VALUES (?, {_NEXT_SEQ} + 1, ?, ?, ?, ?, ?)",
                (user, user, user, conversation_id, type_, encoded, ref, at),
            )
            tx.notify(event_notice(user))
    staged.clear()


_COUNTED = (
    "WITH counter AS ("
    " INSERT INTO event_counters (user_id, last_seq) VALUES (?, ?)"
    " ON CONFLICT (user_id) DO UPDATE SET last_seq = event_counters.last_seq + ?"
    " RETURNING last_seq)"
    " INSERT INTO events (user_id, user_seq, conversation_id, type, data, ref, created_at)"
)
_ONE_EVENT = (
    _COUNTED + " SELECT ?, counter.last_seq, ?::text, ?::text, ?::text, ?::text, ?::bigint"
    " FROM counter"
)
"""PostgreSQL: a user's counter and their one event of the transaction (the usual case),
with plain parameters: arrays cost the driver several times more to send."""
_EVENTS = (
    _COUNTED + " SELECT ?, counter.last_seq - ? + e.n, e.conversation_id, e.type, e.data, e.ref,"
    " e.created_at FROM counter,"
    " unnest(?::text[], ?::text[], ?::text[], ?::text[], ?::bigint[]) WITH ORDINALITY"
    " AS e(conversation_id, type, data, ref, created_at, n) ORDER BY e.n"
)
"""PostgreSQL: a user's counter and their several events, in the order they were logged."""


def _write_numbered(tx: Tx, staged: list[tuple[list[str], _Event]], counts: dict[str, int]) -> None:
    """PostgreSQL: each user's counter taken and their events inserted in one statement
    (one round trip per user, not one per event and one more for the counter), the users
    in the same sorted order."""
    for user in sorted(counts):
        mine = [event for recipients, event in staged if user in recipients]
        count = counts[user]
        if count == 1:
            sql(tx).send(_ONE_EVENT, (user, 1, 1, user, *mine[0]))
        else:
            columns = [list(column) for column in zip(*mine, strict=True)]
            sql(tx).send(_EVENTS, (user, count, count, user, count, *columns))
        tx.notify(event_notice(user))
    staged.clear()


def last_seq(tx: Tx, user: str) -> int:
    """The number of the user's newest event ever logged (0 before the first)."""
    if tx.dialect == "sqlite":
        row = sql(tx).one(f"SELECT {_NEXT_SEQ} AS last_seq", (user, user))
    else:
        row = sql(tx).one("SELECT last_seq FROM event_counters WHERE user_id = ?", (user,))
    return 0 if row is None else int(row["last_seq"])


def events_after(tx: Tx, user: str, after_seq: int, limit: int) -> list[Event]:
    rows = sql(tx).all(
        "SELECT user_seq, type, conversation_id, data, ref, created_at FROM events"
        " WHERE user_id = ? AND user_seq > ? ORDER BY user_seq LIMIT ?",
        (user, after_seq, limit),
    )
    records = _referenced(tx, {row["ref"] for row in rows if row["ref"] is not None})
    found = []
    for row in rows:
        data = json.loads(row["data"]) if row["ref"] is None else records.get(row["ref"], {})
        if row["ref"] is not None and row["type"] == REQUEST_EVENT and data:
            data = {**data, **_AS_ASKED}
        found.append(
            Event.model_validate(
                {
                    "seq": row["user_seq"],
                    "type": row["type"],
                    "conversation_id": row["conversation_id"],
                    "data": data,
                    "created_at": row["created_at"],
                }
            )
        )
    return found


REQUEST_EVENT = "interaction_request"
_AS_ASKED = {
    "status": "pending",
    "answer": None,
    "answered_by": None,
    "answered_at": None,
    "answered_via": None,
    "answered_seq": None,
}


def _referenced(tx: Tx, ids: set[str]) -> dict[str, dict[str, Any]]:
    """The JSON of the interactions events refer to, by id."""
    if not ids:
        return {}
    listed = sorted(ids)
    rows = sql(tx).all(
        f"SELECT * FROM interactions WHERE id IN ({', '.join('?' for _ in listed)})", listed
    )
    return {row["id"]: Interaction.from_row(row).to_dict() for row in rows}


PRUNE_BATCH = 5000


def prune_events(tx: Tx, cutoff: datetime) -> int:
    """Remove one batch from the start of the log, up to its first event from ``cutoff`` on;
    how many went. The log is numbered as it grows, so its start is its oldest part: found
    through the sequence, with no index on the time (one page less written per event)."""
    row = sql(tx).one(
        "WITH batch AS (SELECT seq, created_at FROM events ORDER BY seq LIMIT ?)"
        " SELECT coalesce((SELECT min(seq) FROM batch WHERE created_at >= ?) - 1,"
        " (SELECT max(seq) FROM batch)) AS seq",
        (PRUNE_BATCH, to_millis(cutoff)),
    )
    if row is None or row["seq"] is None:
        return 0
    if tx.dialect == "sqlite":  # the numbers pruned stay taken (see _NEXT_SEQ)
        sql(tx).execute(
            "INSERT INTO event_counters (user_id, last_seq) SELECT user_id, max(user_seq)"
            " FROM events WHERE seq <= ? GROUP BY user_id ON CONFLICT (user_id)"
            " DO UPDATE SET last_seq = max(event_counters.last_seq, excluded.last_seq)",
            (int(row["seq"]),),
        )
    return sql(tx).execute("DELETE FROM events WHERE seq <= ?", (int(row["seq"]),))
