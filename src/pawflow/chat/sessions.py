"""Session continuations: every pending question in a conversation has an owner.

A record says what a session (a conversation) is waiting on and who asked. The session id
is the only key that grants a match: nothing here ever looks across sessions, not even when
exactly one continuation is pending anywhere. At most one is pending per session — a
partial unique index enforces it; opening a second through :class:`SessionRegistry`
supersedes the first (kept, for the audit), while a raw second insert fails with a conflict.

A **durable request** asked in the conversation (an agent's ``request_confirmation``, a
tool's approval, a flow's ``requestConfirmation``, any ``request_interaction``) is a pending
question too: :meth:`SessionRegistry.pending` returns the newest of the two — the newest
pending request, seen as a continuation of kind ``request`` owned by its requester, or the
session continuation. A request newer than the continuation supersedes it, as a second
continuation would; a newer continuation leaves the request pending (nothing here ever
closes a request: only an answer, a cancel or its deadline does).
"""

from __future__ import annotations

import dataclasses
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict

from pawflow.clock import iso, to_millis
from pawflow.durations import deadline_after
from pawflow.errors import InvalidInput, NotFound, NotPending
from pawflow.records import Interaction, Requester
from pawflow.store import SessionRow, Unit

if TYPE_CHECKING:
    from pawflow.store import Store
    from pawflow.store import Transaction as Tx

ContinuationKind = Literal["question", "approval", "choice"]
WaitKind = Literal["question", "approval", "choice", "request"]
"""What a session can wait on: a continuation's kind, or a durable ``request``."""
Origin = Literal["explicit", "inferred"]
SessionStatus = Literal["pending", "answered", "superseded", "expired", "withdrawn"]

DEFAULT_TTL = "7d"


