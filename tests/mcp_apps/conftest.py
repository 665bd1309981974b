"""PawFlow's MCP App in a real browser with a real host bridge.

A real ``pawflow serve`` process (SQLite) serves ``/mcp``. The host is a page in Debian's
chromium whose script (tools/mcp-host/host.js, bundled here with esbuild) is the MCP
TypeScript client and the extension's own ``AppBridge`` from ``@modelcontextprotocol/ext-apps``
(npm; installed from the lock file when missing). The page is given the server's origin by
Playwright, so its client talks to the real ``/mcp`` directly; each question it asks renders
the tool's ``ui://`` resource in an iframe sandboxed to scripts only, under the extension's
prescribed policy. One server and one browser per module; each test has a user of its own.
"""

from __future__ import annotations

import fcntl
import secrets
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from pawflow.client import Client
from pawflow.server.credentials import issue_token
from pawflow.store import Store, open_store
from pawflow.testing import eventually
from tests.conftest import IN_CI
from tests.served import Served
from tests.webchat.conftest import TIMEZONE, launch, require_chromium

playwright_api = pytest.importorskip("playwright.sync_api")
from playwright.sync_api import (  # noqa: E402
    Browser,
    FrameLocator,
    Locator,
    Page,
    expect,
    sync_playwright,
)

HOST_TOOLS = Path(__file__).parents[2] / "tools" / "mcp-host"
HOST_PATH = "/__mcp_apps_test_host__"

# Each frame loads its page, initializes and reads its request through the host: quick, but
# the machine may be busy with other tests.
expect.set_options(timeout=15_000)


def _require_node() -> None:
    if shutil.which("npm") is None or shutil.which("node") is None:
        if IN_CI:
            pytest.fail("node and npm are missing (apt-get install nodejs npm)")
        pytest.skip("node and npm are missing: apt-get install nodejs npm")


def _installed() -> bool:
    marker = HOST_TOOLS / "node_modules" / ".package-lock.json"
    lock = HOST_TOOLS / "package-lock.json"
    return marker.exists() and marker.stat().st_mtime >= lock.stat().st_mtime


@pytest.fixture(scope="session")
def host_script() -> str:
    """The host's script, bundled for the browser from the pinned npm packages."""
    _require_node()
    lock_path = Path(tempfile.gettempdir()) / "pawflow-mcp-host-npm.lock"
    with lock_path.open("w") as lock:  # one npm ci at a time across test processes
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not _installed():
            subprocess.run(
                ["npm", "ci", "--no-audit", "--no-fund"], cwd=HOST_TOOLS, check=True, timeout=600
            )
    bundled = subprocess.run(
        [
            str(HOST_TOOLS / "node_modules" / ".bin" / "esbuild"),
            "host.js",
            "--bundle",
            "--format=iife",
            "--platform=browser",
            "--log-level=warning",
        ],
        cwd=HOST_TOOLS,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return bundled.stdout


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    directory = tmp_path_factory.mktemp("mcp-apps")
    server = Served(f"sqlite:///{directory / 'pawflow.db'}", directory)
    server.start()
    try:
        yield server
    finally:
        server.kill()


@pytest.fixture(scope="module")
def store(served: Served) -> Iterator[Store]:
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
class Host:
    """One person's agent host: a page running the host script, connected to /mcp."""

    user: str
    api: Client
    page: Page
    tools: list[str]
    """What the host shows the model: the tools not kept for apps."""
    script_errors: list[str] = field(default_factory=list)

    def ask(self, tool: str, arguments: dict[str, Any], **context: Any) -> str:
        """Call ``tool`` as the model would; the id of the frame its app is drawn in."""
        found = self.page.evaluate(
            "([tool, args, context]) => window.pawflowHost.ask(tool, args, context)",
            [tool, arguments, context],
        )
        assert found["id"], found
        return str(found["id"])

    def asked(self, tool: str, arguments: dict[str, Any], **context: Any) -> tuple[str, str]:
        """Ask, and wait for the app to draw its block: (frame id, request id)."""
        frame = self.ask(tool, arguments, **context)
        shown = self.block(frame)
        expect(shown).to_have_count(1)
        self.settled(frame)
        return frame, str(shown.get_attribute("data-request-id"))

    def settled(self, frame: str) -> None:
        """Wait until the host has sized ``frame`` as its app last asked, and the app fits in
        it (nothing to scroll inside the frame): a click aimed before that lands where the
        page no longer is."""
        html = self.frame(frame).locator("html")

        def sized() -> bool:
            applied = self.page.evaluate(
                """id => {
                  const sizes = window.pawflowHost.seen(id).sizes;
                  const frame = document.getElementById(id);
                  return sizes.length > 0 && frame.style.height === `${sizes.at(-1)}px`;
                }""",
                frame,
            )
            fits = html.evaluate("root => root.scrollHeight <= root.clientHeight")
            return bool(applied and fits)

        eventually(sized, timeout=15)

    def reopen(self, frame: str, *, hold_reads: bool = False) -> str:
        """Draw ``frame``'s tool call again, from its result as it was (a host showing a past
        conversation); with ``hold_reads`` the new frame's reads of it are never relayed."""
        found = self.page.evaluate(
            "([id, holdReads]) => window.pawflowHost.reopen(id, { holdReads })", [frame, hold_reads]
        )
        return str(found)

    def close(self, frame: str) -> None:
        self.page.evaluate("(id) => window.pawflowHost.close(id)", frame)

    def seen(self, frame: str) -> dict[str, Any]:
        """What the app of ``frame`` asked of the host: calls, contexts, links, sizes."""
        found: dict[str, Any] = self.page.evaluate("(id) => window.pawflowHost.seen(id)", frame)
        return found

    def frame(self, frame: str) -> FrameLocator:
        return self.page.frame_locator(f"#{frame}")

    def block(self, frame: str) -> Locator:
        return self.frame(frame).locator("article.block")


@pytest.fixture
def host(
    served: Served, store: Store, browser: Browser, host_script: str
) -> Iterator[Callable[[], Host]]:
    made: list[tuple[Host, Any]] = []

    def make() -> Host:
        user = f"ann-{secrets.token_hex(3)}"
        token = issue_token(store, user)
        context = browser.new_context(timezone_id=TIMEZONE, locale="en-GB")
        page = context.new_page()
        page.set_default_timeout(15_000)
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        html = (
            '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Host</title>'
            f'</head><body><div id="frames"></div><script>{host_script}</script></body></html>'
        )
        page.route(
            served.url + HOST_PATH,
            lambda route: route.fulfill(body=html, content_type="text/html; charset=utf-8"),
        )
        page.goto(served.url + HOST_PATH)
        tools = page.evaluate("(token) => window.pawflowHost.connect(token)", token)
        found = Host(user, Client(served.url, token), page, tools, errors)
        made.append((found, context))
        return found

    yield make
    for found, context in made:
        context.close()
        found.api.close()
        assert found.script_errors == [], "a page raised script errors"
