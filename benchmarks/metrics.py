"""A ``/metrics`` scrape with 1,000 up to 1,000,000 answered requests in the store.

The answered requests are written in one statement, then 100 pending ones are asked through
the store. Each scrape renders the whole exposition (``generate_latest`` on the registry the
route serves) with the store read every time (no cache). The goal is a scrape whose time
does not grow with the history: its gauges read only what is waiting.
"""

from __future__ import annotations

import statistics
from datetime import timedelta

from common import Run, ms, postgres_db, stopwatch
from prometheus_client import CollectorRegistry, generate_latest

from pawflow import Question, open_store
from pawflow.server.metrics import PawFlowCollector
from pawflow.store.engine.database import sql
from pawflow.store.engine.metrics import StoreGauges

PENDING = 100
SCRAPES = 20

_COLUMNS = (
    "INSERT INTO interactions (id, kind, message, response_schema, owner, conversation_id,"
    " requester, signal_id, status, answer, answered_by, answered_at, answered_via, created_at)"
)
_SQLITE_ROWS = (
    _COLUMNS + " WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < ?)"
    " SELECT 'a' || i, 'confirm', 'Go', '{}', ?, ?, '{}', 'confirmation:a' || i, 'answered',"
    " 'true', ?, ? + i, 'api', ? + i FROM n"
)
_POSTGRES_ROWS = (
    _COLUMNS + " SELECT 'a' || i, 'confirm', 'Go', '{}', ?, ?, '{}', 'confirmation:a' || i,"
    " 'answered', 'true', ?, ?::bigint + i, 'api', ?::bigint + i FROM generate_series(0, ? - 1)"
    " AS i"
)


def scrapes(url: str, answered: int) -> tuple[float, float, int]:
    """Seconds to fill the store, the median seconds of a scrape, and its size in bytes."""
    with open_store(url) as store:
        conversation = store.create_conversation("bench").id
        filling = stopwatch()
        with store.transaction() as tx:
            start = 1_600_000_000_000
            if store.dialect == "sqlite":
                sql(tx).execute(
                    _SQLITE_ROWS, (answered, "bench", conversation, "bench", start, start)
                )
            else:
                sql(tx).execute(
                    _POSTGRES_ROWS, ("bench", conversation, "bench", start, start, answered)
                )
        for n in range(PENDING):
            store.ask(Question("bench", conversation, "confirm", f"Pending {n}?"))
        filled = filling()
        if store.dialect == "postgresql":  # fresh statistics, as autovacuum would give
            with store.transaction() as tx:
                sql(tx).execute("ANALYZE interactions")
        registry = CollectorRegistry(auto_describe=False)
        gauges = StoreGauges(store, ttl=timedelta(0))  # every scrape reads the store
        registry.register(PawFlowCollector(gauges))
        size = len(generate_latest(registry))  # warm
        reads = gauges.reads
        times = []
        for _ in range(SCRAPES):
            scraping = stopwatch()
            generate_latest(registry)
            times.append(scraping())
        assert gauges.reads == reads + SCRAPES  # each scrape read the store
        return filled, statistics.median(times), size


def section(run: Run) -> None:
    run.heading(f"A /metrics scrape with {PENDING} pending requests and the history behind them")
    sizes = [1_000, 10_000] if run.quick else [1_000, 1_000_000]
    backends = ["sqlite", "postgres"] if run.postgres else ["sqlite"]
    for backend in backends:
        took: dict[int, float] = {}
        for answered in sizes:
            if backend == "sqlite":
                fill, took[answered], size = scrapes(
                    f"sqlite:///{run.path('metrics')}.db", answered
                )
            else:
                with postgres_db() as url:
                    fill, took[answered], size = scrapes(url, answered)
            smallest = took[sizes[0]]
            run.figure(
                f"{backend} scrape, {answered:,} answered",
                ms(took[answered]),
                "ms",
                against=(
                    f"{sizes[0]:,} answered {ms(smallest):.2f} ms; {size:,} bytes;"
                    f" filled in {fill:.1f} s"
                ),
                ratio=took[answered] / smallest,
                goal="~1x (flat)" if answered != sizes[0] else "",
            )
