"""A durable flow queue's batches find their rows by key, whatever the statistics say, and
on PostgreSQL rewrite them beside themselves.

On PostgreSQL a fresh or long-quiet queue table has statistics that call it (nearly) empty;
planned by them, turning a batch of rows into their next ones joined the batch with a scan
of the whole table, once per row of the batch. Here the table is never analyzed, as
autovacuum may not have looked yet, and the move must not scan it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pawflow.store import NewQueueRow, Store, Unit
from pawflow.store.engine.database import sql
from pawflow.testing import temporary_store
from tests.conftest import require_postgres

TARGET = "flow:plans"
OWNER = "worker"


def _scans(u: Unit) -> int:
    """Scans of the queue's table so far in this transaction."""
    row = sql(u.tx).one(
        "SELECT seq_scan FROM pg_stat_xact_user_tables WHERE relname = 'flow_queue'"
    )
    return 0 if row is None else int(row["seq_scan"])


def test_a_batch_moves_by_key_on_a_table_never_analyzed(store: Store) -> None:
    rows = [NewQueueRow("one", f"ff{n}", b"payload") for n in range(3000)]
    with store.unit() as u:
        ids = u.queues.enqueue(TARGET, rows)
    batch = ids[:256]
    with store.unit() as u:
        assert u.queues.take(batch, OWNER) == len(batch)
    with store.unit() as u:
        before = _scans(u) if store.dialect == "postgres" else 0
        moves = [(i, NewQueueRow("two", f"ff{n}", b"next", hops=1)) for n, i in enumerate(batch)]
        assert u.queues.move(moves, OWNER) == len(batch)
        if store.dialect == "postgres":
            assert _scans(u) == before  # 256 lookups by key, no scan of the table
    with store.unit(write=False) as u:
        counts = u.queues.counts(TARGET)[TARGET]
    assert counts["two"]["queued"] == len(batch)
    assert counts["one"]["queued"] == len(rows) - len(batch)


def test_queued_rows_get_their_own_ids_in_order(store: Store) -> None:
    """The ids ``enqueue`` returns are the rows' own, in the order given: one past the largest
    id each, and, once the largest possible id is taken (SQLite then draws ids at random),
    matched to the rows by what they hold."""
    first = [NewQueueRow("one", f"a{n}", b"a") for n in range(450)]
    with store.unit() as u:
        ids = u.queues.enqueue(TARGET, first)
    assert ids == sorted(ids) and len(set(ids)) == len(first)
    if store.dialect == "sqlite":
        with store.unit() as u:
            sql(u.tx).execute(
                "INSERT INTO flow_queue (id, target, task, flowfile_id, status, payload,"
                " created_at) VALUES (9223372036854775807, ?, 'one', 'last', 'queued', x'', 0)",
                (TARGET,),
            )
    drawn = [NewQueueRow("two" if n % 2 else "one", f"b{n}", b"b", hops=n) for n in range(450)]
    with store.unit() as u:
        given = u.queues.enqueue(TARGET, drawn)
    assert len(set(given)) == len(drawn)
    with store.unit(write=False) as u:
        found = {
            int(row["id"]): (row["task"], row["flowfile_id"], int(row["hops"]))
            for row in sql(u.tx).all("SELECT id, task, flowfile_id, hops FROM flow_queue")
        }
    assert [found[i] for i in ids] == [("one", row.flowfile_id, 0) for row in first]
    assert [found[i] for i in given] == [(r.task, r.flowfile_id, r.hops) for r in drawn]


def _updates(u: Unit) -> tuple[int, int]:
    """Rows of the queue's table updated so far in this transaction, and how many of those
    updates touched no index (heap-only)."""
    row = sql(u.tx).one(
        "SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_xact_user_tables WHERE relname = 'flow_queue'"
    )
    return (0, 0) if row is None else (int(row["n_tup_upd"]), int(row["n_tup_hot_upd"]))


@pytest.mark.postgres
def test_taking_and_moving_rows_touches_no_index_on_postgres(tmp_path: Path) -> None:
    """A FlowFile's row is written twice at each task (taken, moved on), no indexed column
    changed: on PostgreSQL both updates are heap-only, however full the table was made."""
    require_postgres()
    rows = [NewQueueRow("one", f"ff{n}", b"p" * 150) for n in range(2000)]
    with temporary_store("postgres", tmp_path) as store:
        with store.unit() as u:
            ids = u.queues.enqueue(TARGET, rows)
        batch = ids[:: len(ids) // 256][:256]  # spread over every page of the table
        with store.unit() as u:
            assert u.queues.take(batch, OWNER) == len(batch)
            moves = [
                (i, NewQueueRow("two", f"ff{n}", b"q" * 150, hops=1)) for n, i in enumerate(batch)
            ]
            assert u.queues.move(moves, OWNER) == len(batch)
            assert _updates(u) == (2 * len(batch), 2 * len(batch))
