"""The tables of running work: requests, continuations, turns, sessions, leases,
checkpoints, queues and deployments."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from pawflow.records import Interaction, Message
from pawflow.store.ledger.messages import Role
from pawflow.store.runtime import checkpoints as _checkpoints
from pawflow.store.runtime import continuations as _continuations
from pawflow.store.runtime import deployments as _deployments
from pawflow.store.runtime import interactions as _interactions
from pawflow.store.runtime import leases as _leases
from pawflow.store.runtime import mcp_rounds as _mcp_rounds
from pawflow.store.runtime import queues as _queues
from pawflow.store.runtime import sessions as _sessions
from pawflow.store.runtime import turns as _turns
from pawflow.store.runtime.checkpoints import Checkpoint
from pawflow.store.runtime.continuations import Continuation, Payload
from pawflow.store.runtime.deployments import DeploymentRow, Status
from pawflow.store.runtime.leases import Lease
from pawflow.store.runtime.queues import NewRow
from pawflow.store.runtime.reports import SWEEP_BATCH
from pawflow.store.runtime.sessions import SessionRow
from pawflow.store.runtime.turns import QueuedTurn, TurnKey, TurnStatus, Wakeup
from pawflow.store.unit.binding import Table, bound

__all__ = [
    "CheckpointsTable",
    "ContinuationsTable",
    "DeploymentsTable",
    "InteractionsTable",
    "LeasesTable",
    "McpRoundsTable",
    "QueuesTable",
    "SessionsTable",
    "TurnsTable",
]


class CheckpointsTable(Table):
    """Checkpoints of agent runs."""

    def put(
        self,
        run_id: str,
        step_id: str,
        encoded: bytes,
        *,
        agent: str,
        halt_reason: str,
        session_id: str | None,
        pinned: bool,
        ttl: timedelta,
    ) -> Checkpoint:
        return _checkpoints.put(
            self.tx,
            run_id,
            step_id,
            encoded,
            agent=agent,
            halt_reason=halt_reason,
            session_id=session_id,
            pinned=pinned,
            now=self.now(),
            ttl=ttl,
        )

    def get(self, run_id: str, step_id: str) -> Checkpoint | None:
        return _checkpoints.get(self.tx, run_id, step_id, self.now())

    def latest(self, run_id: str) -> Checkpoint | None:
        return _checkpoints.latest(self.tx, run_id, self.now())

    def of_run(self, run_id: str) -> list[Checkpoint]:
        return _checkpoints.of_run(self.tx, run_id, self.now())

    def by_session(self, session_id: str, limit: int) -> list[Checkpoint]:
        return _checkpoints.by_session(self.tx, session_id, self.now(), limit)

    def pin(self, run_id: str, step_id: str, pinned: bool, ttl: timedelta) -> Checkpoint | None:
        return _checkpoints.pin(self.tx, run_id, step_id, pinned, self.now(), ttl)

    delete = bound(_checkpoints.delete)

    def remove_expired(self, limit: int = SWEEP_BATCH) -> int:
        return _checkpoints.remove_expired(self.tx, self.now(), limit)


class ContinuationsTable(Table):
    """Parked continuations and their signals."""

    read_signal = bound(_continuations.read_signal)

    def fire_signal(self, signal_id: str, value: Any) -> int:
        return _continuations.fire_signal(self.tx, signal_id, value, self.now())

    parked_for = bound(_continuations.parked_for)

    def park(
        self,
        target: str,
        *,
        payload: Payload,
        payload_cap: int,
        signal_id: str | None = None,
        deadline: datetime | None = None,
        fresh_signal: bool = False,
    ) -> Continuation:
        return _continuations.park(
            self.tx,
            target,
            now=self.now(),
            payload=payload,
            payload_cap=payload_cap,
            signal_id=signal_id,
            deadline=deadline,
            fresh_signal=fresh_signal,
        )

    get_continuation = bound(_continuations.get_continuation)

    def cancel_continuation(self, continuation_id: str) -> bool:
        return _continuations.cancel_continuation(self.tx, continuation_id, self.now())

    def release_due(self, limit: int) -> int:
        return _continuations.release_due(self.tx, self.now(), limit)

    pending_for_target = bound(_continuations.pending_for_target)
    discard = bound(_continuations.discard)


class DeploymentsTable(Table):
    """Flow deployments."""

    get = bound(_deployments.get)
    all_deployments = bound(_deployments.all_deployments)

    def set_status(
        self, deployment_id: str, status: Status, *, reason: str | None
    ) -> DeploymentRow:
        return _deployments.set_status(
            self.tx, deployment_id, status, reason=reason, now=self.now()
        )

    record_error = bound(_deployments.record_error)

    def save(
        self, *, name: str, definition: str, base_dir: str | None, user: str, conversation_id: str
    ) -> tuple[DeploymentRow, bool]:
        return _deployments.save(
            self.tx,
            name=name,
            definition=definition,
            base_dir=base_dir,
            user=user,
            conversation_id=conversation_id,
            now=self.now(),
        )

    def wake_if_stopped(self, deployment_id: str, reason: str) -> bool:
        return _deployments.wake_if_stopped(self.tx, deployment_id, reason, self.now())


class InteractionsTable(Table):
    """Durable requests, read (answers go through the facade)."""

    get = bound(_interactions.get)

    def newest_pending(self, conversation_id: str) -> Interaction | None:
        return _interactions.newest_pending(self.tx, conversation_id, self.now())


class LeasesTable(Table):
    """Named leases (one owner at a time, until a deadline)."""

    def acquire(self, name: str, owner: str, ttl: timedelta) -> bool:
        return _leases.acquire(self.tx, name, owner, self.now(), ttl)

    def renew(self, name: str, owner: str, ttl: timedelta, epoch: int | None = None) -> bool:
        return _leases.renew(self.tx, name, owner, self.now(), ttl, epoch)

    release = bound(_leases.release)
    release_all = bound(_leases.release_all)
    get = bound(_leases.get)

    def held(self, prefix: str = "") -> list[Lease]:
        return _leases.held(self.tx, self.now(), prefix)


class McpRoundsTable(Table):
    """Rounds of MCP tools that ask."""

    def record(self, round_id: str, interaction_id: str, *, user: str, action: str) -> bool:
        return _mcp_rounds.record(
            self.tx, round_id, interaction_id, user=user, action=action, now=self.now()
        )

    actions = bound(_mcp_rounds.actions)


class QueuesTable(Table):
    """Durable flow queues."""

    fence = bound(_queues.fence)

    def enqueue(self, target: str, rows: Sequence[NewRow]) -> list[int]:
        return _queues.enqueue(self.tx, target, rows, self.now())

    def take(self, ids: Sequence[int], owner: str) -> int:
        return _queues.take(self.tx, ids, owner, self.now())

    move = bound(_queues.move)
    finish = bound(_queues.finish)
    recover = bound(_queues.recover)
    unpark = bound(_queues.unpark)
    counts = bound(_queues.counts)


class SessionsTable(Table):
    """Session continuations (what a conversation waits on)."""

    def insert(
        self,
        *,
        session_id: str,
        owner: str,
        kind: str,
        origin: str,
        question: str,
        run_id: str | None,
        step_id: str | None,
        intent: str | None,
        payload: Any,
        expires_at: datetime,
    ) -> SessionRow:
        return _sessions.insert(
            self.tx,
            session_id=session_id,
            owner=owner,
            kind=kind,
            origin=origin,
            question=question,
            run_id=run_id,
            step_id=step_id,
            intent=intent,
            payload=payload,
            now=self.now(),
            expires_at=expires_at,
        )

    lock = bound(_sessions.lock)

    def supersede_pending(self, session_id: str) -> None:
        _sessions.supersede_pending(self.tx, session_id, self.now())

    pending = bound(_sessions.pending)

    def close(self, continuation_id: str, status: str, reply: str | None) -> SessionRow | None:
        return _sessions.close(self.tx, continuation_id, status, self.now(), reply)

    get = bound(_sessions.get)
    history = bound(_sessions.history)
    by_run = bound(_sessions.by_run)

    def expire_due(self) -> int:
        return _sessions.expire_due(self.tx, self.now())


class TurnsTable(Table):
    """The turn queue of conversations."""

    def assign_agent(self, conversation_id: str, agent: str) -> None:
        _turns.assign_agent(self.tx, conversation_id, agent, self.now())

    assigned_agent = bound(_turns.assigned_agent)

    def enqueue(self, conversation_id: str, *, agent: str | None, message_id: str) -> str:
        return _turns.enqueue(
            self.tx, conversation_id, agent=agent, message_id=message_id, now=self.now()
        )

    def post_user_message(
        self, conversation_id: str, content: str, *, author: str
    ) -> tuple[Message, str]:
        return _turns.post_user_message(
            self.tx, conversation_id, content, author=author, now=self.now()
        )

    get = bound(_turns.get)

    def due(self, agents: Sequence[str] | None, limit: int) -> list[QueuedTurn]:
        return _turns.due(self.tx, self.now(), agents, limit)

    def claim(self, turn_id: str, owner: str, lease: timedelta) -> QueuedTurn | None:
        return _turns.claim(self.tx, turn_id, owner, self.now(), lease)

    def renew(self, key: TurnKey, lease: timedelta, stage: str | None = None) -> bool:
        return _turns.renew(self.tx, key, self.now(), lease, stage)

    def complete(
        self,
        key: TurnKey,
        *,
        reply: str | None = None,
        role: Role = "assistant",
        author: str = "",
        data: dict[str, Any] | None = None,
    ) -> tuple[bool, Message | None]:
        return _turns.complete(
            self.tx, key, self.now(), reply=reply, role=role, author=author, data=data
        )

    def retry_later(self, key: TurnKey, error: str) -> TurnStatus | None:
        return _turns.retry_later(self.tx, key, error, self.now())

    message_of = bound(_turns.message_of)
    open_turns = bound(_turns.open_turns)
    for_conversation = bound(_turns.for_conversation)

    def schedule_wakeup(
        self,
        *,
        agent: str,
        conversation_id: str,
        user: str,
        source: str,
        text: str,
        data: dict[str, Any],
        due_at: datetime | None = None,
    ) -> str | None:
        return _turns.schedule_wakeup(
            self.tx,
            agent=agent,
            conversation_id=conversation_id,
            user=user,
            source=source,
            text=text,
            data=data,
            now=self.now(),
            due_at=due_at,
        )

    wakeup = bound(_turns.wakeup)
    wakeup_by_source = bound(_turns.wakeup_by_source)
    wakeups_for_conversation = bound(_turns.wakeups_for_conversation)

    def start_wakeup(self, key: TurnKey) -> Wakeup | None:
        return _turns.start_wakeup(self.tx, key, self.now())

    def mark_tool_started(self, turn_id: str) -> bool:
        return _turns.mark_tool_started(self.tx, turn_id, self.now())

    def absorb(self, *, source: str, target: str, signal_id: str) -> bool:
        return _turns.absorb(
            self.tx, source=source, target=target, signal_id=signal_id, now=self.now()
        )
