"""Shared fixtures: every store test runs on SQLite and on a throwaway PostgreSQL database."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from pawflow.clock import FakeClock
from pawflow.store import Store
from pawflow.testing import postgres_available, temporary_store
from tests.disks import SmallDisk, can_mount, small_disk
from tests.pgcluster import PrivateCluster, private_cluster

IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")
_postgres_up: bool | None = None


def require_postgres() -> None:
    """Skip locally when no PostgreSQL runs; in CI that is a failure, never a skip."""
    global _postgres_up
    if _postgres_up is None:
        _postgres_up = postgres_available()
    if not _postgres_up:
        if IN_CI:
            pytest.fail("PostgreSQL is not reachable on 127.0.0.1:5432 (required in CI)")
        pytest.skip("PostgreSQL is not reachable on 127.0.0.1:5432")


@pytest.fixture(autouse=True, scope="session")
def own_data_folder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The default store lives in the user's data folder, and ``pawflow login`` keeps tokens
    in their config folder: tests (and the processes they start) get folders of their own
    instead, never the real ones."""
    folder = tmp_path_factory.mktemp("data-home")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_DATA_HOME", str(folder))
        patch.setenv("XDG_CONFIG_HOME", str(tmp_path_factory.mktemp("config-home")))
        patch.delenv("PAWFLOW_TOKEN", raising=False)
        patch.delenv("PAWFLOW_TOKEN_FILE", raising=False)
        yield folder


@pytest.fixture(autouse=True)
def _no_event_loop_left_behind() -> Iterator[None]:
    """Some frameworks' synchronous calls (pydantic-ai's run_sync) leave an event loop set on
    the main thread, never closed: close it after the test that made it, rather than have it
    reported against whichever test runs an event loop next."""
    yield
    local = getattr(asyncio.get_event_loop_policy(), "_local", None)
    loop = getattr(local, "_loop", None)
    if isinstance(loop, asyncio.AbstractEventLoop) and not loop.is_running():
        loop.close()
        asyncio.set_event_loop(None)


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def backend(request: pytest.FixtureRequest) -> str:
    if request.param == "postgres":
        require_postgres()
    return str(request.param)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def store(backend: str, tmp_path: Path, clock: FakeClock) -> Iterator[Store]:
    with temporary_store(backend, tmp_path, clock=clock) as opened:
        yield opened


@pytest.fixture
def sqlite_store(tmp_path: Path, clock: FakeClock) -> Iterator[Store]:
    with temporary_store("sqlite", tmp_path, clock=clock) as opened:
        yield opened


@pytest.fixture
def private_postgres() -> Iterator[PrivateCluster]:
    """A PostgreSQL cluster of this test's own (never the shared server), which it may stop,
    restart and start again; removed afterwards. Without PostgreSQL's programs the test is
    skipped locally, and fails in CI."""
    with private_cluster() as cluster:
        if cluster is None:
            if IN_CI:
                pytest.fail("initdb and pg_ctl are not installed (required in CI)")
            pytest.skip("initdb and pg_ctl are not installed")
        yield cluster


@pytest.fixture
def small_disk_mounted() -> Iterator[SmallDisk]:
    """A small filesystem of this test's own (a 4 MiB tmpfs), to fill up; skipped where the
    tests may not mount one (not root)."""
    if not can_mount():
        pytest.skip("mounting a small filesystem needs root")
    with small_disk() as disk:
        yield disk
