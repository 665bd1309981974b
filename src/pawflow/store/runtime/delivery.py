"""Handing resolved continuations to their targets, exactly once.

Targets are named ``kind:key`` (``flow:<instance>``, ``agent:<name>``, …); a handler
registered for a kind takes the continuations whose target it accepts. A continuation is
deleted in the same transaction in which its handler takes it, so a crash at any point
either leaves it to deliver again or has it delivered, never both. A handler that cannot take
it now raises (``Undeliverable`` or anything else): the transaction rolls back and the
continuation stays resolved, retried with backoff.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from pawflow import telemetry
from pawflow.clock import to_millis
from pawflow.errors import InvalidInput, QueueFull
from pawflow.store.engine.database import sql
from pawflow.store.engine.metrics import asked, count
from pawflow.store.engine.waits import refuse_wait
from pawflow.store.runtime.continuations import (
    RESOLVED_NOTICE,
    Continuation,
    consume,
    defer,
    hold_back,
)

if TYPE_CHECKING:
    from pawflow.store.engine.database import Database, Tx

log = logging.getLogger("pawflow.delivery")

MAX_BACKOFF = timedelta(minutes=5)


@dataclass(frozen=True)
class Delivery:
    """A resolved continuation being handed on, inside the transaction that consumes it.

    Durable effects the handler writes through ``tx`` commit together with the consumption.
    """

    continuation: Continuation
    tx: Tx


@runtime_checkable
class DeliveryHandler(Protocol):
    def accepts(self, target: str) -> bool:
        """Whether this process can take continuations for ``target`` now."""
        ...

    def deliver(self, delivery: Delivery) -> None: ...


class FunctionHandler:
    """A handler made of a function; accepts every target of its kind."""

    def __init__(self, deliver: Callable[[Delivery], None]) -> None:
        self._deliver = deliver

    def accepts(self, target: str) -> bool:
        return True

    def deliver(self, delivery: Delivery) -> None:
        self._deliver(delivery)


class DeliveryRegistry:
    def __init__(self) -> None:
        self._handlers: dict[str, DeliveryHandler] = {}
        self._lock = threading.Lock()

    def register(self, kind: str, handler: DeliveryHandler | Callable[[Delivery], None]) -> None:
        if not kind or ":" in kind:
            raise InvalidInput(f"invalid target kind {kind!r}")
        resolved = handler if isinstance(handler, DeliveryHandler) else FunctionHandler(handler)
        with self._lock:
            self._handlers[kind] = resolved

    def unregister(self, kind: str) -> None:
        with self._lock:
            self._handlers.pop(kind, None)

    def takes_every_target(self, kinds: list[str]) -> bool:
        """Whether the handlers of ``kinds`` take every target of their kind (functions)."""
        with self._lock:
            return all(isinstance(self._handlers.get(k), FunctionHandler) for k in kinds)

    def kinds(self) -> list[str]:
        with self._lock:
            return sorted(self._handlers)

    def handler_for(self, target: str) -> DeliveryHandler | None:
        with self._lock:
            handler = self._handlers.get(target.split(":", 1)[0])
        if handler is None or not handler.accepts(target):
            return None
        return handler


def backoff(attempts: int) -> timedelta:
    return min(timedelta(seconds=2 ** min(attempts, 16)), MAX_BACKOFF)


def anything_due(db: Database, now: datetime) -> bool:
    """A cheap read, so a change elsewhere does not take the write lock for nothing."""
    row = db.peek(
        "SELECT 1 AS due FROM continuations WHERE status = 'resolved'"
        " AND next_attempt_at <= ? LIMIT 1",
        (to_millis(now),),
    )
    return row is not None


def deliver_due(
    db: Database,
    registry: DeliveryRegistry,
    now: datetime,
    *,
    limit: int,
    target: str | None = None,
) -> int:
    """Deliver resolved continuations whose handlers live here; returns how many.

    One transaction leases the due batch and hands each row on; a handler's failure rolls
    back only its own savepoint and books the retry. With ``target``, the continuations
    for that one requester whether due or not: it has room for them now (backpressure).
    """
    kinds = registry.kinds()
    if not kinds or (target is not None and registry.handler_for(target) is None):
        return 0
    delivered = 0
    with db.transaction() as tx:
        if target is None:
            rows = _due(tx, registry, kinds, now, limit)
        else:
            rows = sql(tx).all(
                "SELECT * FROM continuations WHERE status = 'resolved' AND target = ?"
                " ORDER BY next_attempt_at, id LIMIT ?" + sql(tx).skip_locked,
                (target, limit),
            )
        for row in rows:
            handler = registry.handler_for(row["target"])
            if handler is not None and _hand_over(tx, handler, row, now):
                delivered += 1
    return delivered


def _due(
    tx: Tx, registry: DeliveryRegistry, kinds: list[str], now: datetime, limit: int
) -> list[dict[str, Any]]:
    """The due continuations this process takes, locked (PostgreSQL: those another
    process holds are passed over). Where a handler takes only some targets of its kind (a
    flow runner its own flows), the due rows are read first and only those it accepts are
    locked: a row this process leaves must not wait for its transaction to end."""
    matches = " OR ".join("target LIKE ?" for _ in kinds)
    due = (
        "SELECT * FROM continuations WHERE status = 'resolved'"
        f" AND next_attempt_at <= ? AND ({matches}) ORDER BY next_attempt_at LIMIT ?"
    )
    params = (to_millis(now), *[f"{kind}:%" for kind in kinds], limit)
    skip_locked = sql(tx).skip_locked
    if not skip_locked or registry.takes_every_target(kinds):
        return sql(tx).all(due + skip_locked, params)
    ids = [row["id"] for row in sql(tx).all(due, params) if registry.handler_for(row["target"])]
    if not ids:
        return []
    return sql(tx).all(
        f"SELECT * FROM continuations WHERE id IN ({', '.join('?' for _ in ids)})"
        " AND status = 'resolved' ORDER BY next_attempt_at" + skip_locked,
        ids,
    )


def deliver_resolved(tx: Tx, registry: DeliveryRegistry, now: datetime) -> int:
    """Deliver what this transaction resolved, to handlers that live here, inside it.

    The answer and its delivery then commit together, and no second transaction follows.
    What no handler here takes (or a handler refuses) stays resolved, announced to other
    processes and retried by the sweeper, exactly as if it had been resolved elsewhere.
    """
    delivered = 0
    left = False
    # Handlers may resolve more through ``tx``; those join the list as it is walked.
    for row in tx.resolved:
        handler = registry.handler_for(row["target"])
        if handler is None:
            left = True
            continue
        refuse_wait()  # on an event loop, a handler is run on a worker thread
        if _hand_over(tx, handler, row, now):
            delivered += 1
        else:
            left = True
    tx.resolved.clear()
    if not left:
        tx.withdraw(RESOLVED_NOTICE)
    return delivered


def _hand_over(tx: Tx, handler: DeliveryHandler, row: dict[str, Any], now: datetime) -> bool:
    target = str(row["target"])
    attributes = {"pawflow.target": target, "pawflow.continuation_id": row["id"]}
    with telemetry.span("pawflow.deliver", attributes) as span:
        if span.is_recording():  # linked to the ask of the request it resumes on, if any
            request = asked(tx, row["signal_id"])
            telemetry.link(span, None if request is None else request["trace_context"])
        try:
            with tx.savepoint("delivery"):
                handler.deliver(Delivery(Continuation.from_row(row), tx))
        except QueueFull as exc:  # not a failure: it waits for room, and is asked for then
            hold_back(tx, row["id"], now + MAX_BACKOFF, str(exc)[:1000])
            count(tx, telemetry.DELIVERIES, target=target.split(":", 1)[0], result="held")
            return False
        except Exception as exc:  # any handler failure means "retry later"
            log.info("delivery of %s deferred: %s", row["id"], exc)
            defer(tx, row["id"], now + backoff(int(row["attempts"])), str(exc)[:1000])
            count(tx, telemetry.DELIVERIES, target=target.split(":", 1)[0], result="deferred")
            return False
        consume(tx, row["id"])
        count(tx, telemetry.DELIVERIES, target=target.split(":", 1)[0], result="delivered")
        return True
