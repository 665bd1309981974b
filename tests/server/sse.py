"""A small SSE reader for tests: read a few events, then hang up."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import httpx

from pawflow.client import ServerEvent, parse_sse


@contextlib.contextmanager
def stream(
    url: str,
    token: str,
    *,
    last_event_id: int | None = None,
    after: int | None = None,
) -> Iterator[Iterator[ServerEvent]]:
    """Events of one connection; leaving the block disconnects."""
    headers = {"Authorization": f"Bearer {token}"}
    if last_event_id is not None:
        headers["Last-Event-ID"] = str(last_event_id)
    params = {} if after is None else {"after": str(after)}
    timeout = httpx.Timeout(10.0, read=15.0)
    with (
        httpx.Client(base_url=url, timeout=timeout) as client,
        client.stream("GET", "/api/events", headers=headers, params=params) as response,
    ):
        assert response.status_code == 200, response.read()
        assert response.headers["content-type"].startswith("text/event-stream")
        yield parse_sse(response.iter_lines())


def take(events: Iterator[ServerEvent], count: int) -> list[ServerEvent]:
    return [next(events) for _ in range(count)]


def until(events: Iterator[ServerEvent], type_: str) -> list[ServerEvent]:
    """Events up to and including the first of ``type_``."""
    seen = []
    for event in events:
        seen.append(event)
        if event.type == type_:
            return seen
    raise AssertionError(f"the stream ended before a {type_} event")
