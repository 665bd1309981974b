"""SQLite: a commit rings the watchers of other processes on the same store file.

A process learns of another's commits by its watcher, which reads the WAL index's change
counter (``sqlite.py``). Looking for them by the clock means a choice between a watcher
that wakes often (and takes the interpreter from the process's own work as often) and an
answer from another process that waits for the next look. Here each watcher has a slot in
``<store>-bells``, a small shared file every process maps: a 32-bit word it sleeps on
(``futex``, keyed by the file, so it works across processes) and the id of the process that
holds the slot. A commit that changed rows adds one to the word of every other watcher's
slot and wakes it: the watcher sleeps until a commit rings it, and still looks every
``POLL_SLOW`` for writers that ring nothing (the ``sqlite3`` shell, a file system without
shared maps). Its own database's commits ring nothing of its own, so a process that writes
alone wakes no thread.

Where the file cannot be made or mapped, or the system has no ``futex`` (other than Linux),
there are no bells: the watcher looks by the clock as before.
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import logging
import mmap
import os
import platform
import sys
import threading
from collections.abc import Callable, Iterator

log = logging.getLogger("pawflow.store")

SUFFIX = "-bells"
SLOTS = 255
"""Watchers one store file can ring (a process more than that looks by the clock)."""
_SLOT = 16
"""Bytes per slot: the holder's process id, then the word its watcher sleeps on. Slot 0's
place holds the generation, which moves whenever a slot is taken or given back."""
_SIZE = _SLOT * (SLOTS + 1)

_FUTEX_WAIT = 0
_FUTEX_WAKE = 1
_SYS_FUTEX = {"x86_64": 202, "aarch64": 98}.get(platform.machine())
_EVERYONE = 0x7FFFFFFF


class _Timespec(ctypes.Structure):
    _fields_ = [("seconds", ctypes.c_long), ("nanoseconds", ctypes.c_long)]


def _load_syscall() -> Callable[..., int] | None:
    if not sys.platform.startswith("linux") or _SYS_FUTEX is None:
        return None
    try:
        syscall = ctypes.CDLL(None, use_errno=True).syscall
    except (OSError, AttributeError):
        return None
    syscall.restype = ctypes.c_long
    found: Callable[..., int] = syscall
    return found


_syscall = _load_syscall()


def _ring(word: ctypes.c_uint32, address: int) -> None:
    """Move ``word`` (at ``address``) on and wake whoever sleeps on it."""
    word.value = (word.value + 1) & 0xFFFFFFFF
    if _syscall is not None:
        _syscall(_SYS_FUTEX, ctypes.c_void_p(address), _FUTEX_WAKE, _EVERYONE, None, None, 0)


def _sleep(address: int, seen: int, timeout: float) -> None:
    """Sleep while the word at ``address`` holds ``seen``, for at most ``timeout`` seconds
    (the GIL is let go meanwhile)."""
    if _syscall is None:
        return
    whole = int(timeout)
    limit = _Timespec(whole, int((timeout - whole) * 1e9))
    _syscall(
        _SYS_FUTEX,
        ctypes.c_void_p(address),
        _FUTEX_WAIT,
        ctypes.c_uint32(seen),
        ctypes.byref(limit),
        None,
        0,
    )


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's: alive
        return True
    return True


class Bell:
    """One watcher's slot: what it sleeps on, and what rings it."""

    def __init__(self, bells: Bells, slot: int, word: ctypes.c_uint32) -> None:
        self.slot = slot
        self._bells = bells
        self._word: ctypes.c_uint32 | None = word
        self._address = ctypes.addressof(word)

    def rung(self) -> int:
        """The word as it is: read before a look, slept on after it (a ring in between is
        not missed: the word then differs, and the sleep ends at once)."""
        return 0 if self._word is None else int(self._word.value)

    def sleep(self, seen: int, timeout: float) -> None:
        """Until the word moves past ``seen`` (a commit elsewhere rang) or ``timeout``."""
        if self._word is not None:
            _sleep(self._address, seen, timeout)

    def ring(self) -> None:
        """Wake its watcher now (to stop it)."""
        if self._word is not None:
            _ring(self._word, self._address)

    def leave(self) -> None:
        """Give the slot back: nobody rings it any more."""
        if self._word is not None:
            self._bells._give_back(self.slot)
            self._word = None


