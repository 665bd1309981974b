"""The live connection: the user's durable event log over server-sent events, on a thread.

Each event id is its position in the log. When the stream drops (the network, a server
restart), the next stream sends ``Last-Event-ID`` with the last id seen, so the server
replays exactly what was missed. Replay is not trusted alone: after every reconnect the
app re-reads pending requests from the server (``on_reconnected``), and a ``reset`` event
(the log cannot be replayed from our position) makes it reload everything.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum

from pawflow.client import ApiError, Client, ServerEvent, ServerUnreachable
from pawflow.errors import PawFlowError


class Connection(Enum):
    CONNECTING = "connecting"
    LIVE = "live"
    RECONNECTING = "reconnecting"
    REFUSED = "refused"  # the server answered but refused the stream (a revoked token)


CONNECTION_TEXT = {
    Connection.CONNECTING: ("○ connecting…", "yellow"),
    Connection.LIVE: ("● live", "green"),
    Connection.RECONNECTING: ("◌ reconnecting…", "red"),
    Connection.REFUSED: ("✕ refused", "red"),
}
"""Each state's words and style, as the header shows them."""


@dataclass
class LiveHandlers:
    """Called on the stream's thread; the app hops to its own loop in each."""

    on_state: Callable[[Connection, str], object]
    on_event: Callable[[ServerEvent], object]
    on_reconnected: Callable[[], object]
    on_reset: Callable[[], object]


class LiveStream:
    """Keep one event stream open, resuming from the last id, until ``stop()``.

    ``read_timeout`` bounds a silent read (the server sends keep-alive comments well within
    it), so a half-open connection is noticed and ``stop()`` is honoured.
    """

    def __init__(
        self,
        client: Client,
        handlers: LiveHandlers,
        *,
        read_timeout: float = 45.0,
        first_backoff: float = 0.25,
        max_backoff: float = 5.0,
    ) -> None:
        self.client = client
        self.handlers = handlers
        self.read_timeout = read_timeout
        self.first_backoff = first_backoff
        self.max_backoff = max_backoff
        self.last_id: int | None = None
        self.drops = 0
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        # A daemon: a read blocked on a silent socket must not keep the program alive.
        self._thread = threading.Thread(target=self._run, name="pawflow-live", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stopping.set()

    @property
    def stopping(self) -> bool:
        return self._stopping.is_set()

    def _run(self) -> None:
        backoff = self.first_backoff
        dropped = False
        self.handlers.on_state(Connection.CONNECTING, "")

        def opened() -> None:
            nonlocal dropped, backoff
            backoff = self.first_backoff
            self.handlers.on_state(Connection.LIVE, "")
            if dropped:
                dropped = False
                self.handlers.on_reconnected()

        while not self._stopping.is_set():
            try:
                for event in self.client.events(
                    last_event_id=self.last_id, timeout=self.read_timeout, on_open=opened
                ):
                    if self._stopping.is_set():
                        return
                    if event.id is not None:
                        self.last_id = event.id
                    if event.type == "reset":
                        self.handlers.on_reset()
                    elif event.type != "ready":
                        self.handlers.on_event(event)
                reason = "the server ended the stream"
            except ApiError as exc:
                if exc.status in (401, 403):
                    self.handlers.on_state(Connection.REFUSED, exc.message)
                    return
                reason = str(exc)
            except (ServerUnreachable, PawFlowError) as exc:
                reason = str(exc)
            if self._stopping.is_set():
                return
            dropped = True
            self.drops += 1
            self.handlers.on_state(Connection.RECONNECTING, reason)
            self._stopping.wait(backoff)
            backoff = min(backoff * 2, self.max_backoff)
