"""The durable turn queue: every message turn and wakeup turn of a conversation.

A user's message is stored together with its turn (:func:`post_user_message`, one
transaction). A wakeup — the answer an agent waits for — *is* a turn of kind ``wakeup``,
written in the transaction that consumes the answer's continuation (:func:`schedule_wakeup`);
it carries its payload (whose it is, the text shown, the answer's data) and its ``source``
(the answer it comes from), which makes it once-only. Its first run posts the text as a
``system`` message (:func:`start_wakeup`); a re-run does not post it again. A
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
from typing import Annotated, Any, Literal

from pawflow.clock import to_millis
from pawflow.errors import NotFound
from pawflow.ids import new_id
from pawflow.records import Message
from pawflow.store.engine.database import Tx, sql
from pawflow.store.engine.rows import JSON, decode, decode_all, encode_json
from pawflow.store.ledger.messages import Role, append_message
from pawflow.store.runtime import continuations
from pawflow.store.runtime.delivery import backoff

TurnKind = Literal["message", "wakeup"]
TurnStatus = Literal["queued", "running", "done", "failed"]
WakeupStatus = Literal["queued", "running", "done", "absorbed", "failed"]
"""A wakeup turn's status; ``absorbed``: done, its answer taken by the turn that asked."""
MAX_ATTEMPTS = 5
ABSORBED = "absorbed"
"""The ``stage`` a wakeup turn ends with when the turn that asked took its answer."""


@dataclass(frozen=True)
class QueuedTurn:
    """A row of the turn queue."""

    id: str
    seq: int
    conversation_id: str
    agent: str | None  # the agent whose process runs it; None: any process
    kind: TurnKind
    message_id: str | None
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
    source: str | None = None  # a wakeup's: the answer it comes from
    payload: Annotated[dict[str, Any] | None, JSON] = None  # a wakeup's user, text, data
    tool_started_at: datetime | None = None

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
    if sql(tx).one("SELECT 1 AS found FROM conversations WHERE id = ?", (conversation_id,)) is None:
        raise NotFound("conversation")
    sql(tx).execute(
        "INSERT INTO agent_assignments (conversation_id, agent, assigned_at) VALUES (?, ?, ?)"
        " ON CONFLICT (conversation_id) DO UPDATE SET agent = excluded.agent,"
        " assigned_at = excluded.assigned_at",
        (conversation_id, agent, to_millis(now)),
    )


def assigned_agent(tx: Tx, conversation_id: str) -> str | None:
    row = sql(tx).one(
        "SELECT agent FROM agent_assignments WHERE conversation_id = ?", (conversation_id,)
    )
    return None if row is None else str(row["agent"])


def enqueue(
    tx: Tx, conversation_id: str, *, agent: str | None, message_id: str, now: datetime
) -> str:
    """Queue the turn that answers a user's message (once per message); returns its id."""
    found = sql(tx).one("SELECT id FROM chat_turns WHERE message_id = ?", (message_id,))
    if found is not None:
        return str(found["id"])
    turn_id = new_id()
    at = to_millis(now)
    sql(tx).execute(
        "INSERT INTO chat_turns (id, conversation_id, agent, kind, message_id,"
        " status, due_at, created_at) VALUES (?, ?, ?, 'message', ?, 'queued', ?, ?)",
        (turn_id, conversation_id, agent, message_id, at, at),
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
        agent=assigned_agent(tx, conversation_id),
        message_id=message.id,
        now=now,
    )
    return message, turn_id


def get(tx: Tx, turn_id: str) -> QueuedTurn | None:
    row = sql(tx).one("SELECT * FROM chat_turns WHERE id = ?", (turn_id,))
    return None if row is None else decode(QueuedTurn, row)


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
    rows = sql(tx).all(
        "SELECT * FROM chat_turns WHERE status = 'queued' AND due_at <= ?"
        f"{scope} ORDER BY seq LIMIT ?",
        (at, *params, limit),
    )
    rows += sql(tx).all(
        "SELECT * FROM chat_turns WHERE status = 'running' AND lease_until <= ?"
        f"{scope} ORDER BY seq LIMIT ?",
        (at, *params, limit),
    )
    rows.sort(key=lambda row: int(row["seq"]))
    return decode_all(QueuedTurn, rows[:limit])


