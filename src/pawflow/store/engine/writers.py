"""SQLite: the writers of every process on one store file take turns at one lock file.

Within a process the writers queue on a lock before ``BEGIN IMMEDIATE``
(:class:`~pawflow.store.engine.sqlite.SqliteDatabase`). Across processes (``pawflow serve
--workers N`` on SQLite, or a CLI beside a server) they met at SQLite's own write lock,
whose busy handler sleeps — 1, 2, 5, 10 … up to 100 ms a time — so a writer that had
waited a little slept long after the lock was free, and the slowest requests of several
workers took a second. Here the one writer of each process that is next in its own queue
takes an exclusive ``flock`` on ``<store>-writer`` first, looking again within at most
:data:`LOOK_AT_MOST` while another process holds it, and gives it up as its transaction
ends. A process that dies gives it up with its descriptor. Where the file cannot be made or
locked (a read-only folder, a file system without ``flock``), SQLite's lock alone serves,
as before.
"""

from __future__ import annotations

import fcntl
import logging
import os
import time

from pawflow.errors import StoreUnavailable

log = logging.getLogger("pawflow.store")

SUFFIX = "-writer"
LOOK_FIRST = 0.0001
LOOK_AT_MOST = 0.002
"""Seconds between looks at the lock while another process holds it: from 0.1 ms, doubling
up to 2 ms (a look is one system call), until the store's busy timeout."""


class WritersLock:
    """The lock file of one store's writers, opened on first use, once per process."""

    def __init__(self, path: str) -> None:
        self.path = f"{path}{SUFFIX}"
        self._fd: int | None = None
        self._pid = 0
        self._usable = path != ":memory:"
        self.waits = 0
        """How many times a writer of this process found another process's writer first."""

    def acquire(self, timeout: float) -> bool:
        """Take the lock (True), or go without it where it cannot be had (False);
        ``StoreUnavailable`` when another process holds it for ``timeout`` seconds."""
        fd = self._descriptor()
        if fd is None:
            return False
        pause = LOOK_FIRST
        deadline = None
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return True
            except BlockingIOError:
                if deadline is None:
                    self.waits += 1
                    deadline = time.monotonic() + timeout
                elif time.monotonic() > deadline:
                    raise StoreUnavailable(
                        "the database stayed busy: another process's writer held it"
                    ) from None
                time.sleep(pause)
                pause = min(pause * 2, LOOK_AT_MOST)
            except OSError as exc:  # no flock here: SQLite's lock alone, as before
                self._give_up(exc)
                return False

    def release(self) -> None:
        if self._fd is not None:
            try:
                fcntl.flock(self._fd, fcntl.LOCK_UN)
            except OSError as exc:
                self._give_up(exc)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # also releases the lock
            self._fd = None

    def _descriptor(self) -> int | None:
        if not self._usable:
            return None
        if self._fd is not None and self._pid == os.getpid():
            return self._fd
        # A child made by fork shares its parent's descriptor, and with it the lock: its own.
        try:
            self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as exc:
            self._give_up(exc)
            return None
        self._pid = os.getpid()
        return self._fd

    def _give_up(self, exc: OSError) -> None:
        log.warning("writers of other processes are not queued (%s): %s", self.path, exc)
        self._usable = False
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
