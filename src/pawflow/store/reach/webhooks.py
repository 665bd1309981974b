"""Webhooks: a user's subscriptions to the events of their requests, and every delivery.

A webhook is a URL, the events it wants (:data:`EVENTS`) and a signing secret (``whsec_…``,
shown once when it is made, kept as it is: a Standard Webhooks signature is an HMAC, so the
sender needs the secret itself). Each is its user's own: another user's webhook is as
unknown as one that does not exist.

When a request of theirs is published (:func:`on_created`) or settled (:func:`on_settled`),
one delivery per subscribed webhook is written in that same transaction, its body fixed
then: the event's name, its time, and the request's record as it is at that moment. Its
``id`` is the ``webhook-id`` every attempt carries, so a receiver that saw it once can
ignore it again. The dispatcher claims due deliveries exactly as it claims outbox rows
(each claim counts an attempt and moves ``next_at`` past the backoff before anything is
sent) and records each outcome; the deliveries are the webhook's log. A delivery sent or
given up is kept for a retention after it was written, then forgotten by the retention sweep
(:func:`prune_settled`), whether its request is settled or not: the log is the webhook's,
and each event of a request is written once.
"""

from __future__ import annotations

import base64
import json
import secrets
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from pawflow import telemetry
from pawflow.clock import from_millis, iso, to_millis
from pawflow.errors import FieldError, InvalidInput, NotFound
from pawflow.ids import new_id
from pawflow.records import Interaction
from pawflow.store.engine.database import Tx, sql
from pawflow.store.engine.metrics import count
from pawflow.store.reach.lanes import Busy, destination, pick
from pawflow.store.reach.outbox import MAX_ATTEMPTS, NOTICE, backoff

EVENTS: tuple[str, ...] = (
    "interaction.created",
    "interaction.answered",
    "interaction.expired",
    "interaction.cancelled",
)
"""What a webhook may subscribe to."""
DeliveryStatus = Literal["queued", "sent", "failed"]
LOG_LIMIT = 200
Queue = Literal["webhook_deliveries", "a2a_push_deliveries"]
"""The tables of deliveries the dispatcher sends the same way (same columns of state)."""
DELIVERIES: Queue = "webhook_deliveries"
PENDING_CAP = 1000
"""The most deliveries queued for one webhook (or one push config); past it, a new one is
recorded ``failed`` with :data:`DROPPED_CAP` instead of queued."""
DROPPED_CAP = "dropped: cap"
MAX_WEBHOOKS = 10
"""How many webhooks a user may have by default (``PAWFLOW_MAX_WEBHOOKS``)."""


@dataclass(frozen=True)
class Webhook:
    id: str
    user: str
    url: str
    events: tuple[str, ...]
    secret: str
    created_at: datetime

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> Webhook:
        return cls(
            id=row["id"],
            user=row["user_id"],
            url=row["url"],
            events=tuple(json.loads(row["events"])),
            secret=row["secret"],
            created_at=from_millis(int(row["created_at"])),
        )

    def to_dict(self) -> dict[str, Any]:
        """As ``list_webhooks`` shows it: never the secret."""
        return {
            "id": self.id,
            "url": self.url,
            "events": list(self.events),
            "created_at": iso(self.created_at),
        }


@dataclass(frozen=True)
class WebhookDelivery:
    """One event on its way to one webhook."""

    id: str
    webhook_id: str
    request_id: str
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
    def from_row(cls, row: dict[str, Any]) -> WebhookDelivery:
        return cls(
            id=row["id"],
            webhook_id=row["webhook_id"],
            request_id=row["request_id"],
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

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "webhook_id": self.webhook_id,
            "request_id": self.request_id,
            "event": self.event,
            "status": self.status,
            "attempts": self.attempts,
            "error": self.last_error,
            "response_status": self.response_status,
            "created_at": iso(self.created_at),
            "next_at": None if self.status != "queued" else iso(self.next_at),
            "sent_at": None if self.sent_at is None else iso(self.sent_at),
        }


