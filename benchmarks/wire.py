"""A lean HTTP/1.1 client on asyncio streams, for load on loopback.

A full client library spends more CPU per request than the server does, and on a 2-core
machine the load generator would measure itself. This one keeps a connection alive, sends
a JSON POST, and reads a ``Content-Length`` answer; or opens an event stream and reads it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any


class Connection:
    """One kept-alive HTTP/1.1 connection to ``host:port``."""

    def __init__(self, host: str, port: int, token: str) -> None:
        self.host, self.port, self.token = host, port, token
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def open(self) -> None:
        self.reader, self.writer = await asyncio.open_connection(self.host, self.port)

    async def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            with contextlib.suppress(ConnectionError, OSError):
                await self.writer.wait_closed()
            self.writer = self.reader = None

    def _head(self, method: str, path: str, extra: str = "") -> bytes:
        return (
            f"{method} {path} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\n"
            f"Authorization: Bearer {self.token}\r\n{extra}\r\n"
        ).encode()

    async def post(self, path: str, body: dict[str, Any]) -> tuple[int, Any]:
        """POST a JSON body; the status and the decoded JSON answer."""
        if self.writer is None:
            await self.open()
        assert self.reader is not None and self.writer is not None
        data = json.dumps(body).encode()
        extra = f"Content-Type: application/json\r\nContent-Length: {len(data)}\r\n"
        self.writer.write(self._head("POST", path, extra) + data)
        await self.writer.drain()
        status, headers = await self._read_head()
        length = int(headers.get("content-length", "0"))
        payload = await self.reader.readexactly(length) if length else b""
        if headers.get("connection", "").lower() == "close":
            await self.close()
        return status, json.loads(payload) if payload else None

    async def _read_head(self) -> tuple[int, dict[str, str]]:
        assert self.reader is not None
        raw = await self.reader.readuntil(b"\r\n\r\n")
        lines = raw.decode("latin-1").split("\r\n")
        status = int(lines[0].split(" ", 2)[1])
        headers = {}
        for line in lines[1:]:
            if ":" in line:
                name, _, value = line.partition(":")
                headers[name.strip().lower()] = value.strip()
        if "chunked" in headers.get("transfer-encoding", "") and not headers.get(
            "content-type", ""
        ).startswith("text/event-stream"):
            raise RuntimeError("a chunked answer where a Content-Length one was expected")
        return status, headers

    async def open_stream(self, path: str = "/api/events") -> None:
        """Start an event stream; returns once the server has answered 200."""
        await self.open()
        assert self.writer is not None
        self.writer.write(self._head("GET", path, "Accept: text/event-stream\r\n"))
        await self.writer.drain()
        status, _ = await self._read_head()
        if status != 200:
            raise RuntimeError(f"the event stream answered {status}")

    async def read_until(self, marker: bytes, seen: bytearray) -> None:
        """Read the stream until ``marker`` has arrived (kept in ``seen`` across calls)."""
        assert self.reader is not None
        while marker not in seen:
            chunk = await self.reader.read(65536)
            if not chunk:
                raise ConnectionError("the event stream ended")
            seen.extend(chunk)
        # Keep only the tail, so a later marker is not matched by what came before it.
        del seen[: seen.index(marker) + len(marker)]