class Bells:
    """The bells file of one store, as one database object of this process uses it:
    mapped on first use; :meth:`ring` after each commit that changed rows."""

    def __init__(self, path: str) -> None:
        self.path = f"{path}{SUFFIX}"
        self._usable = path != ":memory:" and _syscall is not None
        self._fd: int | None = None
        self._map: mmap.mmap | None = None
        self._pid = 0
        self._lock = threading.Lock()
        self._generation: ctypes.c_uint32 | None = None
        self._seen = -1
        self._others: list[tuple[ctypes.c_uint32, int]] = []
        """The words of the slots to ring, and their addresses (as of ``_seen``)."""
        self._mine: set[int] = set()
        """The slots of this database object's own watchers: its commits reach them
        directly, never through a bell."""

    def ring(self) -> None:
        """Ring every other watcher of this store file (after a commit that changed rows)."""
        generation = self._generation
        if generation is None or self._pid != os.getpid():
            if not self._open():
                return
            generation = self._generation
            assert generation is not None
        if generation.value != self._seen:
            self._rescan()
        for word, address in self._others:
            _ring(word, address)

    def join(self) -> Bell | None:
        """A slot for a watcher of this database object, or None where there are no bells
        (or every slot is taken): the watcher then looks by the clock alone."""
        if not self._open():
            return None
        assert self._map is not None and self._fd is not None
        with self._lock, self._exclusive():
            for slot in range(1, SLOTS + 1):
                holder = self._holder(slot)
                if holder == 0 or not _alive(holder):
                    self._put(slot, os.getpid())
                    self._mine.add(slot)
                    word = ctypes.c_uint32.from_buffer(self._map, slot * _SLOT + 4)
                    return Bell(self, slot, word)
        log.info("every slot of %s is taken: this watcher looks by the clock", self.path)
        return None

    def close(self) -> None:
        """Give back this database object's slots (its watchers have stopped) and unmap."""
        for slot in list(self._mine):
            self._give_back(slot)
        with self._lock:
            self._others = []
            self._generation = None
            if self._map is not None:
                with contextlib.suppress(BufferError):  # a bell still held: left to the GC
                    self._map.close()
                self._map = None
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None

    # -- inside -----------------------------------------------------------------------------

    def _open(self) -> bool:
        if not self._usable:
            return False
        with self._lock:
            if self._pid == os.getpid() and self._map is not None:
                return True
            if self._pid not in (0, os.getpid()):
                # A child made by fork: its parent's watchers are not its own, and its
                # commits ring them like anyone else's. The map it shares stays good.
                self._mine = set()
                self._seen = -1
            if self._map is None:
                try:
                    fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
                    try:
                        if os.fstat(fd).st_size < _SIZE:
                            os.ftruncate(fd, _SIZE)
                        self._map = mmap.mmap(fd, _SIZE)
                    except BaseException:
                        os.close(fd)
                        raise
                except (OSError, ValueError) as exc:
                    log.info("no bells for %s (watchers look by the clock): %s", self.path, exc)
                    self._usable = False
                    return False
                self._fd = fd
                self._generation = ctypes.c_uint32.from_buffer(self._map, 0)
            self._pid = os.getpid()
            return True

    @contextlib.contextmanager
    def _exclusive(self) -> Iterator[None]:
        """The file's own lock, while a slot is taken or given back."""
        assert self._fd is not None
        fcntl.flock(self._fd, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(self._fd, fcntl.LOCK_UN)

    def _holder(self, slot: int) -> int:
        """The process id holding ``slot`` (0: free)."""
        assert self._map is not None
        return int.from_bytes(self._map[slot * _SLOT : slot * _SLOT + 4], "little")

    def _put(self, slot: int, pid: int) -> None:
        assert self._map is not None and self._generation is not None
        self._map[slot * _SLOT : slot * _SLOT + 4] = pid.to_bytes(4, "little")
        self._generation.value = (self._generation.value + 1) & 0xFFFFFFFF

    def _give_back(self, slot: int) -> None:
        with self._lock:
            self._mine.discard(slot)
            if self._map is None or self._fd is None:
                return
            with self._exclusive():
                self._put(slot, 0)

    def _rescan(self) -> None:
        with self._lock:
            if self._map is None or self._generation is None:
                return
            seen = int(self._generation.value)
            others = []
            for slot in range(1, SLOTS + 1):
                if slot in self._mine:
                    continue
                if self._holder(slot):
                    word = ctypes.c_uint32.from_buffer(self._map, slot * _SLOT + 4)
                    others.append((word, ctypes.addressof(word)))
            self._others = others
            self._seen = seen
