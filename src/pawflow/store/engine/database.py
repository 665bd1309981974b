"""The two database backends behind one small transaction interface.

SQL is written once with ``?`` placeholders; the PostgreSQL backend rewrites them. The
backends differ only in a few hooks: how a transaction starts, how a row is locked for a
lease, how other processes are told that something changed.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from pawflow import loops
from pawflow.loops import Loop

Row = dict[str, Any]
Params = Sequence[Any]

NOTIFY_CHANNEL = "pawflow"

NUL_REFUSED = "text cannot contain NUL characters"
"""What PostgreSQL's driver refusing text with NUL becomes (``InvalidInput``). SQLite would
keep such text, so nothing relies on the backends: the store's door
(:mod:`pawflow.store.unit.binding`) refuses it first, on both, naming the argument."""

log = logging.getLogger("pawflow.store")


class Sql:
    """The statements of one transaction, with ``?`` placeholders on every backend.

    Only the store's own modules reach them, through :func:`sql`: everything above the
    store holds a transaction (:class:`Tx`) it can pass to the store's functions, commit
    work to, and wait on, but never run SQL in.
    """

    def __init__(self, db: Database, cursor: Any) -> None:
        self._db = db
        self._cursor = cursor
        self._deferred: list[_Savepoint] = []
        """Savepoints entered but not taken yet: taken before the next statement runs."""
        self._queued: list[tuple[str, Params]] = []
        """Statements whose results nobody reads, not sent yet (:meth:`send`)."""
        self._inside = 0
        """Savepoints open: what runs inside one is sent at once, never queued."""
        self.sent = False
        """Whether any statement went to the database."""

    @property
    def skip_locked(self) -> str:
        """Suffix for a lease query: rows another process holds are passed over."""
        return self._db.skip_locked

    def execute(self, sql: str, params: Params = ()) -> int:
        """Run a statement; returns the number of rows it changed."""
        self._run(sql, params)
        return int(self._cursor.rowcount)

    def send(self, sql: str, params: Params = (), *, ahead: bool = False) -> None:
        """Run a statement whose result nobody reads. Where the backend pipelines
        (PostgreSQL), it travels with the next statement that is read, or with the commit,
        in one exchange with the server; what it raises is raised there. Inside a savepoint
        it runs at once, so that the savepoint's block answers for its own statements.

        ``ahead`` queues it before the statements still waiting (after BEGIN), for one whose
        place in the transaction does not matter: what they lock until commit is then held
        for less."""
        if self._db.pipelines and not self._inside:
            if ahead:
                begins = bool(self._queued) and self._queued[0][0] == "BEGIN"
                self._queued.insert(1 if begins else 0, (sql, params))
            else:
                self._queued.append((sql, params))
        else:
            self._run(sql, params)

    def one(self, sql: str, params: Params = ()) -> Row | None:
        self._run(sql, params)
        row = self._cursor.fetchone()
        return None if row is None else self._db.as_dict(row)

    def all(self, sql: str, params: Params = ()) -> list[Row]:
        self._run(sql, params)
        as_dict = self._db.as_dict
        return [as_dict(row) for row in self._cursor.fetchall()]

    def _run(self, sql: str, params: Params) -> None:
        if not self._deferred and not self._queued:
            self.sent = True
            self._db.run(self._cursor, sql, params)
            return
        statements = self._queued
        self._queued = []
        for savepoint in self._deferred:
            statements.append((f"SAVEPOINT {savepoint.name}", ()))
            savepoint.taken = True
        self._deferred.clear()
        statements.append((sql, params))
        self.sent = True
        self._db.run_batch(self._cursor, statements)

    @property
    def idle(self) -> bool:
        """Whether nothing but BEGIN has been asked of the database yet."""
        return not self.sent and all(sql == "BEGIN" for sql, _ in self._queued)

    def flush(self) -> None:
        """Send the statements still queued (:meth:`send`), if any."""
        if self._queued:
            statements, self._queued = self._queued, []
            self.sent = True
            self._db.run_batch(self._cursor, statements)


class _Savepoint:
    __slots__ = ("name", "taken")

    def __init__(self, name: str) -> None:
        self.name = name
        self.taken = False


class Tx:
    """One open transaction, opaque above the store: its statements are the store's
    (:func:`sql`); what others do with it is pass it on, and hook work to its commit."""

    def __init__(self, db: Database, cursor: Any) -> None:
        self._db = db
        self._sql = Sql(db, cursor)
        self._after_commit: list[Callable[[], None]] = []
        self._before_commit: list[Callable[[], None]] = []
        self._notices: set[str] = set()
        self.local: dict[str, Any] = {}
        """What modules writing through this transaction keep until it commits."""
        self.resolved: list[Row] = []
        """Continuations this transaction resolved, for delivery before it commits."""

    @property
    def dialect(self) -> str:
        return self._db.dialect

    def lock_key(self, key: str) -> None:
        """Serialize transactions that touch ``key`` (a signal id) until commit."""
        self._db.lock_key(self, key)

    def notify(self, notice: str) -> None:
        """Tell other processes (after commit) that something changed."""
        self._notices.add(notice)

    def withdraw(self, notice: str) -> None:
        """Take back a notice: what it announced was dealt with in this transaction."""
        self._notices.discard(notice)

    def after_commit(self, callback: Callable[[], None]) -> None:
        self._after_commit.append(callback)

    def before_commit(self, callback: Callable[[], None]) -> None:
        """Run ``callback`` as the transaction's last work, still inside it."""
        self._before_commit.append(callback)

    @contextlib.contextmanager
    def savepoint(self, name: str) -> Iterator[None]:
        """Undo the block's statements if it raises, and what it staged or resolved.

        The savepoint is taken when the block runs its first statement: a block that runs
        none (a delivery whose handler writes nothing) costs the database nothing.
        """
        savepoint = _Savepoint(name)
        self._sql._deferred.append(savepoint)
        self._sql._inside += 1
        resolved = len(self.resolved)
        staged = {key: len(value) for key, value in self.local.items() if isinstance(value, list)}
        try:
            yield
        except BaseException:
            self._sql._inside -= 1
            self._end(savepoint, f"ROLLBACK TO SAVEPOINT {name}")
            del self.resolved[resolved:]
            for key, value in self.local.items():
                if isinstance(value, list):
                    del value[staged.get(key, 0) :]
            raise
        self._sql._inside -= 1
        self._end(savepoint, f"RELEASE SAVEPOINT {name}")

    def _end(self, savepoint: _Savepoint, statement: str) -> None:
        if savepoint.taken:
            self._sql.execute(statement)
        else:
            self._sql._deferred = [s for s in self._sql._deferred if s is not savepoint]

    def _close(self) -> None:
        for callback in self._before_commit:
            callback()