# -- the subscriptions -------------------------------------------------------------------------


def new_secret() -> str:
    """``whsec_`` and 32 random bytes in base64, as Standard Webhooks writes a secret."""
    return "whsec_" + base64.b64encode(secrets.token_bytes(32)).decode("ascii")


def create(
    tx: Tx,
    user: str,
    url: str,
    events: tuple[str, ...],
    now: datetime,
    *,
    limit: int = MAX_WEBHOOKS,
) -> Webhook:
    """A new webhook (``url`` and ``events`` already checked); the result has its secret.
    A user who has ``limit`` webhooks already is refused (:class:`InvalidInput` on ``url``)."""
    if count_for(tx, user) >= limit:
        message = f"at most {limit} webhooks per user: delete one first"
        raise InvalidInput(message, [FieldError("url", message)])
    row = sql(tx).one(
        "INSERT INTO webhooks (id, user_id, url, events, secret, created_at)"
        " VALUES (?, ?, ?, ?, ?, ?) RETURNING *",
        (new_id(), user, url, json.dumps(list(events)), new_secret(), to_millis(now)),
    )
    assert row is not None
    return Webhook.from_row(row)


def list_for(tx: Tx, user: str) -> list[Webhook]:
    rows = sql(tx).all("SELECT * FROM webhooks WHERE user_id = ? ORDER BY created_at, id", (user,))
    return [Webhook.from_row(row) for row in rows]


def get(tx: Tx, user: str, webhook_id: str) -> Webhook:
    """The caller's webhook; another's is as unknown as none (:class:`NotFound`)."""
    row = sql(tx).one("SELECT * FROM webhooks WHERE id = ? AND user_id = ?", (webhook_id, user))
    if row is None:
        raise NotFound("webhook")
    return Webhook.from_row(row)


def delete(tx: Tx, user: str, webhook_id: str) -> None:
    """Forget the caller's webhook and its log (what was queued is not sent)."""
    get(tx, user, webhook_id)
    sql(tx).execute("DELETE FROM webhook_deliveries WHERE webhook_id = ?", (webhook_id,))
    sql(tx).execute("DELETE FROM webhooks WHERE id = ?", (webhook_id,))


def count_for(tx: Tx, user: str) -> int:
    """How many webhooks ``user`` has."""
    row = sql(tx).one("SELECT COUNT(*) AS n FROM webhooks WHERE user_id = ?", (user,))
    return 0 if row is None else int(row["n"])


def has_any(tx: Tx, user: str) -> bool:
    return sql(tx).one("SELECT 1 AS found FROM webhooks WHERE user_id = ?", (user,)) is not None


def log(tx: Tx, user: str, webhook_id: str, limit: int = LOG_LIMIT) -> list[WebhookDelivery]:
    """The webhook's deliveries, newest first."""
    get(tx, user, webhook_id)
    rows = sql(tx).all(
        "SELECT * FROM webhook_deliveries WHERE webhook_id = ?"
        " ORDER BY created_at DESC, id DESC LIMIT ?",
        (webhook_id, max(1, min(limit, LOG_LIMIT))),
    )
    return [WebhookDelivery.from_row(row) for row in rows]


# -- the events ----------------------------------------------------------------------------------


def _enqueue(tx: Tx, record: Interaction, event: str, now: datetime) -> int:
    body = json.dumps(
        {"type": event, "timestamp": iso(now), "data": {"interaction": record.to_dict()}},
        separators=(",", ":"),
    )
    written = 0
    for hook in list_for(tx, record.owner):
        if event not in hook.events or hook.created_at > record.created_at:
            continue  # a webhook hears of the requests published after it was made
        inserted = insert_capped(
            tx,
            DELIVERIES,
            {
                "id": "msg_" + new_id(),
                "webhook_id": hook.id,
                "request_id": record.id,
                "event": event,
                "payload": body,
            },
            now,
        )
        written += inserted is not None
    return written


def on_created(tx: Tx, record: Interaction, now: datetime) -> int:
    return _enqueue(tx, record, "interaction.created", now)


