"""A local HTTP server that receives webhooks and generic (json://) Apprise notifications."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Received:
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


class Receiver:
    """What arrived, in order; answers each POST with the next of ``statuses`` (then 204)."""

    def __init__(
        self,
        statuses: list[int] | None = None,
        *,
        hold: threading.Event | None = None,
        trickle: float | None = None,
    ) -> None:
        self.statuses = list(statuses or [])
        self.hold = hold
        """Each POST is received, then answered only once this is set."""
        self.trickle = trickle
        """Each answer is sent a byte every ``trickle`` seconds (a slow body, never done)."""
        self.arrived = threading.Event()
        """Set once a POST has arrived."""
        self.lock = threading.Lock()
        self.got: list[Received] = []
        self.url = ""

    def received(self) -> list[Received]:
        with self.lock:
            return list(self.got)

    def _take(self, item: Received) -> int:
        with self.lock:
            self.got.append(item)
            self.arrived.set()
            return self.statuses.pop(0) if self.statuses else 204


@contextmanager
def receiver(
    statuses: list[int] | None = None,
    *,
    hold: threading.Event | None = None,
    trickle: float | None = None,
) -> Iterator[Receiver]:
    inbox = Receiver(statuses, hold=hold, trickle=trickle)
    done = threading.Event()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("content-length") or 0))
            headers = {k.lower(): v for k, v in self.headers.items()}
            status = inbox._take(Received(self.path, headers, body))
            if inbox.hold is not None:
                inbox.hold.wait(timeout=30)
            if inbox.trickle is not None:  # a byte at a time, for as long as it is read
                self.send_response(200)
                self.send_header("content-length", "1000000")
                self.end_headers()
                while not done.wait(inbox.trickle):
                    try:
                        self.wfile.write(b".")
                        self.wfile.flush()
                    except OSError:
                        return
                return
            self.send_response(status)
            self.send_header("content-length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    inbox.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield inbox
    finally:
        done.set()
        if hold is not None:
            hold.set()
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
