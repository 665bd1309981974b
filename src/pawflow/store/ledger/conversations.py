"""Users, conversations with their members, and uploads: who may see and answer what."""

from __future__ import annotations

import hashlib
from collections.abc import Collection
from datetime import datetime
from typing import Literal

from pawflow.clock import to_millis
from pawflow.errors import Conflict, FieldError, InvalidInput, NotFound, PayloadTooLarge
from pawflow.ids import new_id
from pawflow.records import Access, Conversation, FileRef
from pawflow.store.engine.database import Tx, sql

MAX_NAME = 200


def _check_name(what: str, value: object) -> str:
    if not isinstance(value, str) or not value.strip() or len(value) > MAX_NAME:
        raise InvalidInput(f"{what} must be a non-empty string of at most {MAX_NAME} characters")
    return value


def ensure_user(tx: Tx, user: str, now: datetime) -> str:
    _check_name("user", user)
    # The first user of a store is its admin (pawflow.store.people.roles), in the same statement.
    sql(tx).execute(
        "INSERT INTO users (id, created_at, role) VALUES (?, ?, CASE WHEN EXISTS"
        " (SELECT 1 FROM users) THEN 'member' ELSE 'admin' END) ON CONFLICT (id) DO NOTHING",
        (user, to_millis(now)),
    )
    return user


def user_exists(tx: Tx, user: str) -> bool:
    return sql(tx).one("SELECT 1 AS found FROM users WHERE id = ?", (user,)) is not None


def has_users(tx: Tx) -> bool:
    return sql(tx).one("SELECT 1 AS found FROM users LIMIT 1") is not None


def create_conversation(tx: Tx, owner: str, title: str, now: datetime) -> Conversation:
    if not isinstance(title, str) or len(title) > 500:
        raise InvalidInput("title must be a string of at most 500 characters")
    ensure_user(tx, owner, now)
    conversation_id = new_id()
    sql(tx).execute(
        "INSERT INTO conversations (id, owner, title, created_at) VALUES (?, ?, ?, ?)",
        (conversation_id, owner, title, to_millis(now)),
    )
    return get_conversation(tx, conversation_id, user=owner)


def conversation_access(tx: Tx, conversation_id: str, user: str) -> Access | None:
    row = sql(tx).one(
        "SELECT c.owner, m.access FROM conversations c LEFT JOIN conversation_members m"
        " ON m.conversation_id = c.id AND m.user_id = ? WHERE c.id = ?",
        (user, conversation_id),
    )
    if row is None:
        return None
    if row["owner"] == user:
        return "owner"
    access: Access | None = row["access"]
    return access


def may_write(tx: Tx, conversation_id: str, user: str) -> bool:
    """The write rule: publishing, posting and answering need owner or write access."""
    return conversation_access(tx, conversation_id, user) in ("owner", "write")


def require_write(tx: Tx, conversation_id: str, user: str) -> None:
    """Refuse ``user`` without write access: as not found, like a conversation that is not."""
    if not may_write(tx, conversation_id, user):
        raise NotFound("conversation")


def find_conversation(tx: Tx, conversation_id: str) -> Conversation | None:
    """The conversation as its owner sees it, whoever asks; None if there is none."""
    row = sql(tx).one("SELECT owner FROM conversations WHERE id = ?", (conversation_id,))
    return None if row is None else get_conversation(tx, conversation_id, user=row["owner"])


def get_conversation(tx: Tx, conversation_id: str, *, user: str) -> Conversation:
    """The conversation as ``user`` sees it; members (owner, read, write) may read it."""
    access = conversation_access(tx, conversation_id, user)
    row = sql(tx).one("SELECT * FROM conversations WHERE id = ?", (conversation_id,))
    if access is None or row is None:
        raise NotFound("conversation")
    members = sql(tx).all(
        "SELECT user_id, access FROM conversation_members WHERE conversation_id = ?"
        " ORDER BY user_id",
        (conversation_id,),
    )
    return Conversation.from_row(
        {**row, "access": access, "members": {m["user_id"]: m["access"] for m in members}}
    )


