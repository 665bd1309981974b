"""HTTP actions: requests per second and tail latency at 1, 64 and 256 concurrent clients.

Each client is one kept-alive connection to a real ``pawflow serve`` (a child process, SQLite
store, loopback) asking a question and answering it, over and over:
``request_interaction`` then ``respond_interaction`` — two writes, the API's hot path. A
fixed budget of requests is shared among the clients, so every level ends in bounded time.
Then the same at 1 and 64 clients on ``pawflow serve --workers N`` (one process per core),
on SQLite and on PostgreSQL.
"""

from __future__ import annotations

import asyncio
import os
import time

from common import Run, ServerProcess, ms, pawflow_serve, percentile, postgres_db
from wire import Connection

LEVELS = (1, 64, 256)
TODAY_RPS = 260.0
"""Requests/s at 64 clients before the speed work, as recorded in docs/performance.md."""


async def _load(server: ServerProcess, clients: int, budget: int) -> tuple[float, list[float]]:
    """Requests/s and each request's seconds, with ``clients`` connections sharing ``budget``."""
    setup = Connection(server.host, server.port, server.token)
    _, body = await setup.post("/api/actions/create_conversation", {"title": "load"})
    await setup.close()
    conversation = body["conversation"]["id"]
    latencies: list[float] = []
    remaining = budget
    failures: list[str] = []

    async def client() -> None:
        nonlocal remaining
        conn = Connection(server.host, server.port, server.token)
        try:
            while remaining >= 2:
                remaining -= 2
                started = time.perf_counter()
                status, asked = await conn.post(
                    "/api/actions/request_interaction",
                    {"conversation_id": conversation, "kind": "confirm", "message": "Ship it?"},
                )
                middle = time.perf_counter()
                if status != 200:
                    failures.append(f"request_interaction {status}: {asked}")
                    return
                status, answered = await conn.post(
                    "/api/actions/respond_interaction",
                    {"request_id": asked["interaction"]["id"], "answer": True},
                )
                if status != 200:
                    failures.append(f"respond_interaction {status}: {answered}")
                    return
                latencies.extend((middle - started, time.perf_counter() - middle))
        finally:
            await conn.close()

    started = time.perf_counter()
    await asyncio.wait_for(asyncio.gather(*(client() for _ in range(clients))), 600)
    took = time.perf_counter() - started
    if failures:
        raise SystemExit(f"{len(failures)} clients failed; the first: {failures[0]}")
    return len(latencies) / took, latencies


WORKERS = max(2, min(4, os.cpu_count() or 2))
"""``pawflow serve --workers`` for the second server: one per core (2 to 4)."""


def _levels(
    run: Run, server: ServerProcess, levels: tuple[int, ...], label: str
) -> dict[int, tuple[float, float]]:
    """(requests/s, p99 ms) at each level of clients, each printed."""
    budgets = {1: run.n(600, 40), 64: run.n(3000, 256), 256: run.n(4000, 512)}
    asyncio.run(_load(server, 4, run.n(200, 16)))  # warm the server up
    found: dict[int, tuple[float, float]] = {}
    for clients in levels:
        rate, latencies = asyncio.run(_load(server, clients, budgets[clients]))
        p50, p99 = ms(percentile(latencies, 50)), ms(percentile(latencies, 99))
        found[clients] = (rate, p99)
        against = f"p50 {p50:,.1f} ms, p99 {p99:,.0f} ms over {len(latencies)} requests"
        ratio = None
        if clients > 1 and 1 in found:
            against += f"; 1 client {found[1][0]:,.0f} req/s"
            ratio = rate / found[1][0]
        run.figure(
            f"http actions{label}, {clients} clients", rate, "req/s", against=against, ratio=ratio
        )
        if clients == 64:
            run.figure(
                f"http actions{label} p99, 64 clients",
                p99,
                "ms",
                against=f"today {TODAY_RPS:,.0f} req/s",
                ratio=rate / TODAY_RPS,
                goal="p99 < 100 ms; >= 2x today's requests/s",
            )
    return found


def _record(run: Run, measured_on: list[tuple[str, dict[int, tuple[float, float]]]]) -> None:
    """The goals' row: the 64-client figure of each server measured so far."""
    measured = []
    met = False
    for label, found in measured_on:
        rate, p99 = found[64]
        measured.append(f"{label}: {rate:,.0f} req/s ({rate / TODAY_RPS:.2f}x), p99 {p99:,.0f} ms")
        met = met or (rate >= 2 * TODAY_RPS and p99 < 100)
    run.row("http", "; ".join(measured), met)


def section(run: Run) -> None:
    run.heading("HTTP actions on a real pawflow serve (loopback; SQLite unless named)")
    run.say(f"load average {', '.join(f'{v:.1f}' for v in os.getloadavg())}")
    measured_on: list[tuple[str, dict[int, tuple[float, float]]]] = []
    with pawflow_serve(run) as server:
        measured_on.append(("1 process", _levels(run, server, LEVELS, "")))
    _record(run, measured_on)
    label = f"--workers {WORKERS}"
    with pawflow_serve(run, workers=WORKERS) as server:
        measured_on.append((label, _levels(run, server, (1, 64), f" ({label})")))
    _record(run, measured_on)
    if run.postgres:  # no file lock shared by every writer of every worker
        label = f"PostgreSQL, --workers {WORKERS}"
        with postgres_db() as url, pawflow_serve(run, url, workers=WORKERS) as server:
            measured_on.append((label, _levels(run, server, (1, 64), f" ({label})")))
        _record(run, measured_on)
