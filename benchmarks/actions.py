"""HTTP actions: requests per second and tail latency at 1, 64 and 256 concurrent clients.

Each client is one kept-alive connection to a real ``pawflow serve`` (a child process, SQLite
store, loopback) asking a question and answering it, over and over:
``request_interaction`` then ``respond_interaction`` — two writes, the API's hot path. A
fixed budget of requests is shared among the clients, so every level ends in bounded time.
"""

from __future__ import annotations

import asyncio
import time

from common import Run, ServerProcess, ms, pawflow_serve, percentile
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


def section(run: Run) -> None:
    run.heading("HTTP actions on a real pawflow serve (SQLite, loopback)")
    budgets = {1: run.n(600, 40), 64: run.n(3000, 256), 256: run.n(4000, 512)}
    with pawflow_serve(run) as server:
        asyncio.run(_load(server, 4, run.n(200, 16)))  # warm the server up
        rates: dict[int, float] = {}
        for clients in LEVELS:
            rate, latencies = asyncio.run(_load(server, clients, budgets[clients]))
            rates[clients] = rate
            p50, p99 = ms(percentile(latencies, 50)), ms(percentile(latencies, 99))
            goal = ""
            if clients == 64:
                goal = "p99 < 100 ms; >= 2x today's requests/s"
            against = f"p50 {p50:,.1f} ms, p99 {p99:,.0f} ms over {len(latencies)} requests"
            ratio = None
            if clients > 1:
                against += f"; 1 client {rates[1]:,.0f} req/s"
                ratio = rate / rates[1]
            run.figure(
                f"http actions, {clients} clients", rate, "req/s", against=against, ratio=ratio
            )
            if goal:
                today = f"today {TODAY_RPS:,.0f} req/s" if TODAY_RPS else "today: not recorded"
                run.figure(
                    "http actions p99, 64 clients",
                    p99,
                    "ms",
                    against=today,
                    ratio=rate / TODAY_RPS if TODAY_RPS else None,
                    goal=goal,
                )
