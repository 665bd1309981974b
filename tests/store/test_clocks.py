"""A server measures its clock by the database's: within PAWFLOW_MAX_CLOCK_SKEW it keeps its
own, beyond it the database's, and says so; on SQLite, and on a test's fake clock, nothing
is measured."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from pawflow.clock import FakeClock
from pawflow.store import Store
from pawflow.store.clocks import DatabaseClock, Reading, health, keep_database_time, samples
from pawflow.store.engine.database import sql
from pawflow.store.runtime.leases import elapsed
from pawflow.testing import temporary_store
from tests.conftest import require_postgres


class Skewed:
    """This machine's clock, moved by ``seconds``."""

    def __init__(self, seconds: float) -> None:
        self.offset = timedelta(seconds=seconds)

    def now(self) -> datetime:
        return datetime.now(UTC) + self.offset


@pytest.fixture
def postgres(tmp_path: Path) -> Iterator[Path]:
    require_postgres()
    yield tmp_path


def database_now(store: Store) -> datetime:
    with store.transaction(write=False) as tx:
        row = sql(tx).one("SELECT clock_timestamp() AS now")
    assert row is not None
    found: datetime = row["now"]
    return found


@pytest.mark.postgres
def test_a_server_two_minutes_ahead_keeps_the_databases_time_and_says_so(
    postgres: Path,
) -> None:
    with temporary_store("postgres", postgres, clock=Skewed(120)) as store:
        watch = keep_database_time(store, max_skew=2.0, interval=1.0)
        assert watch is not None
        clock = store.clock
        assert isinstance(clock, DatabaseClock)
        assert clock.offset is not None and 119 < clock.offset < 121
        assert clock.skewed
        assert abs(store.now() - database_now(store)) < timedelta(seconds=1)
        told = health(clock)["clock"]
        assert told["status"] == "skewed" and told["max_skew_seconds"] == 2.0
        assert f"is {told['offset_seconds']:.3f} s ahead of the database's" in told["detail"]
        assert {s.name: s.value for s in samples(clock)} == {
            "pawflow_clock_offset_seconds": clock.offset,
            "pawflow_clock_skewed": 1,
        }
        assert watch.step() is not None  # every heartbeat reads it again


@pytest.mark.postgres
def test_a_server_within_the_bound_keeps_its_own_clock(postgres: Path) -> None:
    with temporary_store("postgres", postgres, clock=Skewed(-0.5)) as store:
        assert keep_database_time(store, max_skew=2.0, interval=1.0) is not None
        clock = store.clock
        assert isinstance(clock, DatabaseClock) and not clock.skewed
        assert clock.offset is not None and -0.6 < clock.offset < -0.4
        behind = database_now(store) - store.now()
        assert timedelta(seconds=0.3) < behind < timedelta(seconds=1)
        assert health(clock)["clock"]["status"] == "ok"
        assert {s.name: s.value for s in samples(clock)}["pawflow_clock_skewed"] == 0


def test_on_sqlite_or_a_fake_clock_nothing_is_measured(tmp_path: Path, store: Store) -> None:
    assert isinstance(store.clock, FakeClock)
    assert keep_database_time(store, max_skew=2.0, interval=1.0) is None
    with temporary_store("sqlite", tmp_path / "real", clock=Skewed(120)) as sqlite:
        assert keep_database_time(sqlite, max_skew=2.0, interval=1.0) is None
        assert health(sqlite.clock) == {} and samples(sqlite.clock) == []


def test_the_time_kept_moves_back_only_when_a_clock_that_was_off_is_left() -> None:
    local = FakeClock(datetime(2026, 1, 1, tzinfo=UTC))
    clock = DatabaseClock(local, max_skew=2.0)
    assert clock.now() == local.now()  # not read yet: its own
    database = datetime(2025, 12, 31, 23, 58, tzinfo=UTC)  # the machine is 2 min ahead
    clock.update(Reading(database, mark=elapsed(), offset=120.0, error=0.001))
    first = clock.now()
    assert database <= first < database + timedelta(seconds=30)  # the database's, at once
    # A later reading that puts the database a second earlier holds the time still.
    later = Reading(database - timedelta(seconds=1), mark=elapsed(), offset=121.0, error=0.0)
    clock.update(later)
    assert clock.now() == first
