"""The tables of the ledger and the engine: users and conversations, their messages and
events, the audit trail, and the gauges read from the tables."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from typing import Any, Literal

from pawflow.records import Conversation, FileRef, Message
from pawflow.store.engine import metrics as _metrics
from pawflow.store.engine.database import Row
from pawflow.store.engine.metrics import GaugeQuery
from pawflow.store.ledger import audit as _audit
from pawflow.store.ledger import conversations as _conversations
from pawflow.store.ledger import events as _events
from pawflow.store.ledger import messages as _messages
from pawflow.store.ledger.messages import Role, Urgency
from pawflow.store.unit.binding import Table, bound

__all__ = ["AuditTable", "ConversationsTable", "EventsTable", "MessagesTable", "MetricsTable"]


class AuditTable(Table):
    """The audit trail."""

    trail = bound(_audit.trail)
    since = bound(_audit.since)


class ConversationsTable(Table):
    """Users, conversations, their members and files."""

    def ensure_user(self, user: str) -> str:
        return _conversations.ensure_user(self.tx, user, self.now())

    user_exists = bound(_conversations.user_exists)
    has_users = bound(_conversations.has_users)

    def create_conversation(self, owner: str, title: str) -> Conversation:
        return _conversations.create_conversation(self.tx, owner, title, self.now())

    conversation_access = bound(_conversations.conversation_access)
    may_write = bound(_conversations.may_write)
    require_write = bound(_conversations.require_write)
    find_conversation = bound(_conversations.find_conversation)
    get_conversation = bound(_conversations.get_conversation)
    list_conversations = bound(_conversations.list_conversations)

    def share_conversation(
        self,
        conversation_id: str,
        *,
        user: str,
        with_user: str,
        access: Literal["read", "write"],
        known_users_only: bool = False,
    ) -> Conversation:
        return _conversations.share_conversation(
            self.tx,
            conversation_id,
            user=user,
            with_user=with_user,
            access=access,
            now=self.now(),
            known_users_only=known_users_only,
        )

    conversation_members = bound(_conversations.conversation_members)
    conversation_audience = bound(_conversations.conversation_audience)

    def add_file(
        self, owner: str, name: str, media_type: str, content: bytes, *, max_bytes: int
    ) -> FileRef:
        return _conversations.add_file(
            self.tx, owner, name, media_type, content, max_bytes=max_bytes, now=self.now()
        )

    discard_files = bound(_conversations.discard_files)
    get_file = bound(_conversations.get_file)
    file_content = bound(_conversations.file_content)


class EventsTable(Table):
    """Each user's event log."""

    last_seq = bound(_events.last_seq)
    events_after = bound(_events.events_after)
    prune_events = bound(_events.prune_events)


class MessagesTable(Table):
    """Conversation history and live clients."""

    def append_message(
        self,
        conversation_id: str,
        *,
        role: Role = "user",
        author: str,
        content: str,
        data: dict[str, Any] | None = None,
    ) -> Message:
        return _messages.append_message(
            self.tx,
            conversation_id,
            role=role,
            author=author,
            content=content,
            data=data,
            now=self.now(),
        )

    history = bound(_messages.history)
    recent = bound(_messages.recent)

    def mark_live(self, client_id: str, user: str, ttl: timedelta) -> None:
        _messages.mark_live(self.tx, client_id, user, ttl, self.now())

    drop_live = bound(_messages.drop_live)

    def is_live(self, user: str) -> bool:
        return _messages.is_live(self.tx, user, self.now())

    def notify_user(
        self,
        user: str,
        message: str,
        *,
        title: str | None = None,
        urgency: Urgency = "normal",
        conversation_id: str | None = None,
    ) -> Literal["sent", "queued"]:
        return _messages.notify_user(
            self.tx,
            user,
            message,
            title=title,
            urgency=urgency,
            conversation_id=conversation_id,
            now=self.now(),
        )


class MetricsTable(Table):
    """Gauges read from the tables, counters staged with the transaction."""

    def read(self, queries: Sequence[GaugeQuery]) -> dict[str, list[Row]]:
        return _metrics.read(self.tx, self.now(), queries)

    asked = bound(_metrics.asked)
