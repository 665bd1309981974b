"""Server-sent events: one event, many open streams, how long until every stream has it.

A real ``pawflow serve`` (a child process, SQLite store, loopback) with N streams open for
one user, each a raw socket reading ``/api/events``. Once every stream has said ``ready``,
the clock starts, an action asks a question whose message carries a fresh marker, and each
stream's latency is when the marker arrived on it. The clients share one process with an
asyncio loop; reading N sockets costs that process a little too, and it is counted in.
"""

from __future__ import annotations

import asyncio
import secrets
import time

from common import Run, ServerProcess, ms, pawflow_serve, percentile
from wire import Connection

OPEN_AT_ONCE = 50  # streams opening concurrently: the server marks each one live first
TIMEOUT = 120.0


async def _open(server: ServerProcess, count: int) -> list[tuple[Connection, bytearray]]:
    streams: list[tuple[Connection, bytearray]] = []
    gate = asyncio.Semaphore(OPEN_AT_ONCE)

    async def one() -> None:
        async with gate:
            conn = Connection(server.host, server.port, server.token)
            await conn.open_stream()
            seen = bytearray()
            await conn.read_until(b"event: ready", seen)
            streams.append((conn, seen))

    await asyncio.wait_for(asyncio.gather(*(one() for _ in range(count))), TIMEOUT)
    return streams


async def _fan_out(server: ServerProcess, streams_wanted: int, events: int) -> list[float]:
    poster = Connection(server.host, server.port, server.token)
    status, body = await poster.post("/api/actions/create_conversation", {"title": "sse"})
    await poster.close()
    if status != 200:
        raise SystemExit(f"create_conversation answered {status}: {body}")
    conversation = body["conversation"]["id"]
    streams = await _open(server, streams_wanted)
    watchers: list[asyncio.Future[None]] = []
    latencies: list[float] = []
    try:
        for _ in range(events):
            marker = f"sse-{secrets.token_hex(6)}"
            arrived: list[float] = []

            async def watch(
                conn: Connection, seen: bytearray, marker: bytes, arrived: list[float]
            ) -> None:
                await conn.read_until(marker, seen)
                arrived.append(time.perf_counter())

            token = marker.encode()
            watchers = [
                asyncio.ensure_future(watch(conn, seen, token, arrived)) for conn, seen in streams
            ]
            # The server drops a kept-alive connection idle for 5 s: the action gets a fresh
            # one, opened before the clock starts.
            await poster.open()
            await asyncio.sleep(0)  # every watcher starts reading before the event exists
            started = time.perf_counter()
            status, body = await poster.post(
                "/api/actions/request_interaction",
                {"conversation_id": conversation, "kind": "confirm", "message": marker},
            )
            if status != 200:
                raise SystemExit(f"request_interaction answered {status}: {body}")
            await poster.close()
            await asyncio.wait_for(asyncio.gather(*watchers), TIMEOUT)
            latencies.extend(at - started for at in arrived)
    finally:
        for watcher in watchers:
            watcher.cancel()
        await asyncio.gather(*watchers, return_exceptions=True)
        await poster.close()
        for conn, _ in streams:
            await conn.close()
    return latencies


def section(run: Run) -> None:
    run.heading("SSE fan-out on a real pawflow serve (SQLite, loopback)")
    streams, events = run.n(1000, 20), run.n(5, 2)
    with pawflow_serve(run) as server:
        latencies = asyncio.run(_fan_out(server, streams, events))
    p50, p99 = ms(percentile(latencies, 50)), ms(percentile(latencies, 99))
    run.figure(
        f"sse event → every stream, {streams} streams",
        p50,
        "ms p50",
        against=f"p99 {p99:,.0f} ms, last {ms(max(latencies)):,.0f} ms over {events} events",
        goal="p50 <= 50 ms at 1,000 streams",
    )
    run.row("sse", f"p50 {p50:,.0f} ms, p99 {p99:,.0f} ms ({streams} streams)", p50 <= 50)
