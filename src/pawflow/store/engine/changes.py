"""SQLite: how a store's change watcher tells other processes' commits from its own.

Every commit moves the change counter in the header of the WAL index (the ``-shm`` file);
this process's commits note the value they give it, so the watcher wakes its listeners
only for a value none of them took. It sleeps until another process's commit rings its
bell (``bells.py``), or, without one, looks by the clock (:class:`Pace`).
"""

from __future__ import annotations

import os
import struct
import time

from pawflow.loops import Loop
from pawflow.store.engine.bells import Bell

POLL_SLOW = 0.02
"""SQLite: seconds between a watcher's looks at the change counter while nothing rings it
(or, without a bell, while no other process writes)."""
POLL_FAST = 0.001
POLL_OWN = 0.005
POLL_FAST_FOR = 1.0
"""Without a bell (``bells.py``): after another process changed the file, look every
``POLL_FAST`` for this many seconds; after a change of this process's own, every
``POLL_OWN`` (an answer from another process to what this one just asked may follow); then
slower step by step: a process answering another's questions is heard within about a
millisecond, an answer to a fresh question within a few, and an idle one costs no more than
before. A look is a read of four bytes of the WAL index (its change counter), no statement
and no lock; only another process's commit wakes the listeners. Where the counter cannot be
read, ``PRAGMA data_version`` is the look (every change counts as another process's), and a
change that may be this process's own (it committed too) is announced as "touched": a
listener that heard of its own commits directly looks for what it may hide of others' in one
cheap read."""

_CHANGE_COUNTER = struct.Struct("=I")
"""SQLite's WAL index (the ``-shm`` file) begins with its header, whose third 32-bit word
(``iChange``, native byte order) counts the commits that wrote to the WAL: one per
commit, whichever process made it. A checkpoint leaves it as it is."""
_CHANGE_AT = 8


def read_counter(shm: int) -> int | None:
    """The WAL index's change counter, or None when the index cannot be read."""
    try:
        header = os.pread(shm, _CHANGE_AT + 4, 0)
    except OSError:
        return None
    if len(header) < _CHANGE_AT + 4:
        return None
    value: int = _CHANGE_COUNTER.unpack_from(header, _CHANGE_AT)[0]
    return value


def only_own(own: set[int], last: int | None, now: int | None) -> bool:
    """Whether every commit that took the change counter from ``last`` to ``now`` was this
    process's (``own``: the values its commits gave it); those seen are forgotten."""
    if last is None or now is None:
        own.clear()
        return False
    steps = (now - last) & 0xFFFFFFFF
    if steps > len(own):  # more than we made: someone else's too (or the index was reset)
        if steps > 1 << 16:
            own.clear()
        else:
            own.difference_update((last + n) & 0xFFFFFFFF for n in range(1, steps + 1))
        return False
    seen = {(last + n) & 0xFFFFFFFF for n in range(1, steps + 1)}
    mine = seen <= own
    own -= seen
    return mine


def rung(bell: Bell | None) -> int:
    """The bell's word before a look (0 without a bell): what :func:`rest` sleeps on after
    it, so a ring in between ends that sleep at once."""
    return 0 if bell is None else bell.rung()


def rest(loop: Loop, bell: Bell | None, seen: int, interval: float) -> bool:
    """Wait for the watcher's next look; True once its loop is being stopped. With a bell,
    until another process's commit rings it (its word moves past ``seen``), or
    ``POLL_SLOW`` for writers that ring none; without one, ``interval``."""
    if bell is None:
        return loop.stopping(interval)
    if loop.stopping():
        return True
    bell.sleep(seen, POLL_SLOW)
    return loop.stopping()


class Pace:
    """How long a watcher waits before its next look: ``POLL_SLOW`` while the file is still,
    ``POLL_FAST`` (``POLL_OWN`` after only this process's own commits) for
    ``POLL_FAST_FOR`` after it changed, then slower step by step."""

    def __init__(self) -> None:
        self.interval = POLL_SLOW
        self._quiet_until = 0.0

    def looked(self, *, moved: bool, foreign: bool = True) -> None:
        if moved:
            # Someone is at work: look again soon (a change of another process's may come
            # right after one of ours: an answer to what we just asked). A thread that
            # wakes every millisecond takes the interpreter from this process's own work
            # as often, so only another process's change brings the fastest pace.
            pace = POLL_FAST if foreign else POLL_OWN
            if foreign or self.interval >= POLL_OWN:
                self.interval = pace
            self._quiet_until = time.monotonic() + POLL_FAST_FOR
        elif self.interval < POLL_SLOW and time.monotonic() > self._quiet_until:
            self.interval = min(self.interval * 2, POLL_SLOW)