def claim(tx: Tx, turn_id: str, owner: str, now: datetime, lease: timedelta) -> QueuedTurn | None:
    """Take a due turn for ``owner``; None when it is not due, taken, or its conversation busy."""
    row = sql(tx).one("SELECT conversation_id, seq, agent FROM chat_turns WHERE id = ?", (turn_id,))
    if row is None:
        return None
    conversation_id = str(row["conversation_id"])
    tx.lock_key(f"pawflow:turns:{conversation_id}")  # one claim per conversation at a time
    at = to_millis(now)
    # Busy: another turn runs under a live lease, or an older turn of the same agent was
    # cut short (its lease ran out): that one is taken over first, so turns keep their order.
    busy = sql(tx).one(
        "SELECT 1 AS found FROM chat_turns WHERE conversation_id = ? AND status = 'running'"
        " AND id <> ? AND (lease_until > ? OR (seq < ? AND COALESCE(agent, '') = ?))",
        (conversation_id, turn_id, at, int(row["seq"]), row["agent"] or ""),
    )
    if busy is not None:
        return None
    changed = sql(tx).execute(
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
        sql(tx).execute(
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
    ended = sql(tx).execute(
        "UPDATE chat_turns SET status = 'done', lease_until = NULL, finished_at = ?"
        " WHERE id = ? AND owner = ? AND attempts = ? AND status = 'running'",
        (to_millis(now), key.turn_id, key.owner, key.attempt),
    )
    if not ended:
        return False, None
    if reply is None:
        return True, None
    turn = get(tx, key.turn_id)
    assert turn is not None
    message = append_message(
        tx,
        turn.conversation_id,
        role=role,
        author=author,
        content=reply,
        data={**(data or {}), "turn": key.turn_id},
        now=now,
    )
    sql(tx).execute("UPDATE chat_turns SET reply_id = ? WHERE id = ?", (message.id, key.turn_id))
    return True, message


def retry_later(tx: Tx, key: TurnKey, error: str, now: datetime) -> TurnStatus | None:
    """Put a failed run back with backoff, or give up after a few attempts (None: not ours)."""
    status: TurnStatus = "failed" if key.attempt >= MAX_ATTEMPTS else "queued"
    changed = sql(tx).execute(
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


def message_of(tx: Tx, turn: QueuedTurn) -> Message | None:
    """The user message a message turn answers."""
    row = sql(tx).one("SELECT * FROM messages WHERE id = ?", (turn.message_id,))
    return None if row is None else Message.from_row(row)


def open_turns(tx: Tx, conversation_id: str) -> list[QueuedTurn]:
    """The conversation's turns still queued or running, oldest first."""
    rows = sql(tx).all(
        "SELECT * FROM chat_turns WHERE conversation_id = ? AND status IN ('queued', 'running')"
        " ORDER BY seq",
        (conversation_id,),
    )
    return decode_all(QueuedTurn, rows)


def for_conversation(tx: Tx, conversation_id: str) -> list[QueuedTurn]:
    rows = sql(tx).all(
        "SELECT * FROM chat_turns WHERE conversation_id = ? ORDER BY seq", (conversation_id,)
    )
    return decode_all(QueuedTurn, rows)


# -- wakeups: the turns that bring an agent the answer it waited for ------------------------


@dataclass(frozen=True)
class Wakeup:
    """A wakeup turn, as the agent that asked sees it."""

    id: str  # the turn's
    agent: str
    conversation_id: str
    user: str
    source: str
    text: str
    data: dict[str, Any]
    status: WakeupStatus
    due_at: datetime
    attempts: int
    message_id: str | None  # the system message its first run posted
    tool_started: bool
    last_error: str | None
    created_at: datetime


def wakeup_of(turn: QueuedTurn) -> Wakeup:
    assert turn.kind == "wakeup" and turn.payload is not None and turn.source is not None
    assert turn.agent is not None
    return Wakeup(
        id=turn.id,
        agent=turn.agent,
        conversation_id=turn.conversation_id,
        user=str(turn.payload["user"]),
        source=turn.source,
        text=str(turn.payload["text"]),
        data=dict(turn.payload["data"]),
        status="absorbed" if turn.stage == ABSORBED and turn.status == "done" else turn.status,
        due_at=turn.due_at,
        attempts=turn.attempts,
        message_id=turn.message_id,
        tool_started=turn.tool_started_at is not None,
        last_error=turn.last_error,
        created_at=turn.created_at,
    )


def schedule_wakeup(
    tx: Tx,
    *,
    agent: str,
    conversation_id: str,
    user: str,
    source: str,
    text: str,
    data: dict[str, Any],
    now: datetime,
    due_at: datetime | None = None,
) -> str | None:
    """Queue a wakeup turn; ``source`` (``confirmation:<id>``) makes it once-only.

    Returns the new turn's id; None when the source had one already.
    """
    turn_id = new_id()
    at = to_millis(now)
    changed = sql(tx).execute(
        "INSERT INTO chat_turns (id, conversation_id, agent, kind, status, due_at, created_at,"
        " source, payload) VALUES (?, ?, ?, 'wakeup', 'queued', ?, ?, ?, ?)"
        " ON CONFLICT (source) DO NOTHING",
        (
            turn_id,
            conversation_id,
            agent,
            at if due_at is None else to_millis(due_at),
            at,
            source,
            encode_json({"user": user, "text": text, "data": data}),
        ),
    )
    if not changed:
        return None
    tx.notify("turns")
    return turn_id


def wakeup(tx: Tx, turn_id: str) -> Wakeup | None:
    turn = get(tx, turn_id)
    return None if turn is None or turn.kind != "wakeup" else wakeup_of(turn)


def wakeup_by_source(tx: Tx, source: str) -> Wakeup | None:
    row = sql(tx).one("SELECT * FROM chat_turns WHERE source = ?", (source,))
    return None if row is None else wakeup_of(decode(QueuedTurn, row))


def wakeups_for_conversation(tx: Tx, conversation_id: str) -> list[Wakeup]:
    rows = sql(tx).all(
        "SELECT * FROM chat_turns WHERE conversation_id = ? AND kind = 'wakeup' ORDER BY seq",
        (conversation_id,),
    )
    return [wakeup_of(turn) for turn in decode_all(QueuedTurn, rows)]


def start_wakeup(tx: Tx, key: TurnKey, now: datetime) -> Wakeup | None:
    """Begin running a claimed wakeup turn: its first run posts the wakeup's text as a
    system-marked message, a re-run posts nothing again. None when the turn is not ours."""
    turn = get(tx, key.turn_id)
    if (
        turn is None
        or turn.status != "running"
        or (turn.owner, turn.attempts)
        != (
            key.owner,
            key.attempt,
        )
    ):
        return None
    found = wakeup_of(turn)
    if found.message_id is not None:
        return found
    message = append_message(
        tx,
        found.conversation_id,
        role="system",
        author=f"agent:{found.agent}",
        content=found.text,
        data={"wakeup": found.id, "source": found.source, **found.data},
        now=now,
    )
    sql(tx).execute("UPDATE chat_turns SET message_id = ? WHERE id = ?", (message.id, found.id))
    return wakeup(tx, found.id)


def mark_tool_started(tx: Tx, turn_id: str, now: datetime) -> bool:
    """Journal that the wakeup's approved call is about to run; False if it already was."""
    return bool(
        sql(tx).execute(
            "UPDATE chat_turns SET tool_started_at = ? WHERE id = ? AND tool_started_at IS NULL",
            (to_millis(now), turn_id),
        )
    )


def absorb(tx: Tx, *, source: str, target: str, signal_id: str, now: datetime) -> bool:
    """Take an answer for the turn that is still waiting on it, so no wakeup follows.

    The answer is either still a resolved continuation (deleted here) or already a queued
    wakeup turn (ended as ``absorbed``). False when a poller already claimed the wakeup:
    then the wakeup carries the answer, and the waiting turn must not.
    """
    # The continuation first: on PostgreSQL a delivery in flight holds its row; once it
    # commits, the wakeup it wrote is visible to the next statement.
    deleted = continuations.discard(tx, target, signal_id)
    absorbed = sql(tx).execute(
        "UPDATE chat_turns SET status = 'done', stage = ?, finished_at = ?"
        " WHERE source = ? AND status = 'queued'",
        (ABSORBED, to_millis(now), source),
    )
    if deleted or absorbed:
        return True
    # Neither: nothing was ever parked (the answer is ours) unless a wakeup exists.
    return wakeup_by_source(tx, source) is None
