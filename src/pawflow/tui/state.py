"""What the terminal knows: interaction records as the server last sent them, conversations.

Records come from the actions and from events, in any order. A record never goes back to
pending once it has left it (the store moves it out of pending exactly once), so a stale
read that arrives after the answered event cannot reopen a closed request. The pending set
is replaced wholesale by each hydration from the server: local memory never keeps a request
open that the server no longer lists.
"""

from __future__ import annotations

from collections.abc import Iterable

from pawflow.records import Conversation, Interaction


def _same(a: Interaction, b: Interaction) -> bool:
    return (
        a.status == b.status
        and a.answered_at == b.answered_at
        and a.expires_at == b.expires_at
        and a.answer == b.answer
    )


class ChatState:
    def __init__(self) -> None:
        self.user = ""
        self.records: dict[str, Interaction] = {}
        self.conversations: dict[str, Conversation] = {}
        self.waiting: dict[str, tuple[str, list[str]]] = {}
        """Why each pending request the user sees is there (``list_inbox``, ``visible``):
        ``own``, ``mine``, ``groups``, ``claimed`` (theirs to answer) or ``others``, with
        whom it waits for."""

    # -- records ---------------------------------------------------------------------------

    def upsert(self, record: Interaction) -> bool:
        """Keep the newer of what we had and ``record``; True when something changed."""
        old = self.records.get(record.id)
        if old is not None and old.status != "pending" and record.status == "pending":
            return False
        if old is not None and _same(old, record):
            return False
        self.records[record.id] = record
        return True

    def stale_pending(self, pending: Iterable[Interaction]) -> list[str]:
        """Ids we hold as pending that the server's pending list (``pending``) lacks."""
        listed = {record.id for record in pending}
        return [
            record.id
            for record in self.records.values()
            if record.status == "pending" and record.id not in listed
        ]

    def mine(self, record: Interaction) -> bool:
        return not self.user or record.owner == self.user

    def set_waiting(self, items: Iterable[tuple[Interaction, str, list[str]]]) -> None:
        self.waiting = {record.id: (why, waiting_for) for record, why, waiting_for in items}

    def waits_for_others(self, record: Interaction) -> list[str] | None:
        """Whom ``record`` waits for when that is not the user; None: theirs to answer."""
        found = self.waiting.get(record.id)
        if record.status != "pending" or found is None or found[0] != "others":
            return None
        return found[1]

    def waits_for_me(self, record: Interaction) -> bool:
        """Whether ``record`` waits for the user's answer (what the Pending count counts)."""
        if record.status != "pending":
            return False
        found = self.waiting.get(record.id)
        return found[0] != "others" if found is not None else self.mine(record)

    def pending(self, conversation_id: str | None = None) -> list[Interaction]:
        """The requests waiting for the user's answer (in one conversation, or all), oldest
        first."""
        found = [
            r
            for r in self.records.values()
            if self.waits_for_me(r)
            and (conversation_id is None or r.conversation_id == conversation_id)
        ]
        return sorted(found, key=lambda r: (r.created_at, r.id))

    # -- conversations -----------------------------------------------------------------------

    def set_conversations(self, conversations: Iterable[Conversation]) -> None:
        self.conversations = {c.id: c for c in conversations}

    def title(self, conversation_id: str) -> str:
        found = self.conversations.get(conversation_id)
        if found is None:
            return "a conversation"
        return found.title or "Untitled conversation"
