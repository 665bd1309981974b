"""A real ``pawflow serve --demo`` for the AG-UI and A2A faces, with two users' tokens; then the
same wiring in the test process, on SQLite and on a throwaway PostgreSQL database.

Its agents include the demo's "deployer" on the scripted model: "deploy" asks which
environment (a choice of staging or production), and the answer resumes it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from pawflow.a2a import mount as mount_a2a
from pawflow.agui import mount as mount_agui
from pawflow.serve import chat_service
from pawflow.server.credentials import issue_token
from pawflow.server.testing import live_server
from pawflow.store import open_store
from pawflow.testing import temporary_store
from tests.conftest import require_postgres
from tests.served import Served
from tests.server.conftest import QUIET


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
    scope="module",
    params=[
        "pawflow serve",
        "in process",
        pytest.param("in process, postgres", marks=pytest.mark.postgres),
    ],
)
def served(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    """``pawflow serve`` in its own process on SQLite; then the same wiring (the chat
    service with the demo's agent, both endpoints) in the test process, on SQLite and on
    PostgreSQL."""
    directory: Path = tmp_path_factory.mktemp("served")
    if request.param == "pawflow serve":
        yield from _serve(f"sqlite:///{directory / 'pawflow.db'}", directory)
        return
    backend = "postgres" if "postgres" in request.param else "sqlite"
    if backend == "postgres":
        require_postgres()
    with temporary_store(backend, directory) as store:
        chat = chat_service(store, QUIET, demo=True)
        with live_server(
            store,
            settings=QUIET,
            services=[chat],
            on_message=chat.message_posted,
            agents=chat,
            endpoints=[mount_agui, mount_a2a],
        ) as server:
            yield Server(server.url, {user: server.token(user) for user in ("ana", "bob")})


def _serve(db: str, directory: Path) -> Iterator[Server]:
    with open_store(db) as store:
        tokens = {user: issue_token(store, user) for user in ("ana", "bob")}
    process = Served(db, directory, args=("--demo",), env={"PAWFLOW_LOG_LEVEL": "error"})
    process.start()
    try:
        yield Server(process.url, tokens)
    finally:
        process.kill()
