"""Named leases: one live owner at a time for a piece of work.

A process takes the lease of a deployment or an agent (``flow:<id>``, ``agent:<name>``)
before running it, renews it with heartbeats well inside its time to live, and releases it
when it stops. When the owner dies its lease runs out and another process takes it over:
work moves within one time to live. Every change is a conditional upsert, so two processes
racing for one lease can never both hold it.

Every lease follows one rule (:class:`LeaseTerms`): it runs out ``ttl`` after its last
renewal began (by the store's clock), its holder renews it every third of that, and the
holder trusts it for two thirds of ``ttl`` after a renewal began, by this process's
monotonic clock (:class:`Hold`): a process frozen, paused or cut off past that does no more
work under it until a renewal succeeds, well before another process may take it. The third
left between the two covers clocks that disagree. A turn's lease (``chat_turns``) follows
the same rule.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from pawflow.clock import to_millis
from pawflow.errors import PawFlowError
from pawflow.store.engine.database import Tx, sql
from pawflow.store.engine.rows import decode

DEFAULT_TTL = timedelta(seconds=10)
"""How long a lease lasts after its last renewal, unless told otherwise
(``PAWFLOW_LEASE_TTL``)."""


log = logging.getLogger("pawflow.leases")

_BOOTTIME: int | None = getattr(time, "CLOCK_BOOTTIME", None)


def elapsed() -> float:
    """Seconds on a clock that never jumps and counts on while the machine sleeps (Linux's
    boot time; the monotonic clock elsewhere): what a holder measures its lease by."""
    return time.clock_gettime(_BOOTTIME) if _BOOTTIME is not None else time.monotonic()


@dataclass(frozen=True)
class LeaseTerms:
    """The one rule of every lease: it runs out ``ttl`` after its last renewal; its holder
    renews it every third of that (:attr:`renew_every`) and trusts it for two thirds
    (:attr:`trusted_for`)."""

    ttl: timedelta = DEFAULT_TTL

    def __post_init__(self) -> None:
        if self.ttl <= timedelta(0):
            raise ValueError("a lease's time to live must be positive")

    @classmethod
    def of(cls, ttl: timedelta | float | None) -> LeaseTerms:
        """Terms from a time to live in seconds or a timedelta (the default when None)."""
        if ttl is None:
            return cls()
        return cls(ttl if isinstance(ttl, timedelta) else timedelta(seconds=ttl))

    @property
    def seconds(self) -> float:
        return self.ttl.total_seconds()

    @property
    def renew_every(self) -> float:
        """Seconds between two renewals."""
        return self.seconds / 3

    @property
    def trusted_for(self) -> float:
        """Seconds after a renewal began that its holder still works under the lease."""
        return self.seconds * 2 / 3


class Hold:
    """A lease this process holds, as its own monotonic clock sees it.

    ``began = hold.begin()`` before the transaction that takes or renews the lease, then
    ``hold.renewed(began)`` once it committed (``hold.lost()`` when it was refused).
    :attr:`valid` is what a worker checks before each task or effect: no statement, only
    the time since the last renewal began; :meth:`confirm` also renews a lease that is no
    longer trusted (a statement only then), so that a pause a renewal survives costs no
    work. ``clock`` is :func:`elapsed` unless a test drives its own.
    """

    def __init__(self, terms: LeaseTerms, *, clock: Callable[[], float] = elapsed) -> None:
        self.terms = terms
        self._clock = clock
        self._since: float | None = None
        self._lock = threading.Lock()

    def begin(self) -> float:
        return self._clock()

    def renewed(self, began: float) -> None:
        with self._lock:
            if self._since is None or began > self._since:
                self._since = began

    def lost(self) -> None:
        with self._lock:
            self._since = None

    @property
    def age(self) -> float | None:
        """Seconds since the last renewal began; None when not held."""
        since = self._since
        return None if since is None else self._clock() - since

    @property
    def valid(self) -> bool:
        """Held, and renewed recently enough to work under."""
        age = self.age
        return age is not None and age < self.terms.trusted_for

    def confirm(self, renew: Callable[[], bool]) -> bool:
        """Valid, or renewed now by ``renew`` (True when the lease is still this
        holder's); False, and lost, when it is not — or could not be renewed."""
        if self.valid:
            return True
        began = self.begin()
        try:
            renewed = renew()
        except PawFlowError as exc:
            log.warning("a lease not renewed in time could not be renewed now: %s", exc)
            return False
        if renewed:
            self.renewed(began)
        else:
            self.lost()
        return renewed

    @property
    def due(self) -> bool:
        """A renewal is due (or the lease is not held)."""
        age = self.age
        return age is None or age >= self.terms.renew_every


@dataclass(frozen=True)
class Lease:
    name: str
    owner: str
    acquired_at: datetime
    expires_at: datetime


def acquire(tx: Tx, name: str, owner: str, now: datetime, ttl: timedelta) -> bool:
    """Take or renew ``name`` for ``owner``; False while another owner's lease is live."""
    now_ms = to_millis(now)
    expires = to_millis(now + ttl)
    changed = sql(tx).execute(
        "INSERT INTO leases (name, owner, acquired_at, expires_at) VALUES (?, ?, ?, ?)"
        " ON CONFLICT (name) DO UPDATE SET"
        " acquired_at = CASE WHEN leases.owner = excluded.owner THEN leases.acquired_at"
        " ELSE excluded.acquired_at END,"
        " owner = excluded.owner, expires_at = excluded.expires_at"
        " WHERE leases.owner = excluded.owner OR leases.expires_at <= excluded.acquired_at",
        (name, owner, now_ms, expires),
    )
    return changed > 0


def renew(
    tx: Tx, name: str, owner: str, now: datetime, ttl: timedelta, epoch: int | None = None
) -> bool:
    """Extend ``owner``'s lease ``name``; False when ``owner`` holds it no more (another
    took it, maybe gave it up since: a renewal never takes a lease anew) or, given the
    ``epoch`` it was held since (``acquired_at``, in milliseconds), not without a break."""
    since = "" if epoch is None else " AND acquired_at = ?"
    return (
        sql(tx).execute(
            f"UPDATE leases SET expires_at = ? WHERE name = ? AND owner = ?{since}",
            (to_millis(now + ttl), name, owner, *(() if epoch is None else (epoch,))),
        )
        > 0
    )


def release(tx: Tx, name: str, owner: str) -> bool:
    """Give ``name`` up, if ``owner`` holds it."""
    return sql(tx).execute("DELETE FROM leases WHERE name = ? AND owner = ?", (name, owner)) > 0


def release_all(tx: Tx, owner: str) -> int:
    """Give up every lease of ``owner`` (a process stopping cleanly)."""
    return sql(tx).execute("DELETE FROM leases WHERE owner = ?", (owner,))


def get(tx: Tx, name: str) -> Lease | None:
    row = sql(tx).one("SELECT * FROM leases WHERE name = ?", (name,))
    return None if row is None else _lease(row)


def held(tx: Tx, now: datetime, prefix: str = "") -> list[Lease]:
    """Live leases whose name starts with ``prefix``, by name."""
    rows = sql(tx).all(
        "SELECT * FROM leases WHERE name LIKE ? ESCAPE '\\' AND expires_at > ? ORDER BY name",
        (prefix.replace("%", r"\%").replace("_", r"\_") + "%", to_millis(now)),
    )
    return [_lease(row) for row in rows]


def _lease(row: dict[str, object]) -> Lease:
    return decode(Lease, row)
