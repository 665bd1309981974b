"""SQLite: the writers of every process on one store file take turns at one lock file.

Within a process the writers queue on a lock before ``BEGIN IMMEDIATE``
(:class:`~pawflow.store.engine.sqlite.SqliteDatabase`). Across processes (``pawflow serve
--workers N`` on SQLite, or a CLI beside a server) they met at SQLite's own write lock,
whose busy handler sleeps — 1, 2, 5, 10 … up to 100 ms a time — so a writer that had
waited a little slept long after the lock was free, and the slowest requests of several
workers took a second. Here the one writer of each process that is next in its own queue
takes an exclusive ``flock`` on ``<store>-writer`` first, and gives it up as its transaction
ends. A process that dies gives it up with its descriptor. Where the file cannot be made or
locked (a read-only folder, a file system without ``flock``), SQLite's lock alone serves,
as before.

While another process holds it, the writer does not look again and again: a thread of the
lock's own waits in a blocking ``flock``, which the kernel ends the moment the lock is
free, and hands the lock to the writer, who waits for it at most the store's busy timeout.
(Looking every 0.1 to 2 ms, the lock lay idle for up to 2 ms at each hand-over between two
workers, a large share of a transaction of a millisecond or two.) A writer that gave up
leaves the thread waiting: once it has the lock and nobody wants it, it lets it go.
"""

from __future__ import annotations

import fcntl
import logging
import os
import threading

from pawflow.errors import StoreUnavailable
from pawflow.store.engine.waits import WouldWait

log = logging.getLogger("pawflow.store")

SUFFIX = "-writer"


class WritersLock:
    """The lock file of one store's writers, opened on first use, once per process.

    One writer of the process asks at a time (the process's own writers queue before it).
    """

    def __init__(self, path: str) -> None:
        self.path = f"{path}{SUFFIX}"
        self._fd: int | None = None
        self._pid = 0
        self._usable = path != ":memory:"
        self.waits = 0
        """How many times a writer of this process found another process's writer first."""
        self._turn = threading.Condition()
        self._wanted = False
        """A writer waits for the taker to hand it the lock."""
        self._granted = False
        self._taking = False
        """The taker is in its blocking ``flock`` (the writer then must not take the lock
        itself: a lock of ``flock`` belongs to the open file, which both use)."""
        self._failed: OSError | None = None
        self._taker: threading.Thread | None = None
        self._closed = False

    def acquire(self, timeout: float, *, wait: bool = True) -> bool:
        """Take the lock (True), or go without it where it cannot be had (False);
        ``StoreUnavailable`` when another process holds it for ``timeout`` seconds. Without
        ``wait``, ``WouldWait`` at once where another process holds it."""
        fd = self._descriptor()
        if fd is None:
            return False
        with self._turn:
            if not self._taking:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    return True
                except BlockingIOError:
                    pass
                except OSError as exc:  # no flock here: SQLite's lock alone, as before
                    self._give_up(exc)
                    return False
            if not wait:
                raise WouldWait
            if self._closed:  # its taker is gone
                raise StoreUnavailable("the store is closed")
            self.waits += 1
            self._wanted, self._granted, self._failed = True, False, None
            self._start_taker(fd)
            self._turn.notify_all()
            self._turn.wait_for(lambda: self._granted or self._failed is not None, timeout)
            failed, granted = self._failed, self._granted
            self._wanted = self._granted = False
        if failed is not None:
            self._give_up(failed)
            return False
        if not granted:
            raise StoreUnavailable("the database stayed busy: another process's writer held it")
        return True

    def _start_taker(self, fd: int) -> None:
        if self._taker is not None and self._taker.is_alive():
            return
        # Its own descriptor of the same open file (the same lock), closed by itself.
        mine = os.dup(fd)
        self._taker = threading.Thread(
            target=self._take, args=(mine,), name="pawflow-writers-lock", daemon=True
        )
        self._taker.start()

    def _take(self, fd: int) -> None:
        """The taker: waits for the lock in the kernel whenever a writer wants it, and hands
        it over, or lets it go if the writer gave up meanwhile."""
        try:
            while True:
                with self._turn:
                    self._turn.wait_for(
                        lambda: (self._wanted and not self._granted) or self._closed
                    )
                    if self._closed:
                        return
                    self._taking = True
                failed = None
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX)  # the interpreter is free meanwhile
                except OSError as exc:
                    failed = exc
                with self._turn:
                    self._taking = False
                    if failed is not None:
                        self._failed = failed
                    elif self._wanted and not self._closed:
                        self._granted = True
                    else:
                        fcntl.flock(fd, fcntl.LOCK_UN)
                    self._turn.notify_all()
                if failed is not None:
                    return
        finally:
            os.close(fd)

    def release(self) -> None:
        if self._fd is not None:
            try:
                fcntl.flock(self._fd, fcntl.LOCK_UN)
            except OSError as exc:
                self._give_up(exc)

    def close(self) -> None:
        with self._turn:
            self._closed = True
            self._turn.notify_all()
        if self._fd is not None:
            os.close(self._fd)  # also releases the lock (unless the taker holds it yet)
            self._fd = None

    def _descriptor(self) -> int | None:
        if not self._usable:
            return None
        if self._fd is not None and self._pid == os.getpid():
            return self._fd
        # A child made by fork shares its parent's descriptor, and with it the lock: its own,
        # and a taker of its own (its parent's thread did not come along).
        try:
            self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as exc:
            self._give_up(exc)
            return None
        if self._pid not in (0, os.getpid()):
            self._turn = threading.Condition()
            self._wanted = self._granted = self._taking = False
            self._taker = None
        self._pid = os.getpid()
        return self._fd

    def _give_up(self, exc: OSError) -> None:
        log.warning("writers of other processes are not queued (%s): %s", self.path, exc)
        self._usable = False
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
