"""Wakes streaming clients when any process announces new events for their user.

The store tells every listener of a commit that logged events: in this process directly,
from other processes by PostgreSQL ``LISTEN/NOTIFY`` or by SQLite's ``data_version``. A
notice names the user whose log grew (``event:<user key>``), and only that user's streams
wake; ``auth:<user key>`` (a token revoked, a session ended) wakes them to check their
credentials at once. "changed" (another SQLite process committed, or a listener
reconnected) says nothing of whom it concerns, so it wakes every stream, which then reads
its own log from where it stopped; a stream that slept through several notices reads once.
SQLite's "touched" (the file changed while this process committed too) is ignored: our own
commits were announced by name, and a stream re-reads its log at least every
``credential_check`` seconds, which bounds the wait should another process have committed
in the same instant.

The streams of one user share their reads (:class:`Feed`): woken together, they would each
read the same events and render the same frames. The first stream to ask for what follows a
position reads it; the others at that position take its result, so one event costs one read
however many streams the user has open. A shared read is only reused until the next notice
for that user (or, without one, for ``SHARED_FOR`` seconds). Their re-checks of a
credential are shared the same way (:meth:`Feed.signed_in`): the streams of one token or
session, woken together once their check is due, wait on one read of it, not one each.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Awaitable, Callable, Hashable
from typing import Any, Generic, TypeVar

from pawflow.store import EVENT_NOTICE, Store, user_key

AUTH_NOTICE = "auth"
SHARED_FOR = 0.25
"""Seconds a finished shared read still serves streams that ask for the same position."""

T = TypeVar("T")


def auth_notice(user: str) -> str:
    return f"{AUTH_NOTICE}:{user_key(user)}"


class Waiter:
    """One stream's wake-up: set by an event for its user; ``recheck`` by an auth notice."""

    def __init__(self, user: str) -> None:
        self.key = user_key(user)
        self.event = asyncio.Event()
        self.recheck = False

    def clear(self) -> None:
        self.event.clear()

    async def wait(self) -> None:
        await self.event.wait()

    async def wait_at_most(self, seconds: float) -> None:
        """Wait to be woken, or ``seconds``, whichever comes first: a timer wakes it as a
        notice would (a stream then looks as after any wake-up), with no cancel scope made
        and torn down for every wait of every stream."""
        timer = asyncio.get_running_loop().call_later(seconds, self.event.set)
        try:
            await self.event.wait()
        finally:
            timer.cancel()


class Feed(Generic[T]):
    """One user's shared reads, by the position they read after (see the module's doc)."""

    def __init__(self) -> None:
        self._reads: dict[int, tuple[asyncio.Task[T], float]] = {}
        self.reads = 0
        """How many reads were made (for tests and benchmarks: fewer than the streams')."""
        self._checks: dict[Hashable, tuple[asyncio.Task[bool], float]] = {}
        self.checks = 0
        """How many credential checks were made (for tests: fewer than the streams')."""

    def forget(self) -> None:
        """New events may have been logged: later asks read again."""
        self._reads.clear()

    def forget_checks(self) -> None:
        """A credential of the user may have been revoked: later asks check again."""
        self._checks.clear()

    async def signed_in(
        self,
        credential: Hashable,
        since: float,
        fresh_for: float,
        check: Callable[[], Awaitable[bool]],
    ) -> tuple[bool, float]:
        """Whether ``credential`` is still current, and when (``time.monotonic()``) the
        check that says so began: a check begun after ``since`` (the stream's previous one)
        and less than ``fresh_for`` seconds ago is shared, else ``check`` runs, shared with
        the streams that ask meanwhile. A revocation notice forgets them all
        (:meth:`forget_checks`), so a stream told of one waits only on a check begun after
        it."""
        now = time.monotonic()
        found = self._checks.get(credential)
        if found is not None and found[1] > max(since, now - fresh_for):
            task, began = found
            return await asyncio.shield(task), began
        for key, (old, began) in list(self._checks.items()):  # the stale go as new ones come
            if old.done() and began <= now - fresh_for:
                del self._checks[key]
        task = asyncio.ensure_future(check())
        self.checks += 1
        self._checks[credential] = (task, now)

        def finished(done: asyncio.Task[bool]) -> None:
            shared = self._checks.get(credential)
            failed = done.cancelled() or done.exception() is not None
            if failed and shared is not None and shared[0] is done:
                del self._checks[credential]  # a failed check is not shared afterwards

        task.add_done_callback(finished)
        return await asyncio.shield(task), now

    async def read(self, after: int, fetch: Callable[[int], Awaitable[T]]) -> T:
        now = time.monotonic()
        found = self._reads.get(after)
        if found is not None:
            task, done_at = found
            if not task.done() or now - done_at < SHARED_FOR:
                return await asyncio.shield(task)
        task = asyncio.ensure_future(fetch(after))
        self.reads += 1
        self._reads[after] = (task, float("inf"))

        def finished(done: asyncio.Task[T]) -> None:
            if self._reads.get(after, (None, 0.0))[0] is done:
                if done.cancelled() or done.exception() is not None:
                    del self._reads[after]  # a failed read is not shared afterwards
                else:
                    self._reads[after] = (done, time.monotonic())

        task.add_done_callback(finished)
        # One stream going away does not cancel the read the others wait for.
        return await asyncio.shield(task)