class SessionContinuation(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: str
    session_id: str
    owner: str
    kind: WaitKind
    origin: Origin
    question: str
    run_id: str | None = None
    step_id: str | None = None
    intent: str | None = None
    payload: Any = None
    status: SessionStatus
    reply: str | None = None
    created_at: datetime
    expires_at: datetime | None  # None only for a durable request asked without a deadline
    closed_at: datetime | None = None
    request: Interaction | None = None
    """For kind ``request``: the durable request the session waits on (its id is ``id``)."""

    @classmethod
    def of_request(cls, request: Interaction) -> SessionContinuation:
        """A pending durable request as what its conversation waits on."""
        return cls(
            id=request.id,
            session_id=request.conversation_id,
            owner=requester_name(request.requester),
            kind="request",
            origin="explicit",
            question=request.message,
            payload=None if request.options is None else [dict(o) for o in request.options],
            status="pending",
            created_at=request.created_at,
            expires_at=request.expires_at,
            request=request,
        )

    @property
    def options(self) -> list[str]:
        """A ``choice``'s items, in the order they were offered (1-based when picked).

        An item is a string, or an object with a ``label`` (and a ``value`` for its owner).
        """
        if not isinstance(self.payload, list):
            return []
        return [
            str(item.get("label", item.get("value", ""))) if isinstance(item, dict) else str(item)
            for item in self.payload
        ]

    def option_value(self, pick: int) -> Any:
        """The owner's value of item ``pick`` (1-based): its ``value``, else the item."""
        if not isinstance(self.payload, list) or not 1 <= pick <= len(self.payload):
            return None
        item = self.payload[pick - 1]
        return item.get("value", item) if isinstance(item, dict) else item

    def to_dict(self) -> dict[str, Any]:
        data = self.model_dump(exclude={"request"})
        for key in ("created_at", "expires_at", "closed_at"):
            data[key] = None if data[key] is None else iso(data[key])
        data["request"] = None if self.request is None else self.request.to_dict()
        return data

    @classmethod
    def of_row(cls, row: SessionRow) -> SessionContinuation:
        return cls.model_validate(dataclasses.asdict(row))


def requester_name(requester: Requester) -> str:
    """Who owns a durable request's answer: an agent by its name, else ``flow:<name>``, …"""
    if requester.type == "agent":
        return requester.name
    return f"{requester.type}:{requester.name}"


def insert(
    tx: Tx,
    *,
    session_id: str,
    owner: str,
    kind: ContinuationKind,
    origin: Origin,
    question: str,
    run_id: str | None,
    step_id: str | None,
    intent: str | None,
    payload: Any,
    now: datetime,
    expires_at: datetime,
) -> SessionContinuation:
    """The raw insert: a second pending one in the session raises ``Conflict``."""
    u = Unit(tx, now)
    return SessionContinuation.of_row(
        u.sessions.insert(
            session_id=session_id,
            owner=owner,
            kind=kind,
            origin=origin,
            question=question,
            run_id=run_id,
            step_id=step_id,
            intent=intent,
            payload=payload,
            expires_at=expires_at,
        )
    )


class SessionRegistry:
    """Open, read and close the continuations of one store's sessions."""

    def __init__(self, store: Store, *, default_ttl: str | timedelta = DEFAULT_TTL) -> None:
        self.store = store
        self.default_ttl = default_ttl

    def ask(
        self,
        session_id: str,
        owner: str,
        kind: ContinuationKind,
        question: str,
        *,
        origin: Origin = "explicit",
        run_id: str | None = None,
        step_id: str | None = None,
        intent: str | None = None,
        payload: Any = None,
        ttl: str | timedelta | None = None,
    ) -> SessionContinuation:
        """Supersede what the session waits on (if anything) and open this, in one step."""
        if kind not in ("question", "approval", "choice"):
            raise InvalidInput(f"unknown continuation kind {kind!r}")
        if not session_id or not owner or not question.strip():
            raise InvalidInput("a continuation needs a session, an owner and a question")
        if kind == "choice" and (not isinstance(payload, list) or len(payload) < 2):
            raise InvalidInput("a choice needs at least two options in its payload")
        now = self.store.now()
        expires_at = deadline_after(now, ttl if ttl is not None else self.default_ttl)
        if expires_at is None:
            raise InvalidInput("a session continuation must expire")
        with self.store.unit() as u:
            u.sessions.lock(session_id)
            u.sessions.supersede_pending(session_id)
            return insert(
                u.tx,
                session_id=session_id,
                owner=owner,
                kind=kind,
                origin=origin,
                question=question,
                run_id=run_id,
                step_id=step_id,
                intent=intent,
                payload=payload,
                now=now,
                expires_at=expires_at,
            )

    def pending(self, session_id: str) -> SessionContinuation | None:
        """What this session waits on: the newest of its pending continuation and its newest
        pending durable request (kind ``request``).

        A continuation past its TTL is expired here; one older than the request is
        superseded by it.
        """
        now = self.store.now()
        with self.store.unit() as u:
            row = u.sessions.pending(session_id)
            if row is not None and row.expires_at <= now:
                u.sessions.close(row.id, "expired", None)
                row = None
            request = u.interactions.newest_pending(session_id)
            if request is not None and (
                row is None or to_millis(request.created_at) > to_millis(row.created_at)
            ):
                if row is not None:
                    u.sessions.close(row.id, "superseded", None)
                return SessionContinuation.of_request(request)
            return None if row is None else SessionContinuation.of_row(row)

    def answered(self, continuation_id: str, reply: str) -> SessionContinuation:
        return self._finish(continuation_id, "answered", reply)

    def withdraw(self, continuation_id: str) -> SessionContinuation:
        return self._finish(continuation_id, "withdrawn", None)

    def expire(self, continuation_id: str, reply: str | None = None) -> SessionContinuation:
        """Close one that can no longer be acted on (its checkpoint is gone)."""
        return self._finish(continuation_id, "expired", reply)

    def get(self, continuation_id: str) -> SessionContinuation | None:
        with self.store.unit(write=False) as u:
            row = u.sessions.get(continuation_id)
        return None if row is None else SessionContinuation.of_row(row)

    def _finish(
        self, continuation_id: str, status: SessionStatus, reply: str | None
    ) -> SessionContinuation:
        with self.store.unit() as u:
            row = u.sessions.close(continuation_id, status, reply)
            if row is None:
                current = u.sessions.get(continuation_id)
                if current is None:
                    raise NotFound("session continuation")
                raise NotPending(current.status)
            return SessionContinuation.of_row(row)

    def history(self, session_id: str) -> list[SessionContinuation]:
        with self.store.unit(write=False) as u:
            found = u.sessions.history(session_id)
        return [SessionContinuation.of_row(row) for row in found]

    def by_run(self, run_id: str) -> list[SessionContinuation]:
        with self.store.unit(write=False) as u:
            found = u.sessions.by_run(run_id)
        return [SessionContinuation.of_row(row) for row in found]


def expire_due(store: Store) -> dict[str, int]:
    """Sweep step: mark continuations past their TTL expired (reads enforce it anyway)."""
    with store.unit() as u:
        expired = u.sessions.expire_due()
    return {"session_continuations_expired": expired}