def sql(tx: Tx) -> Sql:
    """The statements of ``tx``: for the store's own modules only."""
    return tx._sql


TOUCHED = "touched"
"""SQLite: the file changed while this process also committed; maybe only by us."""

LISTEN_BACKOFF = 0.1
"""Seconds a listener waits before its first try to reconnect (doubled on each failure)."""


class Availability:
    """Whether the database answers, as this process last found it: what is wrong and since
    when, for the health check and for requests that fail fast meanwhile. Going down and
    coming back are logged once each; coming back wakes every failing loop of the process."""

    def __init__(self) -> None:
        self.problem: str | None = None
        self.since: float | None = None
        self._lock = threading.Lock()

    @property
    def down(self) -> bool:
        return self.problem is not None

    def lost(self, problem: str) -> None:
        with self._lock:
            first = self.problem is None
            self.problem = problem
            if first:
                self.since = time.monotonic()
        if first:
            log.warning("the store is unavailable: %s", problem)

    def back(self) -> None:
        if self.problem is None:  # the usual case, without the lock
            return
        with self._lock:
            since, self.problem, self.since = self.since, None, None
        if since is not None:
            log.warning("the store is available again after %.1f s", time.monotonic() - since)
            loops.wake_failing()

    def describe(self) -> str | None:
        """What is wrong, in words; None while the database answers."""
        problem, since = self.problem, self.since
        if problem is None:
            return None
        return f"{problem} (for {time.monotonic() - (since or time.monotonic()):.0f} s)"