def on_settled(tx: Tx, record: Interaction, now: datetime) -> int:
    return _enqueue(tx, record, f"interaction.{record.status}", now)


def claim_due(tx: Tx, now: datetime, limit: int, busy: Busy = ()) -> list[WebhookDelivery]:
    """Claim due deliveries, the oldest of each destination not ``busy``: each claim counts
    an attempt and moves ``next_at`` past its backoff, committed before anything is sent."""
    return [WebhookDelivery.from_row(row) for row in claim_rows(tx, DELIVERIES, now, limit, busy)]


_URL_OF: dict[Queue, tuple[str, str]] = {
    DELIVERIES: ("(SELECT url FROM webhooks WHERE id = d.webhook_id)", "d.webhook_id"),
    "a2a_push_deliveries": (
        "(SELECT url FROM a2a_push_configs AS c WHERE c.task_id = d.task_id"
        " AND c.id = d.config_id)",
        "d.task_id, d.config_id",
    ),
}


def claim_rows(
    tx: Tx, table: Queue, now: datetime, limit: int, busy: Busy = ()
) -> list[dict[str, Any]]:
    """Claim due rows of ``table``, as :func:`claim_due` does."""
    url, target = _URL_OF[table]
    rows = sql(tx).all(
        f"SELECT id, attempts, url FROM (SELECT d.id, d.attempts, d.next_at, {url} AS url,"
        f" ROW_NUMBER() OVER (PARTITION BY {target} ORDER BY d.next_at, d.id) AS n"
        f" FROM {table} AS d WHERE d.status = 'queued' AND d.next_at <= ?) AS due"
        " WHERE n = 1 ORDER BY next_at, id LIMIT ?",
        (to_millis(now), limit + 4 * len(busy)),
    )
    claimed = []
    for row in pick(rows, lambda row: destination("", row["url"] or ""), limit, busy):
        attempts = int(row["attempts"]) + 1
        updated = sql(tx).one(
            f"UPDATE {table} SET attempts = ?, next_at = ? WHERE id = ?"
            " AND attempts = ? AND status = 'queued' RETURNING *",
            (attempts, to_millis(now + backoff(attempts)), row["id"], attempts - 1),
        )
        if updated is not None:
            claimed.append(updated)
    return claimed


def insert_capped(tx: Tx, table: Queue, columns: dict[str, Any], now: datetime) -> bool:
    """Queue a delivery, or, when its target has :data:`PENDING_CAP` queued already, record
    it ``failed`` as ``dropped: cap`` (counted, in the log: never lost in silence). Returns
    whether it was written (False: it was there already)."""
    where = {DELIVERIES: "webhook_id = ?", "a2a_push_deliveries": "task_id = ? AND config_id = ?"}
    keys = (
        (columns["webhook_id"],)
        if table == DELIVERIES
        else (columns["task_id"], columns["config_id"])
    )
    names = ", ".join(columns)
    marks = ", ".join("?" for _ in columns)
    conflict = (
        " ON CONFLICT (webhook_id, request_id, event) DO NOTHING" if table == DELIVERIES else ""
    )
    inserted = sql(tx).one(
        f"INSERT INTO {table} ({names}, status, last_error, attempts, next_at, created_at)"
        f" SELECT {marks}, CASE WHEN q.n >= ? THEN 'failed' ELSE 'queued' END,"
        " CASE WHEN q.n >= ? THEN ? END, 0, ?, ?"
        f" FROM (SELECT COUNT(*) AS n FROM (SELECT 1 AS one FROM {table}"
        f" WHERE {where[table]} AND status = 'queued' LIMIT ?) AS w) AS q WHERE 1 = 1"
        f"{conflict} RETURNING status",
        (
            *columns.values(),
            PENDING_CAP,
            PENDING_CAP,
            DROPPED_CAP,
            to_millis(now),
            to_millis(now),
            *keys,
            PENDING_CAP,
        ),
    )
    if inserted is not None and inserted["status"] == "queued":
        tx.notify(NOTICE)  # the dispatcher sends it at once
    if inserted is not None and inserted["status"] == "failed":
        channel = "webhook" if table == DELIVERIES else "a2a_push"
        count(tx, telemetry.NOTIFICATIONS, channel=channel, result="dropped")
    return inserted is not None


