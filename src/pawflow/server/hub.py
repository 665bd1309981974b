"""Wakes streaming clients when any process announces new events.

The store tells every listener of a commit that logged events: in this process directly,
from other processes by PostgreSQL ``LISTEN/NOTIFY`` or by SQLite's ``data_version``. A
notice carries no user, so each woken client reads its own log from where it stopped;
a client that slept through several notices reads once.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable

from pawflow.store import Store
from pawflow.store.events import EVENT_NOTICE

# "changed" is what the listeners say when they cannot tell what changed (another SQLite
# process committed, or a PostgreSQL listener reconnected and may have missed notices).
WAKING_NOTICES = frozenset({EVENT_NOTICE, "changed"})


class EventHub:
    def __init__(self, store: Store) -> None:
        self.store = store
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop_listening: Callable[[], None] | None = None
        self._waiters: set[asyncio.Event] = set()
        self._lock = threading.Lock()
        self.wakeups = 0
        self._closing = False

    def start(self) -> None:
        """Begin listening; call from the event loop that serves the clients."""
        if self._stop_listening is not None:
            return
        self._loop = asyncio.get_running_loop()
        self._closing = False
        self._stop_listening = self.store.db.listen(self._on_notice)

    def stop(self) -> None:
        stop, self._stop_listening = self._stop_listening, None
        if stop is not None:
            stop()
        self._wake_all()  # streams still open see the stop at their next check
        self._loop = None

    @property
    def running(self) -> bool:
        return self._stop_listening is not None and not self._closing

    def close_streams(self) -> None:
        """End every open stream now (the server is going down); callable from any thread."""
        self._closing = True
        loop = self._loop
        if loop is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(self._wake_all)

    def subscribe(self) -> asyncio.Event:
        waiter = asyncio.Event()
        with self._lock:
            self._waiters.add(waiter)
        return waiter

    def unsubscribe(self, waiter: asyncio.Event) -> None:
        with self._lock:
            self._waiters.discard(waiter)

    def _on_notice(self, notice: str) -> None:
        # Called on whichever thread committed or listened; hop onto the loop.
        if notice not in WAKING_NOTICES:
            return
        loop = self._loop
        if loop is None or loop.is_closed():
            return
        with contextlib.suppress(RuntimeError):  # the loop closed in between
            loop.call_soon_threadsafe(self._wake_all)

    def _wake_all(self) -> None:
        self.wakeups += 1
        with self._lock:
            waiters = list(self._waiters)
        for waiter in waiters:
            waiter.set()