class EventHub:
    def __init__(self, store: Store) -> None:
        self.store = store
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop_listening: Callable[[], None] | None = None
        self._waiters: dict[str, set[Waiter]] = {}
        self._feeds: dict[str, Feed[Any]] = {}
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
        self._wake(None)  # streams still open see the stop at their next check
        self._loop = None

    @property
    def running(self) -> bool:
        return self._stop_listening is not None and not self._closing

    def close_streams(self) -> None:
        """End every open stream now (the server is going down); callable from any thread."""
        self._closing = True
        self._call_soon(self._wake, None)

    def subscribe(self, user: str) -> Waiter:
        waiter = Waiter(user)
        with self._lock:
            self._waiters.setdefault(waiter.key, set()).add(waiter)
        return waiter

    def unsubscribe(self, waiter: Waiter) -> None:
        with self._lock:
            found = self._waiters.get(waiter.key)
            if found is not None:
                found.discard(waiter)
                if not found:
                    del self._waiters[waiter.key]

    def feed(self, waiter: Waiter) -> Feed[Any]:
        """The shared reads of ``waiter``'s user (call on the loop, while subscribed)."""
        found = self._feeds.get(waiter.key)
        if found is None:
            found = self._feeds[waiter.key] = Feed()
        return found

    def drop_feed(self, waiter: Waiter) -> None:
        """Forget the user's feed once no stream of theirs is open (call on the loop)."""
        with self._lock:
            still_open = waiter.key in self._waiters
        if not still_open:
            self._feeds.pop(waiter.key, None)

    def _on_notice(self, notice: str) -> None:
        # Called on whichever thread committed or listened; hop onto the loop.
        kind, _, key = notice.partition(":")
        if notice == "changed":
            self._call_soon(self._wake, None)
        elif kind == EVENT_NOTICE and key:
            self._call_soon(self._wake, key)
        elif kind == AUTH_NOTICE and key:
            self._call_soon(self._wake, key, True)

    def _call_soon(self, callback: Callable[..., None], *args: object) -> None:
        loop = self._loop
        if loop is None or loop.is_closed():
            return
        with contextlib.suppress(RuntimeError):  # the loop closed in between
            loop.call_soon_threadsafe(callback, *args)

    def _wake(self, key: str | None, recheck: bool = False) -> None:
        if key is None:
            for feed in self._feeds.values():
                feed.forget()
        elif (found := self._feeds.get(key)) is not None:
            found.forget()
            if recheck:
                found.forget_checks()
        with self._lock:
            if key is None:
                waiters = [w for found in self._waiters.values() for w in found]
            else:
                waiters = list(self._waiters.get(key, ()))
        self.wakeups += len(waiters)
        for waiter in waiters:
            if recheck:
                waiter.recheck = True
            waiter.event.set()