def webhook_of(tx: Tx, delivery: WebhookDelivery) -> Webhook | None:
    row = sql(tx).one("SELECT * FROM webhooks WHERE id = ?", (delivery.webhook_id,))
    return None if row is None else Webhook.from_row(row)


def mark_sent(tx: Tx, claimed: WebhookDelivery, response_status: int, now: datetime) -> bool:
    return record_sent(tx, DELIVERIES, claimed.id, claimed.attempts, response_status, now)


def record_sent(
    tx: Tx, table: Queue, delivery_id: str, attempts: int, response_status: int, now: datetime
) -> bool:
    """Record the claimed attempt ``attempts`` of a row of ``table`` as sent."""
    return (
        sql(tx).execute(
            f"UPDATE {table} SET status = 'sent', sent_at = ?, response_status = ?,"
            " last_error = NULL WHERE id = ? AND attempts = ? AND status = 'queued'",
            (to_millis(now), response_status, delivery_id, attempts),
        )
        > 0
    )


def mark_failed(
    tx: Tx,
    claimed: WebhookDelivery,
    reason: str,
    *,
    response_status: int | None = None,
    permanent: bool = False,
) -> bool:
    """A failed attempt: tried again after the backoff, unless ``permanent`` or the attempts
    are spent (then ``failed``)."""
    return record_failed(
        tx,
        DELIVERIES,
        claimed.id,
        claimed.attempts,
        reason,
        response_status=response_status,
        permanent=permanent,
    )


def record_failed(
    tx: Tx,
    table: Queue,
    delivery_id: str,
    attempts: int,
    reason: str,
    *,
    response_status: int | None = None,
    permanent: bool = False,
) -> bool:
    """Record the claimed attempt ``attempts`` of a row of ``table`` as failed."""
    final = permanent or attempts >= MAX_ATTEMPTS
    return (
        sql(tx).execute(
            f"UPDATE {table} SET last_error = ?, response_status = ?, status = ?"
            " WHERE id = ? AND attempts = ? AND status = 'queued'",
            (
                reason[:1000],
                response_status,
                "failed" if final else "queued",
                delivery_id,
                attempts,
            ),
        )
        > 0
    )


def prune_settled(tx: Tx, before: datetime, limit: int) -> int:
    """Forget up to ``limit`` deliveries written before ``before`` that were sent or given
    up; how many."""
    return prune_rows(tx, DELIVERIES, before, limit)


def prune_rows(tx: Tx, table: Queue, before: datetime, limit: int) -> int:
    """Forget up to ``limit`` rows of ``table`` written before ``before`` and no longer
    queued, oldest first (the partial index ``<table>_settled``); how many."""
    return sql(tx).execute(
        f"DELETE FROM {table} WHERE id IN (SELECT id FROM {table} WHERE status <> 'queued'"
        " AND created_at < ? ORDER BY created_at LIMIT ?) AND status <> 'queued'",
        (to_millis(before), limit),
    )


def anything_due(tx: Tx, now: datetime) -> bool:
    """Whether a delivery of any kind (outbox row, copy to update, webhook delivery, A2A
    push) is due: one read, for a dispatcher told only that the store changed."""
    at = to_millis(now)
    found = sql(tx).one(
        "SELECT 1 AS due WHERE EXISTS (SELECT 1 FROM outbox WHERE (status = 'queued'"
        " OR settle = 'due') AND next_at <= ?) OR EXISTS (SELECT 1 FROM webhook_deliveries"
        " WHERE status = 'queued' AND next_at <= ?) OR EXISTS (SELECT 1 FROM"
        " a2a_push_deliveries WHERE status = 'queued' AND next_at <= ?)",
        (at, at, at),
    )
    return found is not None
