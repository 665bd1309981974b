"""The bridges' cross-process tests run on a SQLite file and on a throwaway PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from pawflow.testing import throwaway_postgres


@pytest.fixture
def db_url(backend: str, tmp_path: Path) -> Iterator[str]:
    if backend == "postgres":
        with throwaway_postgres() as url:
            yield url
    else:
        yield f"sqlite:///{tmp_path / 'pawflow.db'}"
