"""The audit trail of requests: one append-only row per step, written in the transaction of
the step it records, so the trail never says more or less than what happened.

Actions: ``created`` (by the requester, for the assignees), ``delivered`` (a channel),
``claimed``, ``released``, ``reassigned``, ``reminded``, ``escalated``, ``extended``,
``voted``, ``answered`` (by whom, via which client or channel), ``defaulted`` (the
``on_expire`` policy answered), ``expired`` and ``cancelled``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime
from typing import Any, Literal

from pawflow.clock import from_millis, iso, to_millis
from pawflow.store.engine.database import Tx, sql

Action = Literal[
    "created",
    "delivered",
    "claimed",
    "released",
    "reassigned",
    "reminded",
    "escalated",
    "extended",
    "voted",
    "answered",
    "defaulted",
    "expired",
    "cancelled",
]
ACTIONS: tuple[str, ...] = Action.__args__  # type: ignore[attr-defined]


def record(
    tx: Tx,
    request_id: str,
    action: Action,
    now: datetime,
    *,
    actor: str | None = None,
    via: str | None = None,
    detail: dict[str, Any] | None = None,
) -> None:
    """Append one step to the request's trail (``actor`` None: the system or a policy)."""
    sql(tx).send(
        "INSERT INTO request_audit (request_id, at, action, actor, via, detail)"
        " VALUES (?, ?, ?, ?, ?, ?)",
        (
            request_id,
            to_millis(now),
            action,
            actor,
            via,
            None if not detail else json.dumps(detail, sort_keys=True),
        ),
    )


def _entry(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "seq": int(row["seq"]),
        "request_id": row["request_id"],
        "at": iso(from_millis(int(row["at"]))),
        "action": row["action"],
        "actor": row["actor"],
        "via": row["via"],
        "detail": json.loads(row["detail"]) if row["detail"] else {},
    }


def trail(tx: Tx, request_id: str) -> list[dict[str, Any]]:
    """Every step of one request, oldest first."""
    rows = sql(tx).all(
        "SELECT * FROM request_audit WHERE request_id = ? ORDER BY seq", (request_id,)
    )
    return [_entry(row) for row in rows]


SINCE_SLACK = 60_000
"""Milliseconds before ``since``'s start from which the trail is read and filtered: steps
are numbered as they are written, each stamped by its writer's clock, so writers side by
side (or a clock set back) may stamp a step a little older than one numbered before it."""


def since(tx: Tx, start: datetime, *, batch: int = 1000) -> Iterator[dict[str, Any]]:
    """Every step recorded at or after ``start``, oldest first (read a batch at a time).

    The trail grows in the order of its numbers, so where it starts to be recent is found
    by halving the numbers (a few lookups by key), with no index on the time: one page less
    written for every step recorded."""
    at = to_millis(start)
    after = _numbered_before(tx, at - SINCE_SLACK)
    while True:
        rows = sql(tx).all(
            "SELECT * FROM request_audit WHERE seq > ? AND at >= ? ORDER BY seq LIMIT ?",
            (after, at, batch),
        )
        for row in rows:
            yield _entry(row)
        if len(rows) < batch:
            return
        after = int(rows[-1]["seq"])


def _numbered_before(tx: Tx, at: int) -> int:
    """A number below every step stamped ``at`` or later (the trail read as growing with
    time): the steps numbered up to it were all stamped earlier."""
    bounds = sql(tx).one("SELECT min(seq) AS lo, max(seq) AS hi FROM request_audit")
    if bounds is None or bounds["lo"] is None:
        return 0
    lo, hi = int(bounds["lo"]), int(bounds["hi"]) + 1
    while lo < hi:  # the first number from which the steps are stamped ``at`` or later
        middle = (lo + hi) // 2
        row = sql(tx).one(
            "SELECT seq, at FROM request_audit WHERE seq >= ? ORDER BY seq LIMIT 1", (middle,)
        )
        if row is None or int(row["at"]) >= at:
            hi = middle
        else:
            lo = int(row["seq"]) + 1
    return lo - 1
