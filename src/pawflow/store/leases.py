"""Named leases: one live owner at a time for a piece of work.

A process takes the lease of a deployment or an agent (``flow:<id>``, ``agent:<name>``)
before running it, renews it with heartbeats well inside its time to live, and releases it
when it stops. When the owner dies its lease runs out and another process takes it over:
work moves within one time to live. Every change is a conditional upsert, so two processes
racing for one lease can never both hold it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from pawflow.clock import to_millis
from pawflow.store.database import Database, Tx, sql
from pawflow.store.rows import decode


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


def release(tx: Tx, name: str, owner: str) -> bool:
    """Give ``name`` up, if ``owner`` holds it."""
    return sql(tx).execute("DELETE FROM leases WHERE name = ? AND owner = ?", (name, owner)) > 0


def release_all(tx: Tx, owner: str) -> int:
    """Give up every lease of ``owner`` (a process stopping cleanly)."""
    return sql(tx).execute("DELETE FROM leases WHERE owner = ?", (owner,))


def get(tx: Tx, name: str) -> Lease | None:
    row = sql(tx).one("SELECT * FROM leases WHERE name = ?", (name,))
    return None if row is None else _lease(row)


def held(tx: Tx, prefix: str, now: datetime) -> list[Lease]:
    """Live leases whose name starts with ``prefix``, by name."""
    rows = sql(tx).all(
        "SELECT * FROM leases WHERE name LIKE ? ESCAPE '\\' AND expires_at > ? ORDER BY name",
        (prefix.replace("%", r"\%").replace("_", r"\_") + "%", to_millis(now)),
    )
    return [_lease(row) for row in rows]


def _lease(row: dict[str, object]) -> Lease:
    return decode(Lease, row)


class Leases:
    """``store.leases``: named leases, each call one transaction."""

    def __init__(self, db: Database, now: Callable[[], datetime]) -> None:
        self._db = db
        self._now = now

    def acquire(self, name: str, owner: str, ttl: timedelta) -> bool:
        """Take or renew the lease ``name`` for ``owner``; False while another holds it."""
        with self._db.transaction() as tx:
            return acquire(tx, name, owner, self._now(), ttl)

    def release(self, name: str, owner: str) -> bool:
        """Give the lease up, if ``owner`` holds it."""
        with self._db.transaction() as tx:
            return release(tx, name, owner)

    def live(self, prefix: str = "") -> list[Lease]:
        """The leases not yet run out whose names start with ``prefix``."""
        with self._db.transaction(write=False) as tx:
            return held(tx, prefix, self._now())
