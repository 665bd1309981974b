"""Durable FlowFile queues: the rows a deployed flow's FlowFiles wait in between two tasks.

A row is ``queued`` for a task of a target (``flow:<deployment id>``), ``running`` while the
process that owns the target has taken it (with an attempt number that counts every take),
or ``parked`` on a continuation. The owner deletes a row only in the transaction that records
the task's outcome and queues what the task emitted, so a crash at any point leaves every
FlowFile at the last task boundary it passed; the task that was running runs again.

Each change is fenced by the target's lease: a transaction of a process that no longer holds
it changes nothing, so work that moved to another process is never done twice from there.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from pawflow.clock import to_millis
from pawflow.errors import LeaseLost
from pawflow.store.engine.database import Tx, sql
from pawflow.store.engine.rows import decode

Status = Literal["queued", "running", "parked"]
STATUSES: tuple[Status, ...] = ("queued", "running", "parked")
# Statements stay well under SQLite's and psycopg's parameter limits.
_CHUNK = 200


@dataclass(frozen=True)
class QueueRow:
    id: int
    target: str
    task: str
    flowfile_id: str
    status: Status
    payload: bytes
    hops: int
    attempts: int
    owner: str | None
    continuation_id: str | None

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> QueueRow:
        return decode(cls, row)


@dataclass(frozen=True)
class NewRow:
    """A FlowFile to queue for ``task`` (or a parked FlowFile's place, with its continuation)."""

    task: str
    flowfile_id: str
    payload: bytes
    hops: int = 0
    status: Status = "queued"
    continuation_id: str | None = None


def _chunks(items: Sequence[Any]) -> list[Sequence[Any]]:
    return [items[i : i + _CHUNK] for i in range(0, len(items), _CHUNK)]


def _marks(count: int) -> str:
    return ", ".join("?" * count)


def fence(tx: Tx, lease: str, owner: str, epoch: int | None = None) -> int:
    """Raise ``LeaseLost`` unless ``owner`` holds ``lease`` (until this transaction ends)
    and, given an ``epoch``, has held it without a break since then; returns the epoch.

    The epoch is when the lease last changed hands (``acquired_at``, in milliseconds): it
    stays the same while its owner renews it, and is new once another process took it,
    even if it came back since. Only ownership is checked, not expiry: a lease nobody else
    took is still this owner's. On PostgreSQL the lease row stays share-locked, so a
    takeover waits for this commit.
    """
    lock = " FOR SHARE" if tx.dialect == "postgres" else ""
    row = sql(tx).one(f"SELECT owner, acquired_at FROM leases WHERE name = ?{lock}", (lease,))
    if row is None or row["owner"] != owner:
        raise LeaseLost(f"{lease} is no longer held by this process")
    held_since = int(row["acquired_at"])
    if epoch is not None and held_since != epoch:
        raise LeaseLost(f"{lease} changed hands since this process took it")
    return held_since


def enqueue(tx: Tx, target: str, rows: Sequence[NewRow], now: datetime) -> list[int]:
    """Insert ``rows`` for ``target``; returns their ids, in the order given."""
    at = to_millis(now)
    if tx.dialect == "postgres":
        return _enqueue_arrays(tx, target, rows, at) if rows else []
    ids: list[int] = []
    for chunk in _chunks(rows):
        values = ", ".join("(?, ?, ?, ?, ?, ?, ?, ?)" for _ in chunk)
        params: list[Any] = []
        for row in chunk:
            params += [
                target,
                row.task,
                row.flowfile_id,
                row.status,
                row.payload,
                row.hops,
                row.continuation_id,
                at,
            ]
        returned = sql(tx).all(
            "INSERT INTO flow_queue (target, task, flowfile_id, status, payload, hops,"
            f" continuation_id, created_at) VALUES {values} RETURNING id",
            params,
        )
        made = sorted(int(row["id"]) for row in returned)
        if made and made[-1] - made[0] == len(made) - 1:
            # SQLite inserts a VALUES list in its order, each row one past the largest id:
            # consecutive ids are the rows' own, in their order.
            ids += made
        else:  # ids past the largest possible are drawn at random: match them by content
            found = sql(tx).all(
                f"SELECT id, task, flowfile_id FROM flow_queue WHERE id IN ({_marks(len(made))})",
                made,
            )
            ids += _matched(chunk, found)
    return ids


def _matched(rows: Sequence[NewRow], returned: list[dict[str, Any]]) -> list[int]:
    """The ids of ``rows``, in their order: RETURNING promises none, so each row is matched
    back by what it holds."""
    by_key: dict[tuple[str, str], list[int]] = defaultdict(list)
    for found in sorted(returned, key=lambda r: int(r["id"])):
        by_key[(found["task"], found["flowfile_id"])].append(int(found["id"]))
    return [by_key[(row.task, row.flowfile_id)].pop(0) for row in rows]


# PostgreSQL: a batch's rows go as one array per column, whatever their number. One short
# statement, the same each time, rather than a VALUES list whose text grows with the batch:
# psycopg parses a statement's text for its parameters in Python and keeps what it parsed
# only for short texts, and binds one array faster than hundreds of values (a quarter of the
# time of a durable flow's batch went to the driver so).
_ROWS = (
    "unnest(?::text[], ?::text[], ?::text[], ?::bytea[], ?::integer[], ?::text[])"
    " AS v(task, flowfile_id, status, payload, hops, continuation_id)"
)
_MOVES = (
    "unnest(?::bigint[], ?::text[], ?::text[], ?::text[], ?::bytea[], ?::integer[], ?::text[])"
    " AS v(id, task, flowfile_id, status, payload, hops, continuation_id)"
)


def _columns(rows: Sequence[NewRow]) -> list[list[Any]]:
    return [
        [row.task for row in rows],
        [row.flowfile_id for row in rows],
        [row.status for row in rows],
        [row.payload for row in rows],
        [row.hops for row in rows],
        [row.continuation_id for row in rows],
    ]


def _enqueue_arrays(tx: Tx, target: str, rows: Sequence[NewRow], at: int) -> list[int]:
    returned = sql(tx).all(
        "INSERT INTO flow_queue (target, task, flowfile_id, status, payload, hops,"
        " continuation_id, created_at) SELECT ?, v.task, v.flowfile_id, v.status, v.payload,"
        f" v.hops, v.continuation_id, ? FROM {_ROWS} RETURNING id, task, flowfile_id",
        (target, at, *_columns(rows)),
    )
    return _matched(rows, returned)


def take(tx: Tx, ids: Sequence[int], owner: str, now: datetime) -> int:
    """Mark rows as running for ``owner`` and count the attempt; returns how many."""
    at = to_millis(now)
    if tx.dialect == "postgres":
        if not ids:
            return 0
        return sql(tx).execute(
            "UPDATE flow_queue SET status = 'running', owner = ?, attempts = attempts + 1,"
            " taken_at = ? WHERE id = ANY(?::bigint[]) AND status <> 'parked'",
            (owner, at, list(ids)),
        )
    taken = 0
    for chunk in _chunks(ids):
        taken += sql(tx).execute(
            "UPDATE flow_queue SET status = 'running', owner = ?, attempts = attempts + 1,"
            f" taken_at = ? WHERE id IN ({_marks(len(chunk))}) AND status <> 'parked'",
            (owner, at, *chunk),
        )
    return taken


def move(tx: Tx, moves: Sequence[tuple[int, NewRow]], owner: str) -> int:
    """Turn rows ``owner`` has running into the given rows, in place; returns how many.

    A FlowFile going on to one next task (or parking) keeps its row: one write, not two.
    """
    if tx.dialect == "postgres":
        if not moves:
            return 0
        # By key, whatever the table's statistics say. A queue's table swings from empty to
        # many rows between autovacuum's looks; planned by statistics taken while it was
        # nearly empty, the join of a batch with its rows became a nested loop over the whole
        # table (20 ms a batch of 256 at 5,000 rows queued, growing with the queue) rather
        # than 256 lookups by key (4 ms).
        sql(tx).send("SET LOCAL enable_seqscan = off")
        moved = sql(tx).execute(
            "UPDATE flow_queue SET task = v.task, flowfile_id = v.flowfile_id,"
            " status = v.status, payload = v.payload, hops = v.hops,"
            " continuation_id = v.continuation_id, attempts = 0, owner = NULL, taken_at = NULL"
            f" FROM {_MOVES} WHERE flow_queue.id = v.id AND flow_queue.owner = ?"
            " AND flow_queue.status = 'running'",
            ([row_id for row_id, _ in moves], *_columns([row for _, row in moves]), owner),
        )
        sql(tx).send("SET LOCAL enable_seqscan TO DEFAULT")
        return moved
    moved = 0
    for chunk in _chunks(moves):
        values = ", ".join("(?, ?, ?, ?, ?, ?, ?)" for _ in chunk)
        params: list[Any] = []
        for row_id, row in chunk:
            params += [
                row_id,
                row.task,
                row.flowfile_id,
                row.status,
                row.payload,
                row.hops,
                row.continuation_id,
            ]
        # SQLite names a VALUES list's columns column1, column2, …
        moved += sql(tx).execute(
            "UPDATE flow_queue SET task = v.column2, flowfile_id = v.column3,"
            " status = v.column4, payload = v.column5, hops = v.column6,"
            " continuation_id = v.column7, attempts = 0, owner = NULL, taken_at = NULL"
            f" FROM (VALUES {values}) AS v WHERE flow_queue.id = v.column1"
            " AND flow_queue.owner = ? AND flow_queue.status = 'running'",
            (*params, owner),
        )
    return moved


def finish(tx: Tx, ids: Sequence[int], owner: str) -> int:
    """Delete rows ``owner`` has running (their outcome is recorded); returns how many."""
    if tx.dialect == "postgres":
        if not ids:
            return 0
        return sql(tx).execute(
            "DELETE FROM flow_queue WHERE id = ANY(?::bigint[]) AND owner = ?"
            " AND status = 'running'",
            (list(ids), owner),
        )
    done = 0
    for chunk in _chunks(ids):
        done += sql(tx).execute(
            f"DELETE FROM flow_queue WHERE id IN ({_marks(len(chunk))}) AND owner = ?"
            " AND status = 'running'",
            (*chunk, owner),
        )
    return done


def recover(tx: Tx, target: str) -> list[QueueRow]:
    """What a new owner of ``target`` starts from: rows that were running are queued again.

    Returns every queued row, oldest first.
    """
    sql(tx).execute(
        "UPDATE flow_queue SET status = 'queued', owner = NULL"
        " WHERE target = ? AND status = 'running'",
        (target,),
    )
    rows = sql(tx).all(
        "SELECT * FROM flow_queue WHERE target = ? AND status = 'queued' ORDER BY id", (target,)
    )
    return [QueueRow.from_row(row) for row in rows]


def unpark(tx: Tx, continuation_id: str) -> bool:
    """Drop the place a parked FlowFile held, as its continuation is delivered."""
    return (
        sql(tx).execute(
            "DELETE FROM flow_queue WHERE continuation_id = ? AND status = 'parked'",
            (continuation_id,),
        )
        > 0
    )


def counts(tx: Tx, target: str | None = None) -> dict[str, dict[str, dict[Status, int]]]:
    """Rows by target, task and status (every status present, zero when none)."""
    where, params = ("WHERE target = ? ", (target,)) if target is not None else ("", ())
    rows = sql(tx).all(
        "SELECT target, task, status, count(*) AS n FROM flow_queue"
        f" {where}GROUP BY target, task, status",
        params,
    )
    found: dict[str, dict[str, dict[Status, int]]] = {}
    for row in rows:
        per_task = found.setdefault(row["target"], {})
        per_status = per_task.setdefault(row["task"], dict.fromkeys(STATUSES, 0))
        per_status[row["status"]] = int(row["n"])
    return found
