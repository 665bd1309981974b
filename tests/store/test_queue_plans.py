"""A durable flow queue's batches find their rows by key, whatever the statistics say.

On PostgreSQL a fresh or long-quiet queue table has statistics that call it (nearly) empty;
planned by them, turning a batch of rows into their next ones joined the batch with a scan
of the whole table, once per row of the batch. Here the table is never analyzed, as
autovacuum may not have looked yet, and the move must not scan it.
"""

from __future__ import annotations

from pawflow.store import NewQueueRow, Store, Unit
from pawflow.store.engine.database import sql

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
