"""The in-process signal board behind ``waitForSignal`` and ``notify``.

For short synchronization inside one process: nothing here survives a restart (that is
what ``durableWait``/``durableNotify`` are for). A notification releases every FlowFile
waiting on its key and is remembered for ``retain`` so that a wait arriving just after it
passes straight through.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

Release = Callable[[str, Any], None]
"""Called with the outcome (``signaled`` or ``timeout``) and the notified value."""


@dataclass
class _Waiter:
    owner: object
    deadline: datetime | None
    release: Release


@dataclass(frozen=True)
class _Notice:
    value: Any
    until: datetime | None


class SignalBoard:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._waiters: dict[str, list[_Waiter]] = {}
        self._notices: dict[str, _Notice] = {}

    def notify(self, key: str, value: Any, *, now: datetime, until: datetime | None) -> int:
        """Release everything waiting on ``key``; remember the value until ``until``."""
        with self._lock:
            self._forget_old(now)
            waiting = self._waiters.pop(key, [])
            if until is None or until > now:
                self._notices[key] = _Notice(value, until)
        for waiter in waiting:
            waiter.release("signaled", value)
        return len(waiting)

    def wait(
        self,
        key: str,
        owner: object,
        release: Release,
        *,
        now: datetime,
        deadline: datetime | None,
    ) -> tuple[bool, Any]:
        """``(True, value)`` when ``key`` was notified already; else waits for ``release``."""
        with self._lock:
            self._forget_old(now)
            notice = self._notices.get(key)
            if notice is not None:
                return True, notice.value
            self._waiters.setdefault(key, []).append(_Waiter(owner, deadline, release))
        return False, None

    def expire(self, now: datetime, owner: object | None = None) -> int:
        """Release, as ``timeout``, the waits past their deadline (of ``owner`` only)."""
        return self._release(lambda w: w.deadline is not None and w.deadline <= now, owner, now)

    def release_all(self, owner: object, now: datetime) -> int:
        """Release every wait of ``owner`` as ``timeout`` (it stops, or nothing else runs)."""
        return self._release(lambda w: True, owner, now)

    def waiting(self, owner: object | None = None) -> int:
        with self._lock:
            return sum(
                1
                for waiters in self._waiters.values()
                for w in waiters
                if owner is None or w.owner is owner
            )

    def next_deadline(self, owner: object) -> datetime | None:
        with self._lock:
            deadlines = [
                w.deadline
                for waiters in self._waiters.values()
                for w in waiters
                if w.owner is owner and w.deadline is not None
            ]
        return min(deadlines) if deadlines else None

    def _release(self, due: Callable[[_Waiter], bool], owner: object | None, now: datetime) -> int:
        released: list[_Waiter] = []
        with self._lock:
            self._forget_old(now)
            for key in list(self._waiters):
                keep = []
                for waiter in self._waiters[key]:
                    if (owner is None or waiter.owner is owner) and due(waiter):
                        released.append(waiter)
                    else:
                        keep.append(waiter)
                if keep:
                    self._waiters[key] = keep
                else:
                    del self._waiters[key]
        for waiter in released:
            waiter.release("timeout", None)
        return len(released)

    def _forget_old(self, now: datetime) -> None:
        stale = [k for k, n in self._notices.items() if n.until is not None and n.until <= now]
        for key in stale:
            del self._notices[key]
