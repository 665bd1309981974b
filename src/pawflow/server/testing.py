"""A real server on a loopback port, in a thread, for tests of clients and of the server."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import httpx
from fastapi import FastAPI

from pawflow.loops import Service
from pawflow.server.app import create_app
from pawflow.server.context import AgentDirectory, MessageHandler
from pawflow.server.credentials import issue_token
from pawflow.server.running import Server, server_config
from pawflow.server.settings import ServerSettings
from pawflow.store import Store

# Debian's chromium, never a downloaded browser; without the background-networking flags it
# keeps trying hosts this machine cannot reach.
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class LiveServer:
    url: str
    store: Store
    settings: ServerSettings
    server: Server

    def token(self, user: str) -> str:
        """A new API token for ``user`` (created if new)."""
        return issue_token(self.store, user)

    def client(self, user: str | None = None, **kwargs: object) -> httpx.Client:
        headers = {} if user is None else {"Authorization": f"Bearer {self.token(user)}"}
        return httpx.Client(base_url=self.url, headers=headers, timeout=30, **kwargs)  # type: ignore[arg-type]


@contextlib.contextmanager
def live_server(
    store: Store,
    *,
    settings: ServerSettings | None = None,
    services: Sequence[Service] = (),
    on_message: MessageHandler | None = None,
    agents: AgentDirectory | None = None,
    endpoints: Sequence[Callable[[FastAPI], object]] = (),
) -> Iterator[LiveServer]:
    """Serve ``store`` on a free loopback port until the block ends (lifespan included)."""
    port = free_port()
    settings = (settings or ServerSettings()).replace(host="127.0.0.1", port=port)
    app = create_app(
        store,
        settings=settings,
        services=services,
        on_message=on_message,
        agents=agents,
        endpoints=endpoints,
    )
    config = server_config(
        app, settings, log_level="warning", lifespan="on", timeout_graceful_shutdown=2
    )
    server = Server(config, app)
    thread = threading.Thread(target=server.run, name="pawflow-test-server", daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the test server did not start")
        time.sleep(0.01)
    try:
        yield LiveServer(f"http://127.0.0.1:{port}", store, settings, server)
    finally:
        server.end_streams_and_exit()
        thread.join(timeout=30)
