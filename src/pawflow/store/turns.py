"""The durable turn queue: every message turn and wakeup turn of a conversation.

A user's message is stored together with its turn (:func:`post_user_message`, one
transaction); a wakeup's turn is written in the transaction that schedules the wakeup. A
process runs a turn by *claiming* it — a conditional update from ``queued`` (or ``running``
under a lease that ran out) to ``running`` under a short lease it renews with heartbeats —
so a crash resumes the turn within a lease in whichever process runs its agent. Each claim
bumps ``attempts``: the pair ``(owner, attempts)`` fences every later write, so a process
that lost its lease can no longer finish the turn. The reply is written together with the
turn's end (:func:`complete`): a re-run never posts a second reply.

Turns of one conversation never overlap: a claim is refused while another turn of the
conversation runs under a live lease.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Literal

from pawflow.clock import from_millis, to_millis
from pawflow.errors import NotFound
from pawflow.ids import new_id
from pawflow.records import Message
from pawflow.store import wakeups
from pawflow.store.database import Tx
from pawflow.store.delivery import backoff
from pawflow.store.messages import Role, append_message

TurnKind = Literal["message", "wakeup"]
TurnStatus = Literal["queued", "running", "done", "failed"]
MAX_ATTEMPTS = 5


@dataclass(frozen=True)
class QueuedTurn:
    """A row of the turn queue."""

    id: str
    seq: int
    conversation_id: str
    agent: str | None  # the agent whose process runs it; None: any process
    kind: TurnKind
    message_id: str | None
    wakeup_id: str | None
    status: TurnStatus
    due_at: datetime
    owner: str | None
    lease_until: datetime | None
    attempts: int
    stage: str | None
    reply_id: str | None
    last_error: str | None
    created_at: datetime
    started_at: datetime | None

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> QueuedTurn:
        def when(value: Any) -> datetime | None:
            return None if value is None else from_millis(int(value))

        return cls(
            id=row["id"],
            seq=int(row["seq"]),
            conversation_id=row["conversation_id"],
            agent=row["agent"],
            kind=row["kind"],
            message_id=row["message_id"],
            wakeup_id=row["wakeup_id"],
            status=row["status"],
            due_at=from_millis(int(row["due_at"])),
            owner=row["owner"],
            lease_until=when(row["lease_until"]),
            attempts=int(row["attempts"]),
            stage=row["stage"],
            reply_id=row["reply_id"],
            last_error=row["last_error"],
            created_at=from_millis(int(row["created_at"])),
            started_at=when(row["started_at"]),
        )

    @property
    def key(self) -> TurnKey:
        assert self.owner is not None
        return TurnKey(self.id, self.owner, self.attempts)


@dataclass(frozen=True)
class TurnKey:
    """A claim on a turn: only its holder may renew, record or end the turn."""

    turn_id: str
    owner: str
    attempt: int


def assign_agent(tx: Tx, conversation_id: str, agent: str, now: datetime) -> None:
    """Have ``agent`` answer the conversation's messages from now on."""
    if tx.one("SELECT 1 AS found FROM conversations WHERE id = ?", (conversation_id,)) is None:
        raise NotFound("conversation")
    tx.execute(
        "INSERT INTO agent_assignments (conversation_id, agent, assigned_at) VALUES (?, ?, ?)"
        " ON CONFLICT (conversation_id) DO UPDATE SET agent = excluded.agent,"
        " assigned_at = excluded.assigned_at",
        (conversation_id, agent, to_millis(now)),
    )


def assigned_agent(tx: Tx, conversation_id: str) -> str | None:
    row = tx.one(
        "SELECT agent FROM agent_assignments WHERE conversation_id = ?", (conversation_id,)
    )
    return None if row is None else str(row["agent"])


