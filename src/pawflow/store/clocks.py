"""Servers on one PostgreSQL database agree on the time: the database's clock is the measure.

Servers sharing a database compare the times they write with their own clocks: a lease runs
out at ``expires_at``, a request asked with ``expires_in: 90s`` expires at its ``expires_at``,
a timer fires at its deadline. A server whose clock is ahead would take every lease and
expire what another server asked; one behind would hold leases past their end. So
``pawflow serve`` on PostgreSQL reads the database's clock at start and at every lease
heartbeat (:class:`ClockWatch`: three round trips, on its own thread, never on a request's
way). While this machine's clock is within ``max_skew`` (``PAWFLOW_MAX_CLOCK_SKEW``) of the
database's, the server keeps it, as every process on one machine does; beyond that it keeps
the database's time instead (:class:`DatabaseClock`: the last reading, counted on by the
monotonic clock, which no change of the machine's clock moves) and says so — a warning in
the log, on ``/healthz`` and in ``/metrics`` (:func:`samples`) — until the clocks agree
again. Either way the store's ``now()`` stays a reading of memory, no statement. The third
of a lease's time to live that its holder does not use covers what is left
(``lease_ttl`` must exceed three times ``max_skew``). On SQLite every process runs on the
machine that holds the file, and keeps that machine's clock.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from pawflow.clock import Clock, FakeClock, iso
from pawflow.errors import PawFlowError
from pawflow.loops import Loop
from pawflow.store.engine.database import sql
from pawflow.store.runtime.leases import elapsed
from pawflow.store.store import Store
from pawflow.telemetry import Family, Sample

log = logging.getLogger("pawflow.clock")

DEFAULT_MAX_SKEW = 2.0
"""Seconds this machine's clock may be off the database's before it is reported."""
SAMPLES = 3
"""Round trips per reading; the shortest one is kept (its half is the reading's error)."""
DRIFT = 1e-4
"""How fast two clocks may drift apart (100 parts per million, far more than they do):
an older reading is trusted less by this much per second."""

OFFSET = Family(
    "pawflow_clock_offset_seconds",
    "gauge",
    "How far this server's clock is ahead of the database's (negative: behind), as last read;"
    " the server keeps the database's time.",
)
SKEWED = Family(
    "pawflow_clock_skewed",
    "gauge",
    "1 when this server's clock is further from the database's than PAWFLOW_MAX_CLOCK_SKEW.",
)
FAMILIES = (OFFSET, SKEWED)


@dataclass(frozen=True)
class Reading:
    """One reading of the database's clock."""

    database: datetime
    """The database's time at the middle of the round trip."""
    mark: float
    """This process's monotonic clock (:func:`elapsed`) at that same moment."""
    offset: float
    """Seconds this machine's clock was ahead of the database's (negative: behind)."""
    error: float
    """Half the round trip: how far off ``database`` may be."""


def read(store: Store, local: Clock, samples: int = SAMPLES) -> Reading:
    """Read the database's clock ``samples`` times in one transaction; the shortest round
    trip wins. ``local`` is this machine's clock (only the offset is measured by it)."""
    best: Reading | None = None
    with store.transaction(write=False) as tx:
        for _ in range(samples):
            before, wall = elapsed(), local.now()
            row = sql(tx).one("SELECT clock_timestamp() AS now")
            after = elapsed()
            if row is None:
                continue
            database = _aware(row["now"])
            half = (after - before) / 2
            middle = wall + timedelta(seconds=half)
            reading = Reading(database, before + half, (middle - database).total_seconds(), half)
            if best is None or reading.error < best.error:
                best = reading
    if best is None:
        raise PawFlowError("the database did not tell its time")
    return best


def _aware(value: Any) -> datetime:
    if not isinstance(value, datetime) or value.tzinfo is None:
        raise PawFlowError(f"the database told its time as {value!r}")
    return value


class DatabaseClock:
    """``local``'s time while it is within ``max_skew`` of the database's (and until the
    first reading); beyond that, the database's, as last read, counted on by this process's
    monotonic clock. A new reading that would move it back by up to ``max_skew`` holds it
    still instead; only the switch from a clock that is off to the database's moves it
    back further, once.
    """

    def __init__(self, local: Clock, *, max_skew: float = DEFAULT_MAX_SKEW) -> None:
        self.local = local
        self.max_skew = max_skew
        self.last: Reading | None = None
        """The latest reading (what the offset reports)."""
        self._anchor: Reading | None = None
        self._latest: datetime | None = None
        self._lock = threading.Lock()

    def now(self) -> datetime:
        with self._lock:
            anchor = self._anchor
            if anchor is None or not self.skewed:
                found = self.local.now()
            else:
                found = anchor.database + timedelta(seconds=elapsed() - anchor.mark)
            latest = self._latest
            if latest is not None and found < latest <= found + self._still:
                return latest  # a small step back (a new reading) holds the time still
            self._latest = found
            return found

    def update(self, reading: Reading) -> None:
        """Take a new reading: kept for the report, and counted from when it is at least as
        sure as the one counted from now (which grows less sure as it ages)."""
        with self._lock:
            self.last = reading
            anchor = self._anchor
            if anchor is None or reading.error <= anchor.error + DRIFT * (
                reading.mark - anchor.mark
            ):
                self._anchor = reading

    @property
    def _still(self) -> timedelta:
        return timedelta(seconds=self.max_skew)

    @property
    def offset(self) -> float | None:
        """Seconds this machine's clock is ahead of the database's (None: not read yet)."""
        last = self.last
        return None if last is None else last.offset

    @property
    def skewed(self) -> bool:
        offset = self.offset
        return offset is not None and abs(offset) > self.max_skew

    def describe(self) -> str:
        offset = self.offset
        if offset is None:
            return "the database's clock was not read yet"
        way = "ahead of" if offset >= 0 else "behind"
        kept = "the database's time" if self.skewed else "its own"
        return f"this server's clock is {abs(offset):.3f} s {way} the database's; it keeps {kept}"

    def report(self) -> dict[str, Any]:
        """What ``/healthz`` says of the clock."""
        last = self.last
        return {
            "status": "skewed" if self.skewed else "ok",
            "offset_seconds": None if last is None else round(last.offset, 3),
            "max_skew_seconds": self.max_skew,
            "read_at": None if last is None else iso(last.database),
            "detail": self.describe(),
        }


def health(clock: Clock) -> dict[str, Any]:
    """The clock's part of ``/healthz`` (none when the server keeps its machine's time)."""
    return {"clock": clock.report()} if isinstance(clock, DatabaseClock) else {}


def samples(clock: Clock) -> list[Sample]:
    """The clock's gauges (none when the server keeps its own machine's time)."""
    if not isinstance(clock, DatabaseClock) or clock.offset is None:
        return []
    return [
        Sample(OFFSET.name, {}, clock.offset),
        Sample(SKEWED.name, {}, 1 if clock.skewed else 0),
    ]


class ClockWatch:
    """Reads the database's clock every ``interval`` seconds into the store's clock (a
    :class:`DatabaseClock`), and warns while this machine's clock is off by more than its
    ``max_skew``."""

    def __init__(self, store: Store, clock: DatabaseClock, *, interval: float) -> None:
        self.store = store
        self.clock = clock
        self.loop = Loop("clock", self.step, interval=interval)
        self._warned = False
        self._failing = False

    def start(self) -> None:
        self.loop.start()

    def stop(self) -> None:
        self.loop.stop()

    def step(self) -> Reading | None:
        """One reading; None when the database could not be read (the clock counts on)."""
        try:
            reading = read(self.store, self.clock.local)
        except PawFlowError as exc:
            if not self._failing:
                log.warning("the database's clock could not be read: %s", exc)
            self._failing = True
            return None
        self._failing = False
        self.clock.update(reading)
        if self.clock.skewed and not self._warned:
            log.warning(
                "%s (more than PAWFLOW_MAX_CLOCK_SKEW, %g s): set the wrong clock right (NTP)",
                self.clock.describe(),
                self.clock.max_skew,
            )
        elif self._warned and not self.clock.skewed:
            log.info("%s: within PAWFLOW_MAX_CLOCK_SKEW again", self.clock.describe())
        self._warned = self.clock.skewed
        return reading


def keep_database_time(store: Store, *, max_skew: float, interval: float) -> ClockWatch | None:
    """On PostgreSQL, measure the store's clock by the database's: it becomes a
    :class:`DatabaseClock`, read once now; returns the :class:`ClockWatch` to run (every
    lease heartbeat). None on SQLite, and for a store on a test's ``FakeClock``."""
    if store.dialect != "postgres" or isinstance(store.clock, FakeClock):
        return None
    clock = store.clock if isinstance(store.clock, DatabaseClock) else DatabaseClock(store.clock)
    clock.max_skew = max_skew
    store.clock = clock
    watch = ClockWatch(store, clock, interval=interval)
    watch.step()
    return watch
