"""Durable signals and the continuations parked on them or on a deadline.

A signal remembers its latest value: a continuation parked on a signal that has already
fired is resolved at once (no lost-notify race). Parking and firing take the same per-signal
lock, so one of them always sees the other. Whatever a transaction resolves is listed in
``tx.resolved``, so it can be delivered before that transaction commits.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pawflow.clock import from_millis, to_millis
from pawflow.errors import FieldError, InvalidInput, NotFound, PayloadTooLarge
from pawflow.ids import new_id
from pawflow.store.engine.database import sql
from pawflow.store.engine.rows import JSON, decode

if TYPE_CHECKING:
    from pawflow.store.engine.database import Tx

Outcome = Literal["signaled", "timeout", "elapsed", "cancelled"]

RESOLVED_NOTICE = "resolved"
SIGNAL_NOTICE_PREFIX = "signal:"


@dataclass(frozen=True)
class Continuation:
    """Something parked until a signal or a deadline, to be handed to ``target``."""

    id: str
    target: str
    signal_id: str | None
    deadline: datetime | None
    payload: bytes
    status: Literal["parked", "resolved"]
    outcome: Outcome | None
    value: Annotated[Any, JSON]
    attempts: int
    created_at: datetime

    @property
    def target_kind(self) -> str:
        """The part of ``target`` before the first ``:`` names its delivery handler."""
        return self.target.split(":", 1)[0]

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> Continuation:
        return decode(cls, row)


@dataclass(frozen=True)
class SignalValue:
    signal_id: str
    value: Any
    fired_at: datetime


def read_signal(tx: Tx, signal_id: str) -> SignalValue | None:
    row = sql(tx).one("SELECT value, fired_at FROM signals WHERE signal_id = ?", (signal_id,))
    if row is None:
        return None
    return SignalValue(signal_id, json.loads(row["value"]), from_millis(row["fired_at"]))


def fire_signal(tx: Tx, signal_id: str, value: Any, now: datetime) -> int:
    """Remember ``value`` as the signal's latest and resolve everything parked on it."""
    encoded = json.dumps(value)
    at = to_millis(now)
    tx.lock_key(signal_id)
    remember = (
        "INSERT INTO signals (signal_id, value, fired_at) VALUES (?, ?, ?)"
        " ON CONFLICT (signal_id) DO UPDATE SET value = excluded.value,"
        " fired_at = excluded.fired_at, fire_count = signals.fire_count + 1"
    )
    resolve = (
        "UPDATE continuations SET status = 'resolved', outcome = 'signaled', value = ?,"
        " resolved_at = ?, next_attempt_at = ?"
        " WHERE status = 'parked' AND signal_id = ? RETURNING *"
    )
    if tx.dialect == "postgres":  # both in one round trip (a CTE's write always runs)
        resolved = sql(tx).all(
            f"WITH remembered AS ({remember}) {resolve}",
            (signal_id, encoded, at, encoded, at, at, signal_id),
        )
    else:
        sql(tx).execute(remember, (signal_id, encoded, at))
        resolved = sql(tx).all(resolve, (encoded, at, at, signal_id))
    tx.notify(SIGNAL_NOTICE_PREFIX + signal_id)
    if resolved:
        tx.resolved.extend(resolved)
        tx.notify(RESOLVED_NOTICE)
    return len(resolved)


Payload = (
    bytes | bytearray | memoryview | dict[str, Any] | list[Any] | str | int | float | bool | None
)
"""What a continuation carries: bytes as given, or a JSON value (kept as its UTF-8 JSON)."""


def encode_payload(payload: object) -> bytes:
    """A payload as the bytes kept: bytes as they are, a JSON value as its JSON;
    ``InvalidInput`` naming ``payload`` for anything else."""
    if isinstance(payload, bytes):
        return payload
    if isinstance(payload, bytearray | memoryview):
        return bytes(payload)
    try:
        return json.dumps(payload, allow_nan=False, separators=(",", ":")).encode()
    except (TypeError, ValueError) as exc:
        message = f"payload must be bytes or a JSON value, not {type(payload).__name__}"
        raise InvalidInput(message, [FieldError("payload", message)]) from exc


def parked_for(tx: Tx, signal_id: str, target: str) -> Continuation | None:
    """The continuation ``target`` parked on ``signal_id``, if it is still kept."""
    row = sql(tx).one(
        "SELECT * FROM continuations WHERE signal_id = ? AND target = ? ORDER BY created_at"
        " LIMIT 1",
        (signal_id, target),
    )
    return None if row is None else Continuation.from_row(row)


