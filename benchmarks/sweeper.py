"""A sweeper pass over 100 due rows, with 1,000 up to 1,000,000 continuations parked.

The parked rows are written in one statement (half waiting on a signal with no deadline,
half with a deadline a month away), then 100 rows whose deadline has just passed; the pass
must release exactly those 100. The goal is a pass whose time does not grow with the rows
that are merely waiting.
"""

from __future__ import annotations

import statistics
from datetime import timedelta

from common import Run, ms, postgres_db, stopwatch

from pawflow import FakeClock, SystemClock, open_store
from pawflow.clock import to_millis
from pawflow.store.engine.database import sql

DUE = 100
MONTH = 86_400_000 * 30

_COLUMNS = (
    "INSERT INTO continuations (id, target, signal_id, deadline, payload, status, created_at)"
)
_SQLITE_ROWS = (
    _COLUMNS + " WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < ?)"
    " SELECT 'p' || i, 'bench:x', 'sig' || i, CASE WHEN i % 2 = 1 THEN ? END, x'00', 'parked', ?"
    " FROM n"
)
_POSTGRES_ROWS = (
    _COLUMNS + " SELECT 'p' || i, 'bench:x', 'sig' || i, CASE WHEN i % 2 = 1 THEN ?::bigint END,"
    " '\\x00'::bytea, 'parked', ?::bigint FROM generate_series(0, ? - 1) AS i"
)


def sweep_pass(url: str, parked: int) -> tuple[float, float]:
    """Seconds to fill the table, and seconds of one pass releasing the ``DUE`` rows."""
    clock = FakeClock(SystemClock().now())
    with open_store(url, clock=clock) as store:
        now = to_millis(clock.now())
        filling = stopwatch()
        with store.transaction() as tx:
            if store.dialect == "sqlite":
                sql(tx).execute(_SQLITE_ROWS, (parked, now + MONTH, now))
            else:
                sql(tx).execute(_POSTGRES_ROWS, (now + MONTH, now, parked))
            for n in range(DUE):
                sql(tx).execute(
                    _COLUMNS + " VALUES (?, 'bench:x', NULL, ?, ?, 'parked', ?)",
                    (f"d{n}", now + 1000, b"\x00", now),
                )
        filled = filling()
        if store.dialect == "postgres":  # fresh statistics, as autovacuum would give
            with store.transaction() as tx:
                sql(tx).execute("ANALYZE continuations")
        store.register_handler("bench", lambda delivery: None)
        clock.advance(timedelta(seconds=2))
        passing = stopwatch()
        report = store.sweep()
        took = passing()
        if report["released"] != DUE:
            raise SystemExit(f"the sweep released {report['released']}, expected {DUE}")
        return filled, took


def section(run: Run) -> None:
    run.heading(f"Sweeper pass over {DUE} due rows")
    sizes = [1_000, 10_000] if run.quick else [1_000, 100_000, 1_000_000]
    backends = ["sqlite", "postgres"] if run.postgres else ["sqlite"]
    for backend in backends:
        if backend == "postgres" and not run.quick:
            sizes = [1_000, 100_000]  # 1M rows on a shared server take minutes to write
        passes: dict[int, float] = {}
        for parked in sizes:
            samples = []
            repeats = 1 if parked >= 1_000_000 else run.repeats
            fill = 0.0
            for _ in range(repeats):
                if backend == "sqlite":
                    fill, took = sweep_pass(f"sqlite:///{run.path('sweep')}.db", parked)
                else:
                    with postgres_db() as url:
                        fill, took = sweep_pass(url, parked)
                samples.append(took)
            passes[parked] = statistics.median(samples)
            smallest = passes[sizes[0]]
            run.figure(
                f"{backend} sweep pass, {parked:,} parked",
                ms(passes[parked]),
                "ms",
                against=f"{sizes[0]:,} parked {ms(smallest):.1f} ms; filled in {fill:.1f} s",
                ratio=passes[parked] / smallest,
                goal="~1x (flat)" if parked != sizes[0] else "",
            )
