"""The SQLite backend: the embedded default.

One connection per thread for reads; one connection for this process's writers, who take
turns at it (``BEGIN IMMEDIATE``); and a watcher that hears other processes' commits by the
WAL index's change counter.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from pawflow.errors import Conflict, StoreError, StoreUnavailable
from pawflow.loops import Loop
from pawflow.store.engine import changes, waits
from pawflow.store.engine.bells import Bell, Bells
from pawflow.store.engine.database import TOUCHED, Database, Params, Row, Tx
from pawflow.store.engine.waits import WouldWait
from pawflow.store.engine.writers import WritersLock

log = logging.getLogger("pawflow.store")


def _sqlite_busy(exc: BaseException) -> bool:
    return isinstance(exc, sqlite3.OperationalError) and (
        "locked" in str(exc) or "busy" in str(exc)
    )


CHECKPOINT_IDLE = 0.05
"""SQLite: seconds without a commit of this process after which its WAL is checkpointed:
the checkpoint runs between bursts, on a thread of its own, never inside a commit."""
CHECKPOINT_EVERY = 500
"""…or after this many commits, for a burst that does not end."""

PAGE_SIZE = 2048
"""SQLite: the page size of a store file made new (an existing file keeps its own). Every
commit appends each page it touched to the WAL, with a checksum over it; a cycle touches
about 35 pages over its tables and indexes, so half-size pages halve what a commit
copies and sums (the ``costs`` benchmark section: about a quarter of a cycle's CPU), while
rows of up to about 2 KB still fit in their page."""

FULL_BELOW = 1024 * 1024
"""Bytes free under which an I/O error of SQLite is taken for a full disk (SQLite says "disk
I/O error" when it cannot grow its shared-memory file, and "database or disk is full" only
when a write of the database or its log fails)."""
_UNAVAILABLE = ("SQLITE_FULL", "SQLITE_IOERR", "SQLITE_CANTOPEN", "SQLITE_READONLY")
"""What SQLite says when the file cannot be written or opened: the store is unavailable
(503) until that is mended, rather than failing (500)."""


LOOP_WAIT = 0.01
"""How long a write refusing to wait (on an event loop: ``waits.py``) still waits for this
process's writer before it, counted from when that writer began: a transaction of another
thread takes a millisecond or two, and while the loop waits the thread runs. Refused at
once, such writes would go to worker threads, whose transactions make the next writes on the
loop wait, and so on."""


class SqliteDatabase(Database):
    """One SQLite file in WAL mode; every write transaction starts ``BEGIN IMMEDIATE``.

    Each thread keeps its own connection. The writers of one process queue on one lock
    before ``BEGIN IMMEDIATE``, so they wait their turn woken by the one before them, not by
    SQLite's busy handler, which sleeps (up to 100 ms a time) and lets a late comer jump the
    queue; writers of other processes still meet at the file's lock.

    Other processes learn of changes by watching the WAL index's change counter, which moves
    with every commit: the watcher sleeps until another process's commit rings its bell
    (``bells.py``), and looks every ``POLL_SLOW`` for writers that ring none; without a bell,
    by the clock (``changes.py``).
    """

    dialect = "sqlite"
    reads_wait = False

    def __init__(self, path: str, *, busy_timeout: float = 30.0) -> None:
        super().__init__()
        self.path = path
        if path != ":memory:":
            try:
                Path(path).parent.mkdir(parents=True, exist_ok=True)
                # Owner-only from the first byte; SQLite gives its -wal and -shm files the
                # database file's mode.
                os.close(os.open(path, os.O_RDWR | os.O_CREAT, 0o600))
            except OSError as exc:
                raise self.unavailable(exc, f"cannot open {path}", opening=True) from exc
        self.busy_timeout = busy_timeout
        self._local = threading.local()
        self._connections: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        self._closed = False
        self._local_commits = 0
        self._commit_lock = threading.Lock()
        self._shm: int | None = None
        """A descriptor of the WAL index, while a watcher reads its change counter."""
        self._counting: list[set[int]] = []
        """Per watcher reading the WAL index's change counter: the values this process's
        commits gave it that the watcher has not seen yet."""
        self._writer = threading.Lock()
        self._writer_since = 0.0
        """When this process's writer took ``_writer`` (``time.monotonic()``)."""
        self._writer_conn: sqlite3.Connection | None = None
        self._writers = WritersLock(path)
        self._bells = Bells(path)
        self._unchecked = 0
        self._checkpoints = threading.Condition()
        self._checkpointer: threading.Thread | None = None
        self._dormant = False
        """Whether the checkpointer waits for a commit to wake it (between bursts)."""
        self.checkpointed = 0
        """How many checkpoints this process ran (its own, off the commit path)."""

    def connect(self) -> sqlite3.Connection:
        try:
            conn = sqlite3.connect(
                self.path, isolation_level=None, timeout=self.busy_timeout, check_same_thread=False
            )
        except sqlite3.Error as exc:
            raise self.unavailable(exc, f"cannot open {self.path}", opening=True) from exc
        try:
            conn.row_factory = sqlite3.Row
            conn.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout * 1000)}")
            # A new file only (before WAL mode creates it): see PAGE_SIZE.
            conn.execute(f"PRAGMA page_size = {PAGE_SIZE}")
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")
            conn.execute("PRAGMA foreign_keys = ON")
            # No checkpoint inside a commit: the checkpointer runs them between bursts.
            conn.execute("PRAGMA wal_autocheckpoint = 0")
        except sqlite3.Error as exc:
            conn.close()
            raise self.unavailable(exc, f"cannot open {self.path}", opening=True) from exc
        return conn

    def unavailable(
        self, exc: BaseException, doing: str, *, opening: bool = False
    ) -> StoreUnavailable:
        """The error to raise for ``exc`` (what ``doing`` ran into): "disk full" with the
        path when the disk is full, which the health check reports until a write succeeds
        (unless it came of ``opening`` a connection: the caller reports that)."""
        full = getattr(exc, "sqlite_errorname", "") == "SQLITE_FULL" or (
            isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT)
        )
        free = self._free_bytes()
        if full or (free is not None and free < FULL_BELOW):
            left = "" if free is None else f" ({free // 1024} KiB free)"
            problem = f"disk full: {self.path}{left}"
            if not opening:
                self.availability.lost(problem)
            return StoreUnavailable(problem)
        return StoreUnavailable(f"{doing}: {exc}")

    def _free_bytes(self) -> int | None:
        if self.path == ":memory:":
            return None
        try:
            found = os.statvfs(Path(self.path).parent)
        except OSError:
            return None
        return found.f_bavail * found.f_frsize

    def _writing(self) -> sqlite3.Connection:
        """The connection every write transaction of this process uses, one at a time (under
        ``_writer``): its page cache and prepared statements stay warm from one write to the
        next, where a connection per thread would find its cache stale after every other
        thread's commit and read the pages again. In memory, every connection is a database
        of its own: the thread's own connection, as for reads."""
        conn = self._writer_conn
        if conn is None:
            if self.path == ":memory:":
                return self._connection()
            if self._closed:
                raise StoreUnavailable("the store is closed")
            conn = self._writer_conn = self.connect()
            with self._lock:
                self._connections.append(conn)
        return conn

    def _connection(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            if self._closed:
                raise StoreUnavailable("the store is closed")
            conn = self.connect()
            self._local.conn = conn
            with self._lock:
                self._connections.append(conn)
        return conn

    def run(self, cursor: Any, sql: str, params: Params) -> None:
        try:
            cursor.execute(sql, params)
        except sqlite3.IntegrityError as exc:
            raise Conflict(f"constraint violated: {exc}") from exc
        except sqlite3.Error as exc:
            if _sqlite_busy(exc):
                raise
            if getattr(exc, "sqlite_errorname", "").startswith(_UNAVAILABLE):
                raise self.unavailable(exc, "database unavailable") from exc
            raise StoreError(f"database error: {exc}") from exc

    @staticmethod
    def as_dict(row: Any) -> Row:
        # By position: dict(row) looks each column up by name, a scan of them all.
        return dict(zip(row.keys(), row, strict=True))

    def lock_key(self, tx: Tx, key: str) -> None:
        """Nothing to do: ``BEGIN IMMEDIATE`` already serializes every writer."""

    def peek(self, sql: str, params: Params = ()) -> Row | None:
        cursor = self._connection().cursor()
        try:
            self.run(cursor, sql, params)
            row = cursor.fetchone()
        except sqlite3.Error as exc:  # busy, which only a write transaction waits out
            raise StoreUnavailable(f"cannot read: {exc}") from exc
        return None if row is None else self.as_dict(row)

    @contextlib.contextmanager
    def transaction(self, *, write: bool = True) -> Iterator[Tx]:
        if not write:
            with self._transaction(write=False) as tx:
                yield tx
            return
        wait = not waits.refusing()  # on an event loop: see waits.py
        if wait:
            if not self._writer.acquire(timeout=self.busy_timeout):
                raise StoreUnavailable("the database stayed busy: this process's writers queue")
        elif not self._writer.acquire(blocking=False):
            # Waited for only while its holder is young: a long one (a sweep) makes every
            # write on the loop go to a thread at once, not each after a stall of its own.
            left = LOOP_WAIT - (time.monotonic() - self._writer_since)
            if left <= 0 or not self._writer.acquire(timeout=left):
                raise WouldWait
        self._writer_since = time.monotonic()
        try:  # then the writers of other processes (see writers.py)
            across = self._writers.acquire(self.busy_timeout, wait=wait)
        except BaseException:
            self._writer.release()
            raise
        held = True

        def release() -> None:
            nonlocal held
            if held:
                held = False
                if across:
                    self._writers.release()
                self._writer.release()

        try:
            with self._transaction(write=True, committed=release) as tx:
                yield tx
        finally:
            release()
        if not wait:
            waits.committed()

    @contextlib.contextmanager
    def _transaction(
        self, *, write: bool, committed: Callable[[], None] | None = None
    ) -> Iterator[Tx]:
        conn = self._writing() if write else self._connection()
        deadline = time.monotonic() + self.busy_timeout
        while True:
            try:
                conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
                break
            except sqlite3.Error as exc:
                if not _sqlite_busy(exc):
                    raise self.unavailable(exc, "cannot begin a transaction") from exc
                # busy_timeout covers nearly every wait; this covers the rest (WAL recovery).
                if time.monotonic() > deadline:
                    raise StoreUnavailable(f"the database stayed busy: {exc}") from exc
                time.sleep(0.005)
        total = conn.total_changes
        changed = False
        cursor = conn.cursor()
        tx = Tx(self, cursor)
        try:
            yield tx
            tx._close()
        except BaseException as exc:
            # SQLite may have rolled back already (a full disk does that).
            with contextlib.suppress(sqlite3.Error):
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
            if _sqlite_busy(exc):
                raise StoreUnavailable(f"the database stayed busy: {exc}") from exc
            raise
        try:
            if write:
                # Counted under the lock the watcher reads data_version under, so it sees a
                # commit of ours and its count together or neither.
                with self._commit_lock:
                    changed = conn.total_changes != total
                    if self._counting and self._shm is not None:
                        self._commit_counted(conn, self._shm, changed)
                    else:
                        conn.execute("COMMIT")
                    self._local_commits += 1
            else:
                conn.execute("COMMIT")
        except sqlite3.Error as exc:
            with contextlib.suppress(sqlite3.Error):
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
            raise self.unavailable(exc, "commit failed") from exc
        # The transaction is over: a statement sent through it now fails, rather than run
        # outside it (on the writers' connection, inside the next writer's transaction).
        cursor.close()
        if write:
            if self.availability.problem is not None:
                self.availability.back()  # a write went through: the disk has room again
            self._committed()
        if committed is not None:
            committed()  # the next writer may start while this one's callbacks run
        if changed:
            # The watchers of other processes sleep until a commit rings them: rung once the
            # write lock is free, so what they do about it does not wait for this writer.
            self._bells.ring()
        self._finish(tx)

    def _commit_counted(self, conn: sqlite3.Connection, shm: int, changed: bool) -> None:
        """COMMIT, noting for the watchers the change counter's value this commit gives it:
        read before, while this transaction holds the write lock (nobody else can commit),
        plus one if the transaction ``changed`` rows (a commit that wrote nothing leaves the
        counter as it was). The value is noted before the COMMIT, so a watcher that sees the
        counter move finds it noted without taking a lock; a COMMIT that fails takes it back
        while this transaction still holds the write lock."""
        noted = None
        if changed:
            before = changes.read_counter(shm)
            if before is not None:
                noted = (before + 1) & 0xFFFFFFFF
                for own in self._counting:
                    own.add(noted)
        try:
            conn.execute("COMMIT")
        except BaseException:
            if noted is not None:
                for own in self._counting:
                    own.discard(noted)
            raise

    def listen(self, callback: Callable[[str], None]) -> Callable[[], None]:
        # In this process, commits call listeners directly; other processes' commits are
        # seen by looking at the WAL index's change counter, which tells this process's own
        # commits (noted as they commit) from others'. The watcher sleeps on a bell that
        # other processes' commits ring (bells.py), and looks every POLL_SLOW for writers
        # that ring none; without a bell it looks by the clock (changes.py). Where the counter
        # cannot be read, it looks at data_version on a connection of its own, which moves
        # on this process's commits too: when this process also committed since the last
        # look, the change may be ours alone, and is announced as "touched" (a listener that
        # already heard of its own commits may ignore it) rather than "changed".
        bell = self._bells.join()

        def watch(loop: Loop) -> None:
            conn = self.connect()
            shm = self._open_shm(conn)
            if shm is not None:
                try:
                    self._watch_counter(loop, shm, callback, bell)
                finally:
                    os.close(shm)
                    conn.close()
                return
            try:
                seen = changes.rung(bell)
                with self._commit_lock:
                    last = conn.execute("PRAGMA data_version").fetchone()[0]
                    local_seen = self._local_commits
                callback("changed")  # anything committed before the baseline was read
                loop.failures.succeeded()
                pace = changes.Pace()
                while not changes.rest(loop, bell, seen, pace.interval):
                    seen = changes.rung(bell)
                    with self._commit_lock:
                        version = conn.execute("PRAGMA data_version").fetchone()[0]
                        local = self._local_commits
                    moved = version != last
                    if moved:
                        last = version
                        callback("changed" if local == local_seen else TOUCHED)
                    pace.looked(moved=moved)
                    local_seen = local
            finally:
                conn.close()

        stop = self._watch(
            callback, watch, "sqlite-watch", waking=None if bell is None else bell.ring
        )
        if bell is None:
            return stop

        def stop_and_leave() -> None:
            stop()
            bell.leave()

        return stop_and_leave

    def _open_shm(self, conn: sqlite3.Connection) -> int | None:
        """A descriptor of the WAL index whose change counter the watcher reads (``conn``,
        open meanwhile, keeps the file), or None where there is none to read."""
        if self.path == ":memory:":
            return None
        try:
            conn.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()  # maps the index
            shm = os.open(f"{self.path}-shm", os.O_RDONLY)
        except (OSError, sqlite3.Error):
            return None
        if changes.read_counter(shm) is None:
            os.close(shm)
            return None
        return shm

    def _watch_counter(
        self, loop: Loop, shm: int, callback: Callable[[str], None], bell: Bell | None
    ) -> None:
        own: set[int] = set()
        seen = changes.rung(bell)  # before the baseline: no ring is missed
        with self._commit_lock:
            last = changes.read_counter(shm)
            self._counting.append(own)
            if self._shm is None:
                self._shm = os.dup(shm)  # what committers read the counter by
        try:
            callback("changed")  # anything committed before the baseline was read
            loop.failures.succeeded()
            pace = changes.Pace()
            while not changes.rest(loop, bell, seen, pace.interval):
                seen = changes.rung(bell)
                # No lock: a commit of ours notes its value before the counter moves.
                now = changes.read_counter(shm)
                moved = now != last
                foreign = moved and not changes.only_own(own, last, now)
                last = now
                if foreign:  # another process committed: what it did may concern us
                    callback("changed")
                pace.looked(moved=moved, foreign=foreign)
        finally:
            with self._commit_lock:
                # By identity: two watchers' sets may be equal (list.remove compares).
                self._counting = [found for found in self._counting if found is not own]
                if not self._counting and self._shm is not None:
                    os.close(self._shm)
                    self._shm = None

    # -- checkpoints ------------------------------------------------------------------------

    def _committed(self) -> None:
        """Count a commit for the checkpointer (started with the first one). Only a dormant
        checkpointer is woken: in a burst it looks at the count on its own, so a commit
        wakes no other thread."""
        if self.path == ":memory:":
            return
        self._unchecked += 1  # before reading _dormant: see _checkpoint_between_bursts
        if self._dormant or self._checkpointer is None:
            with self._checkpoints:
                if self._checkpointer is None and not self._closed:
                    self._checkpointer = threading.Thread(
                        target=self._checkpoint_between_bursts,
                        name="pawflow-sqlite-checkpoint",
                        daemon=True,
                    )
                    self._checkpointer.start()
                self._checkpoints.notify()

    def _checkpoint_between_bursts(self) -> None:
        """Checkpoint the WAL once this process's commits pause for ``CHECKPOINT_IDLE``
        seconds (or every ``CHECKPOINT_EVERY`` commits), on a connection of its own:
        ``PASSIVE``, so no writer or reader ever waits for it."""
        conn: sqlite3.Connection | None = None
        try:
            while True:
                with self._checkpoints:
                    # Dormant before the count is read: a commit counts before it looks
                    # whether to wake us, so one of the two sees the other.
                    self._dormant = True
                    while not self._closed and self._unchecked == 0:
                        self._checkpoints.wait()
                    self._dormant = False
                    while not self._closed:  # a burst: wait for it to end
                        seen = self._unchecked
                        self._checkpoints.wait(CHECKPOINT_IDLE)  # only close() wakes it
                        if self._unchecked in (seen, 0) or self._unchecked >= CHECKPOINT_EVERY:
                            break
                    if self._closed:
                        return
                    self._unchecked = 0
                if conn is None:
                    conn = self.connect()
                try:
                    conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
                    self.checkpointed += 1
                except sqlite3.Error as exc:  # the next pause tries again
                    log.debug("checkpoint skipped: %s", exc)
        except Exception:  # a commit starts the next checkpointer
            log.warning("the SQLite checkpointer stopped", exc_info=True)
            with self._checkpoints:
                self._checkpointer = None
        finally:
            if conn is not None:
                conn.close()

    def close(self) -> None:
        self._stop_watchers()
        self._bells.close()
        with self._checkpoints:
            self._closed = True
            self._checkpoints.notify_all()
            checkpointer = self._checkpointer
        if checkpointer is not None and checkpointer is not threading.current_thread():
            checkpointer.join(5)
        with self._lock:
            for conn in self._connections:
                with contextlib.suppress(sqlite3.Error):
                    conn.close()
            self._connections.clear()
        self._writers.close()
