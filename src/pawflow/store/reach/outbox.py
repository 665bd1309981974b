"""The outbox: one row per (request, channel, recipient).

Publishing a request writes its rows in the publishing transaction (:func:`enqueue`), for
the owner's channels (where :mod:`pawflow.store.reach.addresses` says they are reached) or
the request's own ``notify`` list (``[]``: none), so no request is ever published without
its notifications, nor a notification written for a request that was not.

A dispatcher claims due rows (:func:`claim_due`): each claim bumps ``attempts`` and moves
``next_at`` past the retry backoff *before* anything is sent, so a process that dies while
sending leaves the row to be sent again after the backoff, with the same
``idempotency_key`` (a mail's Message-ID), never as a second, different message. The
pair ``(id, attempts)`` fences the outcome (:func:`mark_sent`, :func:`mark_failed`): a
process that lost the row to a later claim records nothing. Each outcome is logged as an
``interaction_delivery`` event for the owner.

When the request leaves ``pending`` (:func:`settle_request`), its sent copies are due to be
updated (``settle``: a channel that can change a sent message says who answered) and the
rows not sent yet are ``skipped``: nobody is asked a question that was already settled.

The rows are the request's delivery history (its details show them) until the retention
sweep forgets them, each by when its request settled (:func:`prune_settled`): links stay.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import partial
from typing import Any, Literal

from pawflow import telemetry
from pawflow.clock import iso, to_millis
from pawflow.ids import new_id
from pawflow.records import Interaction
from pawflow.store.engine.database import Tx, sql
from pawflow.store.engine.metrics import GaugeQuery, Rows, add_gauges, count
from pawflow.store.engine.rows import decode
from pawflow.store.ledger import audit
from pawflow.store.ledger.events import append_event
from pawflow.store.reach import answer_links
from pawflow.store.reach.addresses import NOTIFY_CHANNELS, Reach, check_notify, get_reach
from pawflow.store.reach.lanes import Busy, destination, pick
from pawflow.telemetry import Family, Sample

DeliveryStatus = Literal["queued", "sent", "failed", "skipped"]
MAX_ATTEMPTS = 8
MAX_BACKOFF = timedelta(minutes=30)
DELIVERY_EVENT = "interaction_delivery"
NOTICE = "outbox"
"""The notice of a transaction that queued a delivery: it wakes the dispatcher after the
commit, in every process (in the notification the row's event sends anyway: no statement)."""


def backoff(attempts: int) -> timedelta:
    """How long after its ``attempts``-th claim a row is tried again: 5 s, 10 s, 20 s, …"""
    return min(timedelta(seconds=5 * 2 ** min(max(attempts - 1, 0), 12)), MAX_BACKOFF)


# -- the rows ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class OutboxRow:
    """One notification of one request, by one channel, to one recipient."""

    id: str
    request_id: str
    channel: str
    recipient: str
    address: str
    status: DeliveryStatus
    attempts: int
    next_at: datetime
    idempotency_key: str
    external_ref: str | None
    last_error: str | None
    settle: Literal["none", "due", "done"]
    created_at: datetime
    sent_at: datetime | None

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> OutboxRow:
        return decode(cls, row)

    def to_dict(self) -> dict[str, Any]:
        """As ``get_interaction`` shows it (no address: the owner knows theirs)."""
        return {
            "id": self.id,
            "channel": self.channel,
            "recipient": self.recipient,
            "status": self.status,
            "attempts": self.attempts,
            "error": self.last_error,
            "created_at": iso(self.created_at),
            "sent_at": None if self.sent_at is None else iso(self.sent_at),
        }


def _event(tx: Tx, row: OutboxRow, conversation_id: str | None, now: datetime) -> None:
    data = {
        "request_id": row.request_id,
        "delivery_id": row.id,
        "channel": row.channel,
        "recipient": row.recipient,
        "status": row.status,
        "attempts": row.attempts,
        "error": row.last_error,
    }
    owner = sql(tx).one("SELECT owner FROM interactions WHERE id = ?", (row.request_id,))
    audience = {row.recipient} | ({owner["owner"]} if owner else set())
    append_event(tx, audience, conversation_id, DELIVERY_EVENT, data, now)


def enqueue(
    tx: Tx,
    record: Interaction,
    notify: Sequence[str] | None,
    now: datetime,
    deciders: Sequence[str] = (),
    owner_reach: Reach | None = None,  # read with the question, if it was
) -> list[OutboxRow]:
    """Write the request's rows: its ``notify`` channels, else each recipient's own. The
    recipient is the owner, or, for a request with assignees, each person who may decide
    (``deciders``); the owner's webhooks follow the request either way.

    The ``webhook`` row is sent at once: it stands for the request's webhook deliveries
    (:mod:`pawflow.store.reach.webhooks`), written beside it, which have their own log."""
    wanted = None if notify is None else check_notify(list(notify))
    owner = owner_reach or get_reach(tx, record.owner)
    plan: list[tuple[Reach, str]] = []
    for reach in [owner] if not deciders else [owner, *map(partial(get_reach, tx), deciders)]:
        channels = reach.channels() if wanted is None else wanted
        plan += [
            (reach, c)
            for c in channels
            if not deciders or (c == "webhook") == (reach is owner)  # the owner's: webhooks
        ]
    written = []
    for reach, channel in dict.fromkeys(plan):
        row = _insert(tx, record, reach, channel, now)
        if row is not None:
            _event(tx, row, record.conversation_id, now)
            written.append(row)
    return written


def renotify(tx: Tx, record: Interaction, recipients: Sequence[str], now: datetime) -> int:
    """Send the pending request again to ``recipients`` by their own channels (a reminder, an
    escalation, a reassignment): a copy already sent or failed is queued again under a new
    idempotency key; one still queued goes once. Returns how many rows were queued."""
    queued = 0
    for user in dict.fromkeys(recipients):
        reach = get_reach(tx, user)
        for channel in reach.channels():
            if channel == "webhook":  # a webhook follows its owner's requests, not people
                continue
            row = _insert(tx, record, reach, channel, now)
            if row is None and reach.address(channel) is not None:
                key = new_id()
                found = sql(tx).one(
                    "UPDATE outbox SET status = 'queued', attempts = 0, next_at = ?,"
                    " idempotency_key = id || '.' || ?, last_error = NULL, sent_at = NULL"
                    " WHERE request_id = ? AND channel = ? AND recipient = ?"
                    " AND status <> 'queued' RETURNING *",
                    (to_millis(now), key, record.id, channel, user),
                )
                row = None if found is None else OutboxRow.from_row(found)
                if row is not None:
                    tx.notify(NOTICE)
            if row is not None:
                _event(tx, row, record.conversation_id, now)
                queued += row.status == "queued"
    return queued


def _insert(
    tx: Tx, record: Interaction, reach: Reach, channel: str, now: datetime
) -> OutboxRow | None:
    """The new row for ``reach``'s user by ``channel``; None if the request has one."""
    address = reach.address(channel)
    row_id = new_id()
    missing = address is None
    status = "failed" if missing else "sent" if channel == "webhook" else "queued"
    inserted = sql(tx).one(
        "INSERT INTO outbox (id, request_id, channel, recipient, address, status, attempts,"
        " next_at, idempotency_key, last_error, created_at, sent_at) VALUES (?, ?, ?, ?, ?,"
        " ?, 0, ?, ?, ?, ?, ?) ON CONFLICT (request_id, channel, recipient) DO NOTHING"
        " RETURNING *",
        (
            row_id,
            record.id,
            channel,
            reach.user,
            address or "",
            status,
            to_millis(now),
            f"{row_id}.{record.id}",
            _missing(reach.user, channel) if missing else None,
            to_millis(now),
            to_millis(now) if status == "sent" else None,
        ),
    )
    if inserted is None:
        return None
    if status == "queued":
        tx.notify(NOTICE)
    return OutboxRow.from_row(inserted)


def _missing(user: str, channel: str) -> str:
    if channel == "webhook":
        return f"{user} has no webhook"
    if channel == "push":
        return f"{user} has no device subscribed to push"
    return f"{user} has no {channel} address"


def webhooks_on(tx: Tx, request_id: str) -> bool:
    """Whether the request's events go to its owner's webhooks (its ``webhook`` row)."""
    row = sql(tx).one(
        "SELECT 1 AS found FROM outbox WHERE request_id = ? AND channel = 'webhook'"
        " AND status = 'sent'",
        (request_id,),
    )
    return row is not None


def deliveries(tx: Tx, request_id: str) -> list[OutboxRow]:
    rows = sql(tx).all(
        "SELECT * FROM outbox WHERE request_id = ? ORDER BY created_at, channel, recipient",
        (request_id,),
    )
    return [OutboxRow.from_row(row) for row in rows]


def claim_due(
    tx: Tx, now: datetime, limit: int, busy: Busy = (), *, channel: str | None = None
) -> list[OutboxRow]:
    """Claim up to ``limit`` rows due to be sent (by ``channel``, or any), the oldest of
    each destination not ``busy`` (one per destination): each claim counts as an attempt
    and moves ``next_at`` past its backoff, committed before anything is sent."""
    state = "status = 'queued'" + ("" if channel is None else " AND channel = ?")
    params = () if channel is None else (channel,)
    return _claim(tx, _first_due(tx, state, now, limit, busy, params), state, now, params)


def claim_settle(tx: Tx, now: datetime, limit: int, busy: Busy = ()) -> list[OutboxRow]:
    """Claim sent rows whose request was settled: their copies are due to be updated."""
    state = "settle = 'due'"
    return _claim(tx, _first_due(tx, state, now, limit, busy), state, now)


def _first_due(
    tx: Tx, state: str, now: datetime, limit: int, busy: Busy, params: tuple[str, ...] = ()
) -> list[dict[str, Any]]:
    # One candidate per address (per relay channel, per push recipient), oldest first; one
    # per idle destination.
    rows = sql(tx).all(
        "SELECT id, attempts, channel, address, recipient FROM (SELECT id, attempts, channel,"
        " address, recipient, next_at, ROW_NUMBER() OVER (PARTITION BY channel, CASE WHEN"
        " channel IN ('email', 'slack') THEN '' WHEN channel = 'push' THEN recipient ELSE"
        " address END ORDER BY next_at, id) AS n FROM outbox"
        f" WHERE {state} AND next_at <= ?) AS due WHERE n = 1 ORDER BY next_at, id LIMIT ?",
        (*params, to_millis(now), limit + 4 * len(busy)),
    )
    return pick(rows, _destination_of, limit, busy)


def _destination_of(row: dict[str, Any]) -> str:
    return destination(row["channel"], row["address"], row["recipient"])


def _claim(
    tx: Tx, rows: list[dict[str, Any]], state: str, now: datetime, params: tuple[str, ...] = ()
) -> list[OutboxRow]:
    claimed = []
    for row in rows:
        attempts = int(row["attempts"]) + 1
        updated = sql(tx).one(
            f"UPDATE outbox SET attempts = ?, next_at = ? WHERE id = ? AND attempts = ?"
            f" AND {state} RETURNING *",
            (attempts, to_millis(now + backoff(attempts)), row["id"], attempts - 1, *params),
        )
        if updated is not None:
            claimed.append(OutboxRow.from_row(updated))
    return claimed


def _conversation(tx: Tx, request_id: str) -> str | None:
    row = sql(tx).one("SELECT conversation_id FROM interactions WHERE id = ?", (request_id,))
    return None if row is None else str(row["conversation_id"])


def mark_sent(tx: Tx, claimed: OutboxRow, external_ref: str | None, now: datetime) -> bool:
    """Record the claimed row as sent; False if it was claimed again meanwhile. A request
    settled while it was being sent has its copy updated next."""
    updated = sql(tx).one(
        "UPDATE outbox SET status = 'sent', sent_at = ?, external_ref = ?, last_error = NULL,"
        " settle = CASE WHEN EXISTS (SELECT 1 FROM interactions WHERE id = outbox.request_id"
        " AND status <> 'pending') THEN 'due' ELSE 'none' END, next_at = ?"
        " WHERE id = ? AND attempts = ? AND status = 'queued' RETURNING *",
        (to_millis(now), external_ref, to_millis(now), claimed.id, claimed.attempts),
    )
    if updated is None:
        return False
    row = OutboxRow.from_row(updated)
    _event(tx, row, _conversation(tx, claimed.request_id), now)
    count(tx, telemetry.NOTIFICATIONS, channel=row.channel, result="sent")
    if row.channel != "webhook":  # a webhook's own deliveries keep their log
        detail = {"to": row.recipient}
        audit.record(tx, row.request_id, "delivered", now, via=row.channel, detail=detail)
    return True


def mark_failed(
    tx: Tx, claimed: OutboxRow, reason: str, now: datetime, *, permanent: bool = False
) -> bool:
    """Record a failed attempt: retried after the backoff, unless ``permanent`` or the
    attempts are spent (then ``failed``, with the reason)."""
    final = permanent or claimed.attempts >= MAX_ATTEMPTS
    updated = sql(tx).one(
        "UPDATE outbox SET last_error = ?, status = ? WHERE id = ? AND attempts = ?"
        " AND status = 'queued' RETURNING *",
        (reason[:1000], "failed" if final else "queued", claimed.id, claimed.attempts),
    )
    if updated is None:
        return False
    _event(tx, OutboxRow.from_row(updated), _conversation(tx, claimed.request_id), now)
    result = "failed" if final else "retried"
    count(tx, telemetry.NOTIFICATIONS, channel=claimed.channel, result=result)
    return True


def mark_settled(tx: Tx, claimed: OutboxRow, *, error: str | None = None) -> bool:
    """The copy was updated (or could not be, ``error``, after its attempts): done."""
    if error is not None and claimed.attempts < MAX_ATTEMPTS:
        sql(tx).execute(
            "UPDATE outbox SET last_error = ? WHERE id = ? AND attempts = ?",
            (error[:1000], claimed.id, claimed.attempts),
        )
        return False
    return (
        sql(tx).execute(
            "UPDATE outbox SET settle = 'done' WHERE id = ? AND attempts = ? AND settle = 'due'",
            (claimed.id, claimed.attempts),
        )
        > 0
    )


def settle_request(tx: Tx, record: Interaction, now: datetime) -> bool:
    """The request left ``pending``: update its sent copies, send none of the others.
    Returns whether its events go to its owner's webhooks (:func:`webhooks_on`). A request
    nobody was notified of (no row) costs one statement."""
    rows = sql(tx).all("SELECT channel, status FROM outbox WHERE request_id = ?", (record.id,))
    if not rows:
        return False
    sql(tx).execute(  # each row notes when its request settled (the retention sweep's key)
        "UPDATE outbox SET settled_at = ?, settle = CASE WHEN status = 'sent' AND channel"
        " <> 'webhook' THEN 'due' ELSE settle END, next_at = CASE WHEN status = 'sent'"
        " AND channel <> 'webhook' THEN ? ELSE next_at END WHERE request_id = ?",
        (to_millis(now), to_millis(now), record.id),
    )
    if any(row["status"] == "sent" and row["channel"] != "webhook" for row in rows):
        tx.notify(NOTICE)
    skipped = sql(tx).all(
        "UPDATE outbox SET status = 'skipped', last_error = ? WHERE request_id = ?"
        " AND status = 'queued' RETURNING *",
        (f"the request was {record.status} before it was sent", record.id),
    )
    for row in skipped:
        _event(tx, OutboxRow.from_row(row), record.conversation_id, now)
    return any(row["channel"] == "webhook" and row["status"] == "sent" for row in rows)


def prune_settled(tx: Tx, before: datetime, limit: int) -> int:
    """Forget up to ``limit`` done rows (not queued, no copy to update) of requests settled
    before ``before``, found by when they settled (a pending request's are never read)."""
    at = to_millis(before)
    rows = sql(tx).all(
        "SELECT id FROM outbox WHERE settled_at IS NOT NULL AND status <> 'queued'"
        " AND settled_at < ? AND created_at < ? AND settle <> 'due' ORDER BY settled_at LIMIT ?",
        (at, at, limit),
    )
    ids = [row["id"] for row in rows]
    answer_links.forget_outbox(tx, ids)
    marks = ", ".join("?" for _ in ids)
    return sql(tx).execute(f"DELETE FROM outbox WHERE id IN ({marks})", ids) if ids else 0


def request_of(tx: Tx, request_id: str) -> Interaction:
    """The request a row notifies of, as it is now (for the dispatcher, not scoped)."""
    row = sql(tx).one("SELECT * FROM interactions WHERE id = ?", (request_id,))
    assert row is not None, "an outbox row's request is never deleted"
    return Interaction.from_row(row)


def find_by_key(tx: Tx, idempotency_key: str) -> OutboxRow | None:
    """The row whose message carried ``idempotency_key`` (a reply names it)."""
    row = sql(tx).one("SELECT * FROM outbox WHERE idempotency_key = ?", (idempotency_key,))
    return None if row is None else OutboxRow.from_row(row)


# -- what /metrics shows of it ---------------------------------------------------------------

OUTBOX_QUEUED = Family(
    "pawflow_outbox_queued",
    "gauge",
    "Notifications waiting to be sent (or tried again), by channel.",
    ("channel",),
)
OUTBOX_OLDEST = Family(
    "pawflow_outbox_oldest_seconds",
    "gauge",
    "Age of the oldest notification still waiting to be sent, by channel (0: none).",
    ("channel",),
)


def _outbox_samples(rows: Rows, now: int) -> list[Sample]:
    found = {str(row["a"]): (int(row["n"]), row["t"]) for row in rows["outbox"]}
    channels = sorted({*NOTIFY_CHANNELS, *found} - {"webhook"})
    samples = []
    for channel in channels:
        queued, oldest = found.get(channel, (0, None))
        age = 0.0 if oldest is None else max(0.0, (now - int(oldest)) / 1000)
        samples.append(Sample(OUTBOX_QUEUED.name, {"channel": channel}, queued))
        samples.append(Sample(OUTBOX_OLDEST.name, {"channel": channel}, age))
    return samples


add_gauges(
    GaugeQuery(
        "outbox",
        # The partial index on queued rows: what waits, never the history of what was sent.
        "SELECT channel AS a, '' AS b, '' AS c, COUNT(*) AS n, MIN(created_at) AS t,"
        " CAST(NULL AS BIGINT) AS s FROM outbox WHERE status = 'queued' GROUP BY channel",
        (OUTBOX_QUEUED, OUTBOX_OLDEST),
        _outbox_samples,
    )
)