class Database:
    """Connections, transactions and cross-process notices for one database."""

    dialect: str = ""
    skip_locked: str = ""
    pipelines = False
    """Whether statements whose results nobody reads wait to travel with the next one
    (:meth:`Sql.send`)."""
    reads_wait = True
    """Whether a read transaction may wait: for the network, or for a writer. Where it
    never does (SQLite in WAL mode: a reader reads the last commit without a lock), a short
    read may run on an event loop rather than take a turn on a worker thread."""

    def __init__(self) -> None:
        self._local_listeners: list[Callable[[str], None]] = []
        self._watchers: list[Callable[[], None]] = []
        """How to stop each listener's loop still running: closing the database stops them."""
        self.availability = Availability()

    def run(self, cursor: Any, sql: str, params: Params) -> None:
        raise NotImplementedError

    @staticmethod
    def as_dict(row: Any) -> Row:
        """A row as the driver gives it, as a dict of its own."""
        return dict(row)

    def run_batch(self, cursor: Any, statements: list[tuple[str, Params]]) -> None:
        """Run ``statements`` in order; the cursor holds the last one's result."""
        for sql, params in statements:
            self.run(cursor, sql, params)

    def lock_key(self, tx: Tx, key: str) -> None:
        raise NotImplementedError

    def peek(self, sql: str, params: Params = ()) -> Row | None:
        """The first row of one read, as cheaply as the backend allows (SQLite: the
        statement alone, without BEGIN and COMMIT around it)."""
        with self.transaction(write=False) as tx:
            return tx._sql.one(sql, params)

    @contextlib.contextmanager
    def transaction(self, *, write: bool = True) -> Iterator[Tx]:
        raise NotImplementedError
        yield  # pragma: no cover

    def listen(self, callback: Callable[[str], None]) -> Callable[[], None]:
        """Call ``callback`` with each notice from any process; returns a stop function."""
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError

    def _watch(
        self,
        callback: Callable[[str], None],
        session: Callable[[Loop], None],
        name: str,
        *,
        waking: Callable[[], None] | None = None,
    ) -> Callable[[], None]:
        """Run ``session`` on a loop of its own (it returns only when the loop stops, and
        raises when it loses the database: the loop logs that, waits, and runs it again);
        local commits reach ``callback`` directly. ``waking`` ends a wait of the session's
        that the loop cannot (called once the loop is told to stop)."""
        self._local_listeners.append(callback)
        loop: Loop = Loop(name, lambda: session(loop), interval=LISTEN_BACKOFF, join_timeout=5)
        loop.start()

        def stop_listening() -> None:
            with contextlib.suppress(ValueError):
                self._local_listeners.remove(callback)
            with contextlib.suppress(ValueError):
                self._watchers.remove(stop_listening)
            loop.stop(waking=waking)

        self._watchers.append(stop_listening)
        return stop_listening

    def _stop_watchers(self) -> None:
        """Stop every listener's loop: a closed database is listened to no more (a listener
        left running would try to reconnect to it for ever)."""
        for stop in list(self._watchers):
            stop()

    def _finish(self, tx: Tx) -> None:
        for callback in tx._after_commit:
            callback()
        # Listeners in this process hear of the commit at once, without a round trip.
        for notice in tx._notices:
            for listener in list(self._local_listeners):
                listener(notice)