def park(
    tx: Tx,
    target: str,
    *,
    now: datetime,
    payload: Payload,
    payload_cap: int,
    signal_id: str | None = None,
    deadline: datetime | None = None,
    fresh_signal: bool = False,
) -> Continuation:
    """Park a continuation on a signal (with an optional deadline) or until a deadline.

    ``fresh_signal``: the signal's id was made (unguessable) in this very transaction, so it
    cannot have fired yet: no lock is taken and no earlier value looked for.
    """
    if not target or ":" not in target:
        raise InvalidInput(f"invalid delivery target {target!r}: expected 'kind:key'")
    if signal_id is None and deadline is None:
        raise InvalidInput("a continuation needs a signal, a deadline, or both")
    if signal_id is not None and not signal_id:
        raise InvalidInput("signal_id must not be empty")
    payload = encode_payload(payload)
    if len(payload) > payload_cap:
        raise PayloadTooLarge(
            f"payload of {len(payload)} bytes exceeds the cap of {payload_cap} bytes"
        )
    at = to_millis(now)
    status: str = "parked"
    outcome: str | None = None
    value: str | None = None
    if signal_id is not None and not fresh_signal:
        tx.lock_key(signal_id)
        fired = sql(tx).one("SELECT value FROM signals WHERE signal_id = ?", (signal_id,))
        if fired is not None:
            status, outcome, value = "resolved", "signaled", fired["value"]
    continuation_id = new_id()
    row: dict[str, Any] = {
        "id": continuation_id,
        "target": target,
        "signal_id": signal_id,
        "deadline": None if deadline is None else to_millis(deadline),
        "payload": payload,
        "status": status,
        "outcome": outcome,
        "value": value,
        "attempts": 0,
        "next_attempt_at": at if status == "resolved" else None,
        "last_error": None,
        "created_at": at,
        "resolved_at": at if status == "resolved" else None,
    }
    # The row is written as built: no RETURNING round trip, nothing to read back.
    sql(tx).send(_INSERT, tuple(row[column] for column in _COLUMNS))
    if status == "resolved":
        tx.resolved.append(row)
        tx.notify(RESOLVED_NOTICE)
    return Continuation(
        id=continuation_id,
        target=target,
        signal_id=signal_id,
        deadline=None if deadline is None else from_millis(row["deadline"]),
        payload=bytes(payload),
        status="resolved" if status == "resolved" else "parked",
        outcome="signaled" if outcome is not None else None,
        value=None if value is None else json.loads(value),
        attempts=0,
        created_at=from_millis(at),
    )


_COLUMNS = (
    "id",
    "target",
    "signal_id",
    "deadline",
    "payload",
    "status",
    "outcome",
    "value",
    "next_attempt_at",
    "created_at",
    "resolved_at",
)
_INSERT = (
    f"INSERT INTO continuations ({', '.join(_COLUMNS)}) VALUES ({', '.join('?' for _ in _COLUMNS)})"
)


def get_continuation(tx: Tx, continuation_id: str) -> Continuation:
    row = sql(tx).one("SELECT * FROM continuations WHERE id = ?", (continuation_id,))
    if row is None:
        raise NotFound("continuation")
    return Continuation.from_row(row)


def cancel_continuation(tx: Tx, continuation_id: str, now: datetime) -> bool:
    """Release a parked continuation with outcome ``cancelled``; False if not parked."""
    at = to_millis(now)
    changed = sql(tx).one(
        "UPDATE continuations SET status = 'resolved', outcome = 'cancelled',"
        " resolved_at = ?, next_attempt_at = ? WHERE id = ? AND status = 'parked' RETURNING *",
        (at, at, continuation_id),
    )
    if changed is not None:
        tx.resolved.append(changed)
        tx.notify(RESOLVED_NOTICE)
    return changed is not None


def release_due(tx: Tx, now: datetime, limit: int) -> int:
    """Time out waits and fire timers whose deadline has come (one leased batch)."""
    at = to_millis(now)
    due = sql(tx).all(
        "SELECT id, signal_id FROM continuations WHERE status = 'parked' AND deadline <= ?"
        " ORDER BY deadline LIMIT ?" + sql(tx).skip_locked,
        (at, limit),
    )
    for row in due:
        outcome = "elapsed" if row["signal_id"] is None else "timeout"
        tx.resolved.extend(
            sql(tx).all(
                "UPDATE continuations SET status = 'resolved', outcome = ?, resolved_at = ?,"
                " next_attempt_at = ? WHERE id = ? AND status = 'parked' RETURNING *",
                (outcome, at, at, row["id"]),
            )
        )
    if due:
        tx.notify(RESOLVED_NOTICE)
    return len(due)


def pending_for_target(tx: Tx, target: str) -> int:
    """How many continuations (parked or undelivered) still belong to ``target``."""
    row = sql(tx).one("SELECT count(*) AS n FROM continuations WHERE target = ?", (target,))
    return 0 if row is None else int(row["n"])


def discard(tx: Tx, target: str, signal_id: str) -> int:
    """Delete ``target``'s continuations on ``signal_id`` (their answer was taken directly)."""
    return sql(tx).execute(
        "DELETE FROM continuations WHERE target = ? AND signal_id = ?", (target, signal_id)
    )


def hold_back(tx: Tx, continuation_id: str, until: datetime, error: str) -> None:
    """A resolved continuation its handler has no room for yet: offered again at ``until``,
    without counting an attempt."""
    sql(tx).execute(
        "UPDATE continuations SET next_attempt_at = ?, last_error = ? WHERE id = ?",
        (to_millis(until), error, continuation_id),
    )


def defer(tx: Tx, continuation_id: str, until: datetime, error: str) -> None:
    """A resolved continuation its handler failed to take: one more attempt, at ``until``."""
    sql(tx).execute(
        "UPDATE continuations SET attempts = attempts + 1, next_attempt_at = ?,"
        " last_error = ? WHERE id = ?",
        (to_millis(until), error, continuation_id),
    )


def consume(tx: Tx, continuation_id: str) -> None:
    """A resolved continuation its handler took: gone, once."""
    sql(tx).send("DELETE FROM continuations WHERE id = ?", (continuation_id,))
