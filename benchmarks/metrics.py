"""A ``/metrics`` scrape with 1,000 up to 1,000,000 continuations parked and as many
answered requests in the store.

The parked continuations and the answered requests are written set-based (:mod:`fill`: each
row as ``Store.park`` or an answered ``Store.ask`` leaves it), then 100 pending requests are
asked through the store. Each scrape renders the whole exposition (``generate_latest`` on
the registry the route serves) with the store read every time (no cache). The goal is a
scrape whose time does not grow with what is merely parked or already answered: its gauges
read only what is waiting to be done (at most 50 ms with 1M parked, on both backends).
"""

from __future__ import annotations

import statistics
from datetime import timedelta

import fill
from common import Run, fmt, ms, postgres_db, stopwatch
from prometheus_client import CollectorRegistry, generate_latest

from pawflow import Question, open_store
from pawflow.clock import to_millis
from pawflow.server.metrics import PawFlowCollector
from pawflow.store.engine.database import sql
from pawflow.store.engine.metrics import StoreGauges

PENDING = 100
SCRAPES = 20
MONTH = 86_400_000 * 30
GOAL = 0.050
"""Seconds a scrape may take with 1M parked."""


def scrapes(url: str, stored: int) -> tuple[float, float, int]:
    """Seconds to fill the store with ``stored`` parked continuations and as many answered
    requests, the median seconds of a scrape, and its size in bytes."""
    with open_store(url) as store:
        conversation = store.create_conversation("bench").id
        filling = stopwatch()
        with store.transaction() as tx:
            now = to_millis(store.now())
            fill.parked(tx, store.dialect, stored, now=now, deadline=now + MONTH, deadline_every=2)
            fill.answered(
                tx,
                store.dialect,
                stored,
                owner="bench",
                conversation=conversation,
                start=now - MONTH,
            )
        for n in range(PENDING):
            store.ask(Question("bench", conversation, "confirm", f"Pending {n}?"))
        filled = filling()
        if store.dialect == "postgres":  # fresh statistics, as autovacuum would give
            with store.transaction() as tx:
                sql(tx).execute("ANALYZE interactions")
                sql(tx).execute("ANALYZE continuations")
        registry = CollectorRegistry(auto_describe=False)
        gauges = StoreGauges(store, ttl=timedelta(0))  # every scrape reads the store
        registry.register(PawFlowCollector(gauges, store))
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
    run.heading(
        f"A /metrics scrape with {PENDING} pending requests, beside continuations parked and"
        " requests answered"
    )
    sizes = [1_000, 10_000] if run.quick else [1_000, 1_000_000]
    backends = ["sqlite", "postgres"] if run.postgres else ["sqlite"]
    if not run.postgres:
        run.row("metrics_postgres", "no PostgreSQL reachable", None)
    for backend in backends:
        took: dict[int, float] = {}
        for stored in sizes:
            if backend == "sqlite":
                filled, took[stored], size = scrapes(f"sqlite:///{run.path('metrics')}.db", stored)
            else:
                with postgres_db() as url:
                    filled, took[stored], size = scrapes(url, stored)
            smallest = took[sizes[0]]
            run.figure(
                f"{backend} scrape, {stored:,} parked and {stored:,} answered",
                ms(took[stored]),
                "ms",
                against=(
                    f"{sizes[0]:,} of each {ms(smallest):.2f} ms; {size:,} bytes;"
                    f" filled in {filled:.1f} s"
                ),
                ratio=took[stored] / smallest,
                goal=f"<= {ms(GOAL):.0f} ms, ~1x (flat)" if stored != sizes[0] else "",
            )
        largest = sizes[-1]
        run.row(
            f"metrics_{backend}",
            f"{fmt(ms(took[largest]))} ms with {largest:,} parked and {largest:,} answered"
            f" ({fmt(ms(took[sizes[0]]))} ms with {sizes[0]:,})",
            took[largest] <= GOAL if largest >= 1_000_000 else None,  # quick: no 1M
        )
