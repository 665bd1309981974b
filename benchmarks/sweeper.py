"""A sweeper pass over 100 due rows, with 1,000 up to 1,000,000 continuations parked.

The parked rows are written set-based, as ``Store.park`` would have written them
(:mod:`fill`): all on a request's signal, every other one also with a deadline a month away;
then, three times, 100 rows whose deadline has just passed, and a pass that must release
exactly those 100 (the median of the three is the figure). The goal is a pass whose time
does not grow with the rows that are merely waiting: flat, read here as the pass at 1M
taking at most twice the pass at 1k.
"""

from __future__ import annotations

import statistics
from datetime import timedelta

import fill
from common import Run, fmt, ms, postgres_db, stopwatch

from pawflow import FakeClock, SystemClock, open_store
from pawflow.clock import to_millis
from pawflow.store.engine.database import sql

DUE = 100
MONTH = 86_400_000 * 30
FLAT = 2.0
"""The most the pass at the largest count may take, as a multiple of the pass at 1k."""


PASSES = 3
"""Passes over one fill, each releasing ``DUE`` rows of its own: the median is the figure (a
single pass after a fill of a million rows may meet the disk still writing others' work)."""


def sweep_pass(url: str, parked: int) -> tuple[float, list[float]]:
    """Seconds to fill the table, and the seconds of each of ``PASSES`` passes, each
    releasing ``DUE`` rows whose deadline has just passed."""
    clock = FakeClock(SystemClock().now())
    with open_store(url, clock=clock) as store:
        now = to_millis(clock.now())
        filling = stopwatch()
        with store.transaction() as tx:
            fill.parked(tx, store.dialect, parked, now=now, deadline=now + MONTH, deadline_every=2)
        filled = filling()
        if store.dialect == "postgres":  # fresh statistics, as autovacuum would give
            with store.transaction() as tx:
                sql(tx).execute("ANALYZE continuations")
        else:  # the fill's WAL into the file first, not by the checkpointer during the pass
            store.db.peek("PRAGMA wal_checkpoint(TRUNCATE)")
        store.register_handler("bench", lambda delivery: None)
        passes = []
        for _ in range(PASSES):
            now = to_millis(clock.now())
            with store.transaction() as tx:
                fill.parked(tx, store.dialect, DUE, now=now, deadline=now + 1000, on_signal=False)
            clock.advance(timedelta(seconds=2))
            passing = stopwatch()
            report = store.sweep()
            passes.append(passing())
            if report["released"] != DUE:
                raise SystemExit(f"the sweep released {report['released']}, expected {DUE}")
        return filled, passes


def section(run: Run) -> None:
    run.heading(f"Sweeper pass over {DUE} due rows")
    sizes = [1_000, 10_000] if run.quick else [1_000, 100_000, 1_000_000]
    backends = ["sqlite", "postgres"] if run.postgres else ["sqlite"]
    if not run.postgres:
        run.row("sweep_postgres", "no PostgreSQL reachable", None)
    for backend in backends:
        passes: dict[int, float] = {}
        for parked in sizes:
            samples: list[float] = []
            repeats = 1 if parked >= 1_000_000 else run.repeats
            filled = 0.0
            for _ in range(repeats):
                if backend == "sqlite":
                    filled, took = sweep_pass(f"sqlite:///{run.path('sweep')}.db", parked)
                else:
                    with postgres_db() as url:
                        filled, took = sweep_pass(url, parked)
                samples += took
            passes[parked] = statistics.median(samples)
            smallest = passes[sizes[0]]
            each = " / ".join(f"{ms(took):.1f}" for took in samples[-PASSES:])
            run.figure(
                f"{backend} sweep pass, {parked:,} parked",
                ms(passes[parked]),
                "ms",
                against=f"{sizes[0]:,} parked {ms(smallest):.1f} ms; filled in {filled:.1f} s;"
                f" the last fill's passes {each} ms",
                ratio=passes[parked] / smallest,
                goal=f"<= {FLAT:.0f}x (flat)" if parked != sizes[0] else "",
            )
        largest = sizes[-1]
        ratio = passes[largest] / passes[sizes[0]]
        run.row(
            f"sweep_{backend}",
            f"{fmt(ms(passes[sizes[0]]))} ms at {sizes[0]:,}, {fmt(ms(passes[largest]))} ms"
            f" at {largest:,}: {ratio:.2f}x",
            ratio <= FLAT if largest >= 1_000_000 else None,  # a quick run does not reach 1M
        )
