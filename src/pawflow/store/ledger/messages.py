"""Conversation history, notifications, and which users have a live client right now."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Any, Literal

from pawflow.clock import to_millis
from pawflow.errors import InvalidInput, NotFound
from pawflow.ids import new_id
from pawflow.records import Message
from pawflow.store.engine.database import Tx, sql
from pawflow.store.ledger.conversations import conversation_access, conversation_audience
from pawflow.store.ledger.events import append_event

Role = Literal["user", "assistant", "system", "notification"]
Urgency = Literal["low", "normal", "high"]
MAX_CONTENT = 100_000


def append_message(
    tx: Tx,
    conversation_id: str,
    *,
    role: Role = "user",
    author: str,
    content: str,
    data: dict[str, Any] | None = None,
    now: datetime,
) -> Message:
    """Add a message to the history and announce it to every member of the conversation."""
    if role not in ("user", "assistant", "system", "notification"):
        raise InvalidInput(f"unknown message role {role!r}")
    if not isinstance(content, str) or len(content) > MAX_CONTENT:
        raise InvalidInput(f"content must be a string of at most {MAX_CONTENT} characters")
    if sql(tx).one("SELECT 1 AS found FROM conversations WHERE id = ?", (conversation_id,)) is None:
        raise NotFound("conversation")
    tx.lock_key("pawflow:messages")  # keeps seq in commit order, as for events
    row = sql(tx).one(
        "INSERT INTO messages (id, conversation_id, role, author, content, data, created_at)"
        " VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING *",
        (
            new_id(),
            conversation_id,
            role,
            author,
            content,
            None if data is None else json.dumps(data),
            to_millis(now),
        ),
    )
    assert row is not None
    message = Message.from_row(row)
    audience = conversation_audience(tx, conversation_id, writers_only=False)
    append_event(tx, audience, conversation_id, "message", message.to_dict(), now)
    return message


def history(
    tx: Tx, conversation_id: str, *, user: str, after_seq: int = 0, limit: int = 500
) -> list[Message]:
    """Messages ``user`` may read (any member), oldest first, after ``after_seq``."""
    if conversation_access(tx, conversation_id, user) is None:
        raise NotFound("conversation")
    rows = sql(tx).all(
        "SELECT * FROM messages WHERE conversation_id = ? AND seq > ? ORDER BY seq LIMIT ?",
        (conversation_id, after_seq, limit),
    )
    return [Message.from_row(row) for row in rows]


def recent(tx: Tx, conversation_id: str, limit: int, until: str | None = None) -> list[Message]:
    """The last ``limit`` messages, oldest first, up to the message ``until`` if given
    (no access check: for the runtime)."""
    if until is None:
        rows = sql(tx).all(
            "SELECT * FROM messages WHERE conversation_id = ? ORDER BY seq DESC LIMIT ?",
            (conversation_id, limit),
        )
    else:
        rows = sql(tx).all(
            "SELECT * FROM messages WHERE conversation_id = ?"
            " AND seq <= (SELECT seq FROM messages WHERE id = ?) ORDER BY seq DESC LIMIT ?",
            (conversation_id, until, limit),
        )
    return [Message.from_row(row) for row in reversed(rows)]


def mark_live(tx: Tx, client_id: str, user: str, ttl: timedelta, now: datetime) -> None:
    """Record (or extend) a live client of ``user``; it lapses after ``ttl`` unless renewed."""
    sql(tx).execute(
        "INSERT INTO live_clients (client_id, user_id, expires_at) VALUES (?, ?, ?)"
        " ON CONFLICT (client_id) DO UPDATE SET expires_at = excluded.expires_at",
        (client_id, user, to_millis(now + ttl)),
    )


def drop_live(tx: Tx, client_id: str) -> None:
    sql(tx).execute("DELETE FROM live_clients WHERE client_id = ?", (client_id,))


def is_live(tx: Tx, user: str, now: datetime) -> bool:
    row = sql(tx).one(
        "SELECT 1 AS found FROM live_clients WHERE user_id = ? AND expires_at > ? LIMIT 1",
        (user, to_millis(now)),
    )
    return row is not None


def notify_user(
    tx: Tx,
    user: str,
    message: str,
    *,
    title: str | None = None,
    urgency: Urgency = "normal",
    conversation_id: str | None = None,
    now: datetime,
) -> Literal["sent", "queued"]:
    """Log a ``notification`` event (and a history entry); ``sent`` if a client is live.

    Either way the event is durable: a client that connects later replays it.
    """
    if urgency not in ("low", "normal", "high"):
        raise InvalidInput("urgency must be low, normal or high")
    data: dict[str, Any] = {"message": message, "title": title, "urgency": urgency}
    if conversation_id is not None:
        if conversation_access(tx, conversation_id, user) is None:
            raise NotFound("conversation")
        entry = append_message(
            tx,
            conversation_id,
            role="notification",
            author="pawflow",
            content=message,
            data={"title": title, "urgency": urgency},
            now=now,
        )
        data["message_id"] = entry.id
    append_event(tx, [user], conversation_id, "notification", data, now)
    return "sent" if is_live(tx, user, now) else "queued"
