"""Sharing by invitation: the owner offers a conversation, the invited user accepts it.

Until then the invited user is not a member: the conversation is not in their list, its
requests and messages do not reach their stream, and all they see is the invitation (who
offers which conversation, with what access). Inviting answers the owner the same way
whether or not the name belongs to a user, so sharing never tells who exists; an
invitation to a name that is not a user is not kept.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pawflow.clock import from_millis, to_millis
from pawflow.errors import Conflict, InvalidInput, NotFound
from pawflow.records import Conversation
from pawflow.store.engine.database import Tx, sql
from pawflow.store.ledger.conversations import (
    conversation_access,
    get_conversation,
    set_member,
    share_conversation,
)
from pawflow.store.ledger.events import append_event

INVITATION_EVENT = "invitation"


def invite(
    tx: Tx,
    conversation_id: str,
    *,
    user: str,
    with_user: str,
    access: Literal["read", "write"],
    now: datetime,
) -> Conversation:
    """Offer the conversation to ``with_user``; only the owner may. The owner's view back."""
    if access not in ("read", "write"):
        raise InvalidInput("access must be 'read' or 'write'")
    if conversation_access(tx, conversation_id, user) != "owner":
        raise NotFound("conversation")
    if with_user == user:
        raise Conflict("the owner already has every access")
    current = conversation_access(tx, conversation_id, with_user)
    if current in ("read", "write"):  # already a member, as the owner can see: change access
        return share_conversation(
            tx, conversation_id, user=user, with_user=with_user, access=access, now=now
        )
    if sql(tx).one("SELECT 1 AS found FROM users WHERE id = ?", (with_user,)) is not None:
        sql(tx).execute(
            "INSERT INTO conversation_invitations"
            " (conversation_id, user_id, access, invited_by, created_at) VALUES (?, ?, ?, ?, ?)"
            " ON CONFLICT (conversation_id, user_id) DO UPDATE SET access = excluded.access",
            (conversation_id, with_user, access, user, to_millis(now)),
        )
        found = _invitation(tx, conversation_id, with_user)
        assert found is not None
        append_event(tx, [with_user], None, INVITATION_EVENT, found, now)
    return get_conversation(tx, conversation_id, user=user)


def _invitation(tx: Tx, conversation_id: str, user: str) -> dict[str, Any] | None:
    row = sql(tx).one(
        "SELECT i.conversation_id, i.access, i.invited_by, i.created_at, c.title"
        " FROM conversation_invitations AS i JOIN conversations AS c ON c.id = i.conversation_id"
        " WHERE i.conversation_id = ? AND i.user_id = ?",
        (conversation_id, user),
    )
    return None if row is None else _public(row)


def _public(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "conversation_id": row["conversation_id"],
        "title": row["title"],
        "invited_by": row["invited_by"],
        "access": row["access"],
        "created_at": from_millis(row["created_at"]).isoformat().replace("+00:00", "Z"),
    }


def invitations_for(tx: Tx, user: str) -> list[dict[str, Any]]:
    """The invitations waiting for ``user``, oldest first."""
    rows = sql(tx).all(
        "SELECT i.conversation_id, i.access, i.invited_by, i.created_at, c.title"
        " FROM conversation_invitations AS i JOIN conversations AS c ON c.id = i.conversation_id"
        " WHERE i.user_id = ? ORDER BY i.created_at, i.conversation_id",
        (user,),
    )
    return [_public(row) for row in rows]


def accept(tx: Tx, conversation_id: str, *, user: str, now: datetime) -> Conversation:
    """Join the conversation with the access offered; an unknown invitation is not found."""
    row = sql(tx).one(
        "DELETE FROM conversation_invitations WHERE conversation_id = ? AND user_id = ?"
        " RETURNING access, invited_by",
        (conversation_id, user),
    )
    if row is None:
        raise NotFound("invitation")
    set_member(tx, conversation_id, user, str(row["access"]))
    return get_conversation(tx, conversation_id, user=user)


def decline(tx: Tx, conversation_id: str, *, user: str) -> None:
    """Refuse the invitation; an unknown one is not found."""
    removed = sql(tx).execute(
        "DELETE FROM conversation_invitations WHERE conversation_id = ? AND user_id = ?",
        (conversation_id, user),
    )
    if removed == 0:
        raise NotFound("invitation")