def enqueue(
    tx: Tx,
    conversation_id: str,
    *,
    kind: TurnKind,
    agent: str | None,
    now: datetime,
    message_id: str | None = None,
    wakeup_id: str | None = None,
) -> str:
    """Queue a turn (once per message or wakeup); returns its id."""
    ref = ("message_id", message_id) if kind == "message" else ("wakeup_id", wakeup_id)
    if ref[1] is None:
        raise ValueError(f"a {kind} turn needs its {ref[0]}")
    found = tx.one(f"SELECT id FROM chat_turns WHERE {ref[0]} = ?", (ref[1],))
    if found is not None:
        return str(found["id"])
    turn_id = new_id()
    at = to_millis(now)
    tx.execute(
        "INSERT INTO chat_turns (id, conversation_id, agent, kind, message_id, wakeup_id,"
        " status, due_at, created_at) VALUES (?, ?, ?, ?, ?, ?, 'queued', ?, ?)",
        (turn_id, conversation_id, agent, kind, message_id, wakeup_id, at, at),
    )
    tx.notify("turns")
    return turn_id


def post_user_message(
    tx: Tx, conversation_id: str, content: str, *, author: str, now: datetime
) -> tuple[Message, str]:
    """Store a user's message and the turn that answers it, in the caller's transaction."""
    message = append_message(
        tx, conversation_id, role="user", author=author, content=content, data=None, now=now
    )
    turn_id = enqueue(
        tx,
        conversation_id,
        kind="message",
        agent=assigned_agent(tx, conversation_id),
        message_id=message.id,
        now=now,
    )
    return message, turn_id


def get(tx: Tx, turn_id: str) -> QueuedTurn | None:
    row = tx.one("SELECT * FROM chat_turns WHERE id = ?", (turn_id,))
    return None if row is None else QueuedTurn.from_row(row)


def of_wakeup(tx: Tx, wakeup_id: str) -> QueuedTurn | None:
    row = tx.one("SELECT * FROM chat_turns WHERE wakeup_id = ?", (wakeup_id,))
    return None if row is None else QueuedTurn.from_row(row)


def due(tx: Tx, now: datetime, agents: Sequence[str] | None, limit: int) -> list[QueuedTurn]:
    """Turns ready to run, oldest first: queued and due, or running under a lapsed lease.

    ``agents`` limits them to those agents' turns and the turns of no agent (None: all).
    """
    at = to_millis(now)
    if agents is None:
        scope, params = "", tuple[str, ...]()
    else:
        marks = ", ".join("?" for _ in agents)
        scope = f" AND (agent IS NULL OR agent IN ({marks}))" if agents else " AND agent IS NULL"
        params = tuple(agents)
    rows = tx.all(
        "SELECT * FROM chat_turns WHERE status = 'queued' AND due_at <= ?"
        f"{scope} ORDER BY seq LIMIT ?",
        (at, *params, limit),
    )
    rows += tx.all(
        "SELECT * FROM chat_turns WHERE status = 'running' AND lease_until <= ?"
        f"{scope} ORDER BY seq LIMIT ?",
        (at, *params, limit),
    )
    rows.sort(key=lambda row: int(row["seq"]))
    return [QueuedTurn.from_row(row) for row in rows[:limit]]


def claim(tx: Tx, turn_id: str, owner: str, now: datetime, lease: timedelta) -> QueuedTurn | None:
    """Take a due turn for ``owner``; None when it is not due, taken, or its conversation busy."""
    row = tx.one("SELECT conversation_id, seq, agent FROM chat_turns WHERE id = ?", (turn_id,))
    if row is None:
        return None
    conversation_id = str(row["conversation_id"])
    tx.lock_key(f"pawflow:turns:{conversation_id}")  # one claim per conversation at a time
    at = to_millis(now)
    # Busy: another turn runs under a live lease, or an older turn of the same agent was
    # cut short (its lease ran out): that one is taken over first, so turns keep their order.
    busy = tx.one(
        "SELECT 1 AS found FROM chat_turns WHERE conversation_id = ? AND status = 'running'"
        " AND id <> ? AND (lease_until > ? OR (seq < ? AND COALESCE(agent, '') = ?))",
        (conversation_id, turn_id, at, int(row["seq"]), row["agent"] or ""),
    )
    if busy is not None:
        return None
    changed = tx.execute(
        "UPDATE chat_turns SET status = 'running', owner = ?, lease_until = ?,"
        " attempts = attempts + 1, started_at = ?, stage = NULL"
        " WHERE id = ? AND ((status = 'queued' AND due_at <= ?)"
        " OR (status = 'running' AND lease_until <= ?))",
        (owner, to_millis(now + lease), at, turn_id, at, at),
    )
    return get(tx, turn_id) if changed else None