def list_conversations(tx: Tx, *, user: str) -> list[Conversation]:
    rows = sql(tx).all(
        "SELECT id FROM conversations WHERE owner = ? UNION"
        " SELECT conversation_id AS id FROM conversation_members WHERE user_id = ?",
        (user, user),
    )
    found = [get_conversation(tx, row["id"], user=user) for row in rows]
    return sorted(found, key=lambda c: (c.created_at, c.id))


def share_conversation(
    tx: Tx,
    conversation_id: str,
    *,
    user: str,
    with_user: str,
    access: Literal["read", "write"],
    now: datetime,
    known_users_only: bool = False,
) -> Conversation:
    """Only the owner shares; sharing again changes the access."""
    if access not in ("read", "write"):
        raise InvalidInput("access must be 'read' or 'write'")
    if conversation_access(tx, conversation_id, user) != "owner":
        raise NotFound("conversation")
    if known_users_only and not user_exists(tx, with_user):
        raise InvalidInput("unknown user", [FieldError("user", "no such user")])
    if with_user == user:
        raise Conflict("the owner already has every access")
    ensure_user(tx, with_user, now)
    set_member(tx, conversation_id, with_user, access)
    return get_conversation(tx, conversation_id, user=user)


def set_member(tx: Tx, conversation_id: str, user: str, access: str) -> None:
    """Make ``user`` a member of the conversation with ``access`` (or change theirs)."""
    sql(tx).execute(
        "INSERT INTO conversation_members (conversation_id, user_id, access) VALUES (?, ?, ?)"
        " ON CONFLICT (conversation_id, user_id) DO UPDATE SET access = excluded.access",
        (conversation_id, user, access),
    )


def conversation_members(tx: Tx, conversation_id: str) -> dict[str, Access]:
    """Everyone in the conversation with their access; empty if it does not exist."""
    rows = sql(tx).all(
        "SELECT owner AS user_id, 'owner' AS access FROM conversations WHERE id = ? UNION ALL"
        " SELECT user_id, access FROM conversation_members WHERE conversation_id = ?",
        (conversation_id, conversation_id),
    )
    return {row["user_id"]: row["access"] for row in rows}


def conversation_audience(tx: Tx, conversation_id: str, *, writers_only: bool) -> set[str]:
    """The owner and the collaborators (only those with write access, if asked)."""
    return {
        user
        for user, access in conversation_members(tx, conversation_id).items()
        if access != "read" or not writers_only
    }


def add_file(
    tx: Tx,
    owner: str,
    name: str,
    media_type: str,
    content: bytes,
    *,
    max_bytes: int,
    now: datetime,
) -> FileRef:
    _check_name("file name", name)
    _check_name("media type", media_type)
    if len(content) > max_bytes:
        raise PayloadTooLarge(f"file of {len(content)} bytes exceeds the cap of {max_bytes} bytes")
    ensure_user(tx, owner, now)
    ref = FileRef(
        id=new_id(),
        name=name,
        size=len(content),
        media_type=media_type.lower(),
        sha256=hashlib.sha256(content).hexdigest(),
    )
    sql(tx).execute(
        "INSERT INTO files (id, owner, name, size, media_type, sha256, content, created_at)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (ref.id, owner, ref.name, ref.size, ref.media_type, ref.sha256, content, to_millis(now)),
    )
    return ref


def discard_files(tx: Tx, owner: str, file_ids: Collection[str]) -> int:
    """Remove those of ``file_ids`` that ``owner`` uploaded and no answer refers to."""
    removed = 0
    for file_id in dict.fromkeys(file_ids):
        removed += sql(tx).execute(
            "DELETE FROM files WHERE id = ? AND owner = ?"
            " AND NOT EXISTS (SELECT 1 FROM file_links WHERE file_id = ?)",
            (file_id, owner, file_id),
        )
    return removed


def get_file(tx: Tx, file_id: str, *, user: str) -> FileRef:
    """An upload ``user`` made; anyone else's is not found."""
    row = sql(tx).one(
        "SELECT id, name, size, media_type, sha256 FROM files WHERE id = ? AND owner = ?",
        (file_id, user),
    )
    if row is None:
        raise NotFound("file")
    return FileRef.from_row(row)


def file_content(tx: Tx, file_id: str) -> bytes:
    row = sql(tx).one("SELECT content FROM files WHERE id = ?", (file_id,))
    if row is None:
        raise NotFound("file")
    return bytes(row["content"])
