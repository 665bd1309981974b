"""The terminal client against real servers: one in-process server per module (each test a
user of its own), and a ``pawflow serve`` process per module that can be killed and restarted
on the same port for the reconnect tests.

The app runs headless under Textual's pilot; waiting is polling with a deadline.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import time
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import pytest
from tests.served import Served
from textual.pilot import Pilot

from pawflow.client import Client
from pawflow.records import Interaction
from pawflow.server.credentials import issue_token
from pawflow.server.settings import ServerSettings
from pawflow.server.testing import LiveServer, live_server
from pawflow.store import open_store
from pawflow.testing import temporary_store
from pawflow.tui import ChatApp
from pawflow.tui.blocks import RequestBlock

QUIET = ServerSettings(sweep_interval=3600, rate_limit=100_000, rate_burst=100_000)
SIZE = (140, 50)


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    directory = tmp_path_factory.mktemp("tui")
    with (
        temporary_store("sqlite", directory) as store,
        live_server(store, settings=QUIET) as server,
    ):
        yield server


class User:
    """A user of its own on a server, with a client and one conversation."""

    def __init__(self, url: str, token: str) -> None:
        self.client = Client(url, token)
        self.token = token
        self.conversation = self.client.create_conversation("Ops").id

    def ask(self, kind: str, message: str = "Proceed?", **extra: Any) -> Interaction:
        return self.client.request_interaction(self.conversation, kind, message, **extra)

    def get(self, request_id: str) -> Interaction:
        return self.client.get_interaction(request_id)


@pytest.fixture
def user(live: LiveServer) -> Iterator[User]:
    made = User(live.url, live.token(f"tui-{secrets.token_hex(3)}"))
    yield made
    made.client.close()


def make_app(user: User, **kwargs: Any) -> ChatApp:
    """A chat app for ``user``; its client shares the user's (closed with the user)."""
    return ChatApp(user.client, conversation_id=user.conversation, **kwargs)


@contextlib.asynccontextmanager
async def running(app: ChatApp, size: tuple[int, int] = SIZE) -> AsyncIterator[Pilot[None]]:
    """Run ``app`` headless under a pilot. On the way out its workers are cancelled before
    its screens are taken down, as ``App.run`` does (``run_test`` takes the screens down
    first, so a read from the server finishing then would find no widgets)."""
    async with app.run_test(size=size) as pilot:
        try:
            yield pilot
        finally:
            app.workers.cancel_all()


async def until(pilot: Pilot[None], check: Callable[[], Any], timeout: float = 15.0) -> Any:
    """Let the app run until ``check()`` is truthy; fail after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        result = check()
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout}s")
        await pilot.pause(0.02)


async def answered_in_store(user: User, request_id: str, timeout: float = 15.0) -> Interaction:
    deadline = time.monotonic() + timeout
    while True:
        record = await asyncio.to_thread(user.get, request_id)
        if record.status != "pending":
            return record
        if time.monotonic() > deadline:
            raise AssertionError(f"{request_id} still pending after {timeout}s")
        await asyncio.sleep(0.02)


def block_of(app: ChatApp, request_id: str) -> Any:
    found = app.screen.query(f"#request-{request_id}")
    return found.first(RequestBlock) if found else None


def shown_status(app: ChatApp, request_id: str) -> str | None:
    """The status the request's block shows; None while there is no block (being redrawn)."""
    block = block_of(app, request_id)
    return None if block is None else str(block.record.status)


async def ready_block(pilot: Pilot[None], app: ChatApp, request_id: str) -> Any:
    """Wait for the request's block, focus its answer with Ctrl+N (keyboard only)."""
    await until(pilot, lambda: app.hydrations > 0 and block_of(app, request_id))
    block = block_of(app, request_id)
    for _ in range(10):
        if app.focused is not None and app.focused in block.query("*"):
            return block
        await pilot.press("ctrl+n")
        await pilot.pause()
    raise AssertionError("Ctrl+N never reached the request")


@pytest.fixture(scope="module")
def served_here(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    directory = tmp_path_factory.mktemp("served")
    server = Served(f"sqlite:///{directory / 'pawflow.db'}", directory)
    server.start()
    yield server
    server.kill()


@pytest.fixture
def served(served_here: Served) -> Served:
    """The module's ``pawflow serve``, running (a test kills and restarts it; each test is
    a user of its own)."""
    if served_here.process is None:
        served_here.start()
    return served_here


def token_for(served: Served, user: str) -> str:
    """A token for a new user of ``served``'s store, as ``pawflow users add`` makes it."""
    with open_store(served.db) as store:
        store.ensure_user(user)
        return issue_token(store, user)
