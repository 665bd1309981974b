"""Single sign-on against a real OpenID provider on loopback.

The provider is npm's certified ``oidc-provider`` (tools/oidc-provider, installed from its
lock file when missing) on the machine's Node.js: one process for the whole test session,
with its own sign-in page, a few people with a groups claim, keys that rotate on request,
and test-only switches (who exists, the next ID token altered, down). Most tests run the
ASGI app in-process (Starlette's test client) while the app talks real HTTP to the provider;
:class:`Person` plays the browser at the provider's page with an httpx client of its own.
"""

from __future__ import annotations

import fcntl
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urljoin, urlsplit

import httpx
import pytest
from fastapi.testclient import TestClient

from pawflow.clock import FakeClock
from pawflow.server.app import create_app
from pawflow.server.settings import ServerSettings
from pawflow.store import Store
from pawflow.testing import temporary_store
from tests.conftest import IN_CI

TOOLS = Path(__file__).parents[2] / "tools" / "oidc-provider"
CLIENT_ID = "pawflow"
CLIENT_SECRET = "pawflow-test-secret"
PEOPLE: dict[str, dict[str, Any]] = {
    "ann": {
        "email": "ann@example.org",
        "name": "Ann Example",
        "groups": ["pawflow-admins", "approvers"],
    },
    "bob": {"email": "bob@example.org", "name": "Bob Example", "groups": ["finance"]},
    "eve": {"email": "eve@elsewhere.test", "name": "Eve Elsewhere", "groups": []},
}


def _require_node() -> None:
    if shutil.which("npm") is None or shutil.which("node") is None:
        if IN_CI:
            pytest.fail("node and npm are missing (apt-get install nodejs npm)")
        pytest.skip("node and npm are missing: apt-get install nodejs npm")


def _installed() -> bool:
    marker = TOOLS / "node_modules" / ".package-lock.json"
    lock = TOOLS / "package-lock.json"
    return marker.exists() and marker.stat().st_mtime >= lock.stat().st_mtime


@dataclass
class Provider:
    """The running provider and its test switches."""

    issuer: str
    process: subprocess.Popen[str]

    def _control(self, what: str, body: dict[str, Any]) -> dict[str, Any]:
        response = httpx.post(f"{self.issuer}/__test/{what}", json=body, timeout=10)
        assert response.status_code == 200, response.text
        found: dict[str, Any] = response.json()
        return found

    def people(self, people: dict[str, dict[str, Any]] | None = None) -> None:
        """Who exists at the provider (by default the three of :data:`PEOPLE`)."""
        self._control("accounts", people or PEOPLE)

    def rotate(self) -> list[str]:
        """A new signing key, used from now on; the key ids, newest first."""
        kids: list[str] = self._control("rotate", {})["kids"]
        return kids

    def tamper(self, *, forge: bool = False, **claims: Any) -> None:
        """Alter the next ID token: ``claims`` replaced (and re-signed with the provider's
        key), or with ``forge`` signed by a key the provider never published."""
        self._control("tamper", {"forge": forge, "claims": claims})

    def down(self, down: bool = True) -> None:
        self._control("down", {"down": down})


@pytest.fixture(scope="session")
def provider() -> Iterator[Provider]:
    _require_node()
    lock_path = Path(tempfile.gettempdir()) / "pawflow-oidc-provider-npm.lock"
    with lock_path.open("w") as lock:  # one npm ci at a time across test processes
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not _installed():
            subprocess.run(
                ["npm", "ci", "--no-audit", "--no-fund"], cwd=TOOLS, check=True, timeout=600
            )
    process = subprocess.Popen(
        ["node", "provider.js", "0"],
        cwd=TOOLS,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert process.stdout is not None
        for line in process.stdout:  # the first line says where it listens
            found = re.match(r"listening (\S+)", line)
            if found:
                break
        else:
            pytest.fail("the OpenID provider did not start")
        yield Provider(found.group(1), process)
    finally:
        process.terminate()
        process.wait(timeout=10)
        if process.stdout is not None:
            process.stdout.close()


@pytest.fixture
def idp(provider: Provider) -> Iterator[Provider]:
    """The provider with its usual people, up, and no token altered."""
    provider.people()
    provider.down(False)
    yield provider
    provider.down(False)


def sso_settings(issuer: str, **more: Any) -> ServerSettings:
    values: dict[str, Any] = {
        "public_url": "http://testserver",
        "oidc_issuer": issuer,
        "oidc_client_id": CLIENT_ID,
        "oidc_client_secret": CLIENT_SECRET,
        "oidc_name": "Example ID",
        "oidc_scopes": ("openid", "email", "profile", "groups"),
        "oidc_allowed_domains": ("example.org",),
        "oidc_admin_group": "pawflow-admins",
        "sweep_interval": 3600,
        "auth_failure_limit": 100_000,
        "auth_failure_burst": 100_000,
    }
    values.update(more)
    return ServerSettings(**values)


@dataclass
class App:
    """The app in-process, its store, and a browser's cookie jar (the test client)."""

    store: Store
    http: TestClient


@pytest.fixture
def make_app(tmp_path: Path, idp: Provider) -> Iterator[Any]:
    opened: list[Any] = []

    def make(clock: FakeClock | None = None, **settings: Any) -> App:
        cm = temporary_store("sqlite", tmp_path / f"s{len(opened)}", clock=clock)
        store = cm.__enter__()
        opened.append(cm)
        client = TestClient(create_app(store, settings=sso_settings(idp.issuer, **settings)))
        client.__enter__()
        opened.append(client)
        return App(store, client)

    yield make
    for item in reversed(opened):
        item.__exit__(None, None, None)


class Person:
    """Someone at the provider's sign-in page, with a browser of their own there."""

    def __init__(self, login: str) -> None:
        self.login = login
        self.http = httpx.Client(timeout=10, follow_redirects=False)

    def authorize(self, url: str) -> str:
        """Follow the provider from ``url``, signing in on its page; the callback URL it
        sends the browser back to."""
        for _ in range(10):
            if url.startswith("http://testserver"):
                return url
            response = self.http.get(url)
            if response.status_code in (302, 303):
                url = urljoin(url, response.headers["location"])
                continue
            assert response.status_code == 200, response.text
            form = re.search(r'<form[^>]*action="([^"]+)"', response.text)
            assert form is not None, response.text
            prompt = re.search(r'name="prompt" value="([^"]+)"', response.text)
            data = {"prompt": prompt.group(1) if prompt else "login"}
            if data["prompt"] == "login":
                data.update(login=self.login, password="any")
            submitted = self.http.post(urljoin(url, form.group(1)), data=data)
            assert submitted.status_code in (302, 303), submitted.text
            url = urljoin(url, submitted.headers["location"])
        raise AssertionError("the provider never sent the browser back")

    def close(self) -> None:
        self.http.close()


def query_of(url: str) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlsplit(url).query).items()}


def sign_in(app: App, person: str) -> Any:
    """The whole trip: start at the app, sign in at the provider, come back; the app's
    answer to the callback."""
    started = app.http.get("/signin/oidc", follow_redirects=False)
    assert started.status_code == 303, started.text
    someone = Person(person)
    try:
        back = someone.authorize(started.headers["location"])
    finally:
        someone.close()
    return app.http.get(back.removeprefix("http://testserver"), follow_redirects=False)