def renew(tx: Tx, key: TurnKey, now: datetime, lease: timedelta, stage: str | None = None) -> bool:
    """The heartbeat of a running turn (and where it is); False once it is no longer ours."""
    return bool(
        tx.execute(
            "UPDATE chat_turns SET lease_until = ?, stage = COALESCE(?, stage)"
            " WHERE id = ? AND owner = ? AND attempts = ? AND status = 'running'",
            (to_millis(now + lease), stage, key.turn_id, key.owner, key.attempt),
        )
    )


def complete(
    tx: Tx,
    key: TurnKey,
    now: datetime,
    *,
    reply: str | None = None,
    role: Role = "assistant",
    author: str = "",
    data: dict[str, Any] | None = None,
) -> tuple[bool, Message | None]:
    """End the turn, with its reply: both or neither. False when the turn is no longer ours."""
    ended = tx.execute(
        "UPDATE chat_turns SET status = 'done', lease_until = NULL, finished_at = ?"
        " WHERE id = ? AND owner = ? AND attempts = ? AND status = 'running'",
        (to_millis(now), key.turn_id, key.owner, key.attempt),
    )
    if not ended:
        return False, None
    turn = get(tx, key.turn_id)
    assert turn is not None
    if turn.wakeup_id is not None:
        wakeups.finish(tx, turn.wakeup_id, now)
    if reply is None:
        return True, None
    message = append_message(
        tx,
        turn.conversation_id,
        role=role,
        author=author,
        content=reply,
        data={**(data or {}), "turn": key.turn_id},
        now=now,
    )
    tx.execute("UPDATE chat_turns SET reply_id = ? WHERE id = ?", (message.id, key.turn_id))
    return True, message


def retry_later(tx: Tx, key: TurnKey, error: str, now: datetime) -> TurnStatus | None:
    """Put a failed run back with backoff, or give up after a few attempts (None: not ours)."""
    status: TurnStatus = "failed" if key.attempt >= MAX_ATTEMPTS else "queued"
    changed = tx.execute(
        "UPDATE chat_turns SET status = ?, due_at = ?, lease_until = NULL, last_error = ?,"
        " finished_at = ? WHERE id = ? AND owner = ? AND attempts = ? AND status = 'running'",
        (
            status,
            to_millis(now + backoff(key.attempt)),
            error[:1000],
            to_millis(now) if status == "failed" else None,
            key.turn_id,
            key.owner,
            key.attempt,
        ),
    )
    return status if changed else None


def put_back(tx: Tx, key: TurnKey, due_at: datetime) -> None:
    """Return a claimed turn to the queue untouched (it cannot run yet), due at ``due_at``."""
    tx.execute(
        "UPDATE chat_turns SET status = 'queued', due_at = ?, lease_until = NULL"
        " WHERE id = ? AND owner = ? AND attempts = ? AND status = 'running'",
        (to_millis(due_at), key.turn_id, key.owner, key.attempt),
    )


def message_of(tx: Tx, turn: QueuedTurn) -> Message | None:
    """The user message a message turn answers."""
    row = tx.one("SELECT * FROM messages WHERE id = ?", (turn.message_id,))
    return None if row is None else Message.from_row(row)


def open_turns(tx: Tx, conversation_id: str) -> list[QueuedTurn]:
    """The conversation's turns still queued or running, oldest first."""
    rows = tx.all(
        "SELECT * FROM chat_turns WHERE conversation_id = ? AND status IN ('queued', 'running')"
        " ORDER BY seq",
        (conversation_id,),
    )
    return [QueuedTurn.from_row(row) for row in rows]


def for_conversation(tx: Tx, conversation_id: str) -> list[QueuedTurn]:
    rows = tx.all(
        "SELECT * FROM chat_turns WHERE conversation_id = ? ORDER BY seq", (conversation_id,)
    )
    return [QueuedTurn.from_row(row) for row in rows]
