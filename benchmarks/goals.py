"""The table ``make bench`` ends with: each row of the speed goals, beside what this run
measured (or the section that measures it, when that section did not run)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Goal:
    key: str
    what: str
    goal: str
    section: str


GOALS: tuple[Goal, ...] = (
    Goal("help", "pawflow --help", "<= 0.3 s", "startup"),
    Goal("inbox", "pawflow inbox, running server", "<= 0.5 s", "startup"),
    Goal("answer", "pawflow answer, running server", "<= 0.5 s", "startup"),
    Goal("serve", "pawflow serve -> /healthz 200", "<= 1.5 s", "startup"),
    Goal("backpressure", "60 FlowFiles resumed by one answer, queue_capacity 3", "<= 2 s", "flows"),
    Goal("flows_sqlite", "durable flow queues (SQLite) vs in-memory", ">= 0.6x", "flows"),
    Goal("flows_postgres", "durable flow queues (PostgreSQL) vs in-memory", ">= 0.6x", "flows"),
    Goal(
        "sweep_sqlite",
        "SQLite sweep pass, 1M parked vs 1k",
        "flat: 1M <= 2x the 1k pass",
        "sweeper",
    ),
    Goal(
        "sweep_postgres",
        "PostgreSQL sweep pass, 1M parked vs 1k",
        "flat: 1M <= 2x the 1k pass",
        "sweeper",
    ),
    Goal(
        "metrics_sqlite", "SQLite /metrics scrape, 1M parked + 1M answered", "<= 50 ms", "metrics"
    ),
    Goal(
        "metrics_postgres",
        "PostgreSQL /metrics scrape, 1M parked + 1M answered",
        "<= 50 ms",
        "metrics",
    ),
    Goal("http", "HTTP actions, 64 clients", ">= 2x today's req/s, p99 < 100 ms", "http"),
    Goal("sse", "SSE, one event -> 1,000 open streams", "p50 <= 50 ms", "sse"),
    Goal("pg_threads", "PostgreSQL cycle, 8 threads vs 1", ">= 4x", "postgres"),
    Goal("pg_one", "PostgreSQL answer -> resume, one process", "p50 <= 1 ms", "latency"),
    Goal("pg_across", "PostgreSQL answer -> resume, across processes", "p50 <= 3 ms", "latency"),
    Goal("sqlite_across", "SQLite answer -> resume, across processes", "p50 <= 2 ms", "latency"),
    Goal("sqlite_floor", "SQLite cycle vs the raw 2-commit floor", ">= 0.33x", "sqlite"),
    Goal("pg_floor", "PostgreSQL cycle vs the raw 2-commit floor", ">= 0.4x", "postgres"),
    Goal("sqlite_bytes", "SQLite bytes written per cycle", "beside the floor's", "costs"),
    Goal(
        "deliveries",
        "a user's notification, 6 slow + 1 trickling receivers of another",
        "p99 <= 2 s",
        "deliveries",
    ),
    Goal("wake", "ask -> first channel attempt, dispatcher idle", "p50 <= 100 ms", "deliveries"),
    Goal("make_test", "make test on the 2-core machine", "<= 15 min", ""),
)

MAKE_TEST = "not timed here: CI=true make test (docs/performance.md)"


def table(results: dict[str, tuple[str, bool | None]]) -> list[str]:
    """The lines of the table, in the order of :data:`GOALS`."""
    lines = ["| what | measured | goal | met? |", "|---|---|---|---|"]
    for goal in GOALS:
        if goal.key in results:
            measured, met = results[goal.key]
            verdict = "-" if met is None else "yes" if met else "no"
        elif goal.section:
            measured, verdict = f"not run (--only {goal.section})", "-"
        else:
            measured, verdict = MAKE_TEST, "-"
        lines.append(f"| {goal.what} | {measured} | {goal.goal} | {verdict} |")
    return lines
