"""The web chat in a real browser: Debian's chromium driven by Playwright, against a real
``pawflow serve`` process on a loopback port with a SQLite file of its own.

One server and one browser per test module; each test signs in a user of its own (a fresh
browser context), so badges and lists start empty. The test process opens the same SQLite
file as the server to mint sign-in links and, while the server is down, to write events
the page must catch up with.
"""

from __future__ import annotations

import secrets
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import pytest

from pawflow.client import Client
from pawflow.records import Interaction
from pawflow.server.credentials import issue_signin_link, issue_token
from pawflow.server.testing import CHROMIUM, CHROMIUM_ARGS
from pawflow.store import Store, open_store
from tests.conftest import IN_CI
from tests.served import Served

playwright_api = pytest.importorskip("playwright.sync_api")
from playwright.sync_api import (  # noqa: E402
    Browser,
    BrowserContext,
    Locator,
    Page,
    Playwright,
    expect,
    sync_playwright,
)

TIMEZONE = "Europe/Paris"

# Reconnecting after a restart waits for the stream's retry delay; everything else is fast.
expect.set_options(timeout=15_000)


def launch(playwright: Playwright) -> Browser:
    return playwright.chromium.launch(executable_path=CHROMIUM, args=list(CHROMIUM_ARGS))


def require_chromium() -> None:
    """Skip locally without Debian's chromium (``make test`` installs it); fail in CI."""
    if shutil.which(CHROMIUM) is None:
        if IN_CI:
            pytest.fail(f"{CHROMIUM} is missing (apt-get install chromium)")
        pytest.skip(f"{CHROMIUM} is missing: apt-get install chromium (make test does)")


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    directory = tmp_path_factory.mktemp("webchat")
    # --demo: the deploy agent answers where a test assigns it.
    server = Served(f"sqlite:///{directory / 'pawflow.db'}", directory, args=("--demo",))
    server.start()
    try:
        yield server
    finally:
        server.kill()


@pytest.fixture(scope="module")
def store(served: Served) -> Iterator[Store]:
    """The server's store, opened from the test process (SQLite is safe across processes)."""
    opened = open_store(served.db)
    try:
        yield opened
    finally:
        opened.close()


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    require_chromium()
    with sync_playwright() as playwright:
        launched = launch(playwright)
        try:
            yield launched
        finally:
            launched.close()


@dataclass
class Person:
    """A user with an API client (for the requesters' side) and a signed-in browser."""

    name: str
    served: Served
    store: Store
    api: Client
    context: BrowserContext
    pages: list[Page] = field(default_factory=list)
    script_errors: list[str] = field(default_factory=list)

    @property
    def url(self) -> str:
        return self.served.url

    def conversation(self, title: str = "Plans") -> str:
        return self.api.create_conversation(title).id

    def ask(self, conversation_id: str, kind: str, message: str, **extra: Any) -> Interaction:
        return self.api.request_interaction(conversation_id, kind, message, **extra)

    def record(self, request_id: str) -> Interaction:
        return self.api.get_interaction(request_id)

    def open(self, path: str = "/") -> Page:
        page = self.context.new_page()
        page.on("pageerror", lambda error: self.script_errors.append(str(error)))
        page.set_default_timeout(15_000)
        page.goto(self.url + path)
        self.pages.append(page)
        return page

    def open_conversation(self, conversation_id: str) -> Page:
        page = self.open(f"/?c={conversation_id}")
        expect(page.locator("section.conversation")).to_have_attribute("data-loaded", "true")
        return page


def block(page: Page, request_id: str) -> Locator:
    return page.locator(f'article.block[data-request-id="{request_id}"]')


def sign_in(context: BrowserContext, link: str) -> None:
    """What a person does with a sign-in link: open it, press Sign in, land on the chat."""
    page = context.new_page()
    page.goto(link)
    page.get_by_role("button", name="Sign in").click()
    expect(page.locator("#who")).not_to_be_empty()
    page.close()


@pytest.fixture
def person(served: Served, store: Store, browser: Browser) -> Iterator[Callable[..., Person]]:
    made: list[Person] = []

    def make(name: str = "ann", **context_options: Any) -> Person:
        user = f"{name}-{secrets.token_hex(3)}"
        options: dict[str, Any] = {"timezone_id": TIMEZONE, "locale": "en-GB"}
        options.update(context_options)
        context = browser.new_context(**options)
        link = issue_signin_link(store, user, base_url=served.url, ttl=timedelta(minutes=10))
        sign_in(context, link)
        api = Client(served.url, issue_token(store, user))
        found = Person(user, served, store, api, context)
        made.append(found)
        return found

    yield make
    for found in made:
        found.context.close()
        assert found.script_errors == [], "the page raised script errors"
        found.api.close()
