"""A real ``pawflow serve`` (on SQLite, then on a throwaway PostgreSQL database) for the
AG-UI and A2A faces, with two users' tokens.

Its agents include the demo's "deployer" on the scripted model: "deploy" asks which
environment (a choice of staging or production), and the answer resumes it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from pawflow.server.credentials import issue_token
from pawflow.store import open_store
from pawflow.testing import throwaway_postgres
from tests.conftest import require_postgres
from tests.served import Served


@dataclass
class Server:
    url: str
    tokens: dict[str, str]

    def api(self, user: str) -> httpx.Client:
        """The action API as ``user``."""
        headers = {"Authorization": f"Bearer {self.tokens[user]}"}
        return httpx.Client(base_url=self.url, headers=headers, timeout=30)

    def pending(self, user: str) -> list[dict[str, Any]]:
        with self.api(user) as api:
            listed = api.post("/api/actions/list_interactions", json={"status": "pending"})
            found: list[dict[str, Any]] = listed.json()["interactions"]
            return found


@pytest.fixture(
    scope="module", params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
)
def served(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    directory: Path = tmp_path_factory.mktemp("served")
    with contextlib.ExitStack() as stack:
        if request.param == "postgres":
            require_postgres()
            db = stack.enter_context(throwaway_postgres())
        else:
            db = f"sqlite:///{directory / 'pawflow.db'}"
        yield from _serve(db, directory)


def _serve(db: str, directory: Path) -> Iterator[Server]:
    with open_store(db) as store:
        tokens = {user: issue_token(store, user) for user in ("ana", "bob")}
    process = Served(db, directory, env={"PAWFLOW_LOG_LEVEL": "error"})
    process.start()
    try:
        yield Server(process.url, tokens)
    finally:
        process.kill()
