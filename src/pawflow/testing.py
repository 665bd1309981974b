"""Helpers for tests of PawFlow and of code built on it: a fake clock, throwaway stores."""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

from pawflow.clock import Clock, FakeClock
from pawflow.store import Store, open_store
from pawflow.store import postgres_available as _postgres_available
from pawflow.store import throwaway_postgres as _throwaway_postgres

T = TypeVar("T")

POSTGRES_ADMIN_URL = os.environ.get(
    "PAWFLOW_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test"
)


def eventually(
    check: Callable[[], T | None],
    *,
    timeout: float = 10.0,
    interval: float = 0.01,
    max_interval: float = 0.1,
) -> T:
    """Poll ``check`` until it returns something truthy; fail after ``timeout`` seconds.

    The first looks come every ``interval``; a wait that lasts looks less and less often, up
    to every ``max_interval``, so it leaves the CPU to the work it waits for (a server
    starting, another process's turn)."""
    deadline = time.monotonic() + timeout
    wait = interval
    while True:
        result = check()
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout}s: {check}")
        time.sleep(wait)
        wait = min(wait * 1.5, max(interval, max_interval))


def postgres_available(admin_url: str = POSTGRES_ADMIN_URL) -> bool:
    return _postgres_available(admin_url)


def throwaway_postgres(
    admin_url: str = POSTGRES_ADMIN_URL, *, migrated: bool = False
) -> contextlib.AbstractContextManager[str]:
    """Create a fresh database, yield its URL, drop it afterwards. With ``migrated``, it
    is already at the newest schema: a copy of a template database the migrations made
    once, instead of an empty one."""
    return _throwaway_postgres(admin_url, migrated=migrated)


@contextlib.contextmanager
def temporary_store(
    backend: str, directory: Path, *, clock: Clock | None = None
) -> Iterator[Store]:
    """A migrated store on ``sqlite`` (in ``directory``) or a throwaway ``postgres`` database."""
    if backend == "sqlite":
        store = open_store(f"sqlite:///{directory / 'pawflow.db'}", clock=clock)
        try:
            yield store
        finally:
            store.close()
    elif backend == "postgres":
        with throwaway_postgres(migrated=True) as url:
            store = open_store(url, clock=clock)
            try:
                yield store
            finally:
                store.close()
    else:
        raise ValueError(f"unknown backend {backend!r}")


__all__ = [
    "POSTGRES_ADMIN_URL",
    "FakeClock",
    "eventually",
    "postgres_available",
    "temporary_store",
    "throwaway_postgres",
]
