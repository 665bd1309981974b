"""Real servers on loopback ports: one per module and backend, or one per test when a test
needs its own settings or clock."""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from pawflow.clock import FakeClock
from pawflow.mcp.mounting import mount as mount_mcp
from pawflow.server.settings import ServerSettings
from pawflow.server.testing import LiveServer, live_server
from pawflow.testing import temporary_store
from tests.conftest import require_postgres

QUIET = ServerSettings(
    sweep_interval=3600,
    rate_limit=100_000,
    rate_burst=100_000,
    auth_failure_limit=100_000,
    auth_failure_burst=100_000,
)


@pytest.fixture(
    scope="module", params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
)
def server_backend(request: pytest.FixtureRequest) -> str:
    if request.param == "postgres":
        require_postgres()
    return str(request.param)


@pytest.fixture(scope="module")
def live(server_backend: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """A server shared by a module's tests, on each backend; tests use users of their own."""
    directory = tmp_path_factory.mktemp("live")
    with (
        temporary_store(server_backend, directory) as store,
        live_server(store, settings=QUIET, endpoints=[mount_mcp]) as server,
    ):
        yield server


@pytest.fixture
def make_server(tmp_path: Path) -> Iterator[Callable[..., LiveServer]]:
    """Start a SQLite-backed server with its own settings (and clock) for one test."""
    with_stack: list[Any] = []

    def make(clock: FakeClock | None = None, **settings: Any) -> LiveServer:
        directory = tmp_path / secrets.token_hex(4)
        store_cm = temporary_store("sqlite", directory, clock=clock)
        store = store_cm.__enter__()
        with_stack.append(store_cm)
        server_cm = live_server(store, settings=QUIET.replace(**settings), endpoints=[mount_mcp])
        server = server_cm.__enter__()
        with_stack.append(server_cm)
        return server

    yield make
    for cm in reversed(with_stack):
        cm.__exit__(None, None, None)


def unique(name: str) -> str:
    return f"{name}-{secrets.token_hex(3)}"


class Api:
    """A user's bearer-authenticated client with a one-line action call."""

    def __init__(self, server: LiveServer, user: str) -> None:
        self.user = user
        self.server = server
        self.http = server.client(user)

    def call(self, action: str, **body: Any) -> httpx.Response:
        return self.http.post(f"/api/actions/{action}", json=body)

    def ok(self, action: str, **body: Any) -> Any:
        response = self.call(action, **body)
        assert response.status_code == 200, response.text
        return response.json()

    def conversation(self, title: str = "t") -> str:
        return str(self.ok("create_conversation", title=title)["conversation"]["id"])

    def ask(self, conversation_id: str, kind: str = "confirm", **extra: Any) -> dict[str, Any]:
        body = {"conversation_id": conversation_id, "kind": kind, "message": "Proceed?", **extra}
        found: dict[str, Any] = self.ok("request_interaction", **body)["interaction"]
        return found

    def close(self) -> None:
        self.http.close()


@pytest.fixture
def api(live: LiveServer) -> Iterator[Callable[[str], Api]]:
    made: list[Api] = []

    def make(name: str) -> Api:
        client = Api(live, unique(name))
        made.append(client)
        return client

    yield make
    for client in made:
        client.close()
