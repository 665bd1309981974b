"""Tokens that end and users who are disabled, as every surface sees them: the API, the event
stream, ``/mcp``, the command line, browser sessions and answer links."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner

from pawflow.cli import app
from pawflow.client import Client
from pawflow.clock import FakeClock
from pawflow.errors import TokenRefused
from pawflow.server.credentials import (
    TOKEN_PREFIX,
    digest,
    issue_named_token,
    issue_signin_link,
    set_user_disabled,
)
from pawflow.server.testing import LiveServer
from pawflow.store import Question
from pawflow.store.people import credentials as rows
from pawflow.store.reach import answer_links
from tests.server.conftest import unique

ACCEPT = {"Accept": "application/json, text/event-stream"}
HELLO = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "probe", "version": "1"},
    },
}


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _expired_token(server: LiveServer, user: str) -> tuple[str, str]:
    """A token of ``user`` that expired an hour ago (made as the store keeps one)."""
    store = server.store
    store.ensure_user(user)
    secret = TOKEN_PREFIX + unique("expired")
    now = store.now()
    with store.transaction() as tx:
        row = rows.add_token(
            tx,
            digest(secret),
            user,
            name="old",
            now=now - timedelta(days=2),
            expires_at=now - timedelta(hours=1),
        )
    return secret, row.id


def _ends(response: httpx.Response, seconds: float = 20.0) -> None:
    """Read a streamed body to its end; a stream still open after ``seconds`` fails."""
    deadline = time.monotonic() + seconds
    for _ in response.iter_raw():
        assert time.monotonic() < deadline, "the stream is still open"


def _mcp_session(http: httpx.Client, token: str) -> dict[str, str]:
    """Open an MCP session with ``token``; the headers of its later requests."""
    opened = http.post("/mcp", json=HELLO, headers={**ACCEPT, **_bearer(token)})
    assert opened.status_code == 200, opened.text
    headers = {
        **ACCEPT,
        **_bearer(token),
        "mcp-session-id": opened.headers["mcp-session-id"],
        "mcp-protocol-version": "2025-06-18",
    }
    ready = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert http.post("/mcp", json=ready, headers=headers).status_code == 202
    return headers


def _browser(server: LiveServer, user: str) -> httpx.Client:
    link = issue_signin_link(server.store, user, base_url=server.url, ttl=timedelta(hours=1))
    browser = httpx.Client(base_url=server.url, timeout=httpx.Timeout(10.0, read=20.0))
    signed_in = browser.post(
        "/signin", data={"token": link.split("token=", 1)[1]}, headers={"Origin": server.url}
    )
    assert signed_in.status_code == 303
    return browser


def _csrf(browser: httpx.Client) -> dict[str, str]:
    token = browser.get("/api/session").json()["csrf_token"]
    return {"X-CSRF-Token": token, "Origin": str(browser.base_url).rstrip("/")}


# -- a token past its expiry ----------------------------------------------------------------


def test_an_expired_token_is_refused_by_the_api_the_stream_mcp_and_the_cli(
    live: LiveServer,
) -> None:
    user = unique("late")
    secret, token_id = _expired_token(live, user)
    reason = f"token {token_id} expired on "
    with httpx.Client(base_url=live.url, headers=_bearer(secret), timeout=30) as http:
        for refused in (
            http.get("/api/session"),
            http.post("/api/actions/list_conversations", json={}),
            http.get("/api/events"),
            http.post("/mcp", json=HELLO, headers=ACCEPT),
        ):
            assert refused.status_code == 401, refused.text
            assert refused.json()["error"].startswith(reason), refused.text
    with (
        Client(live.url, secret, token_source="PAWFLOW_TOKEN") as client,
        pytest.raises(TokenRefused) as said,
    ):
        client.whoami()
    assert said.value.reason.startswith(reason)
    for command in (["inbox"], ["mcp"]):
        result = CliRunner().invoke(
            app, command, env={"PAWFLOW_SERVER": live.url, "PAWFLOW_TOKEN": secret}
        )
        printed = " ".join(result.output.split())
        assert result.exit_code == 1, printed
        assert printed.startswith(
            f"Refused: {live.url} does not accept the token in PAWFLOW_TOKEN ({reason}"
        ), printed
        assert "`pawflow users token rotate ID`" in printed, printed


def test_a_token_that_expires_ends_its_open_event_stream_and_mcp_stream(
    make_server: Callable[..., LiveServer],
) -> None:
    clock = FakeClock()
    server = make_server(clock=clock, credential_check=0.05)
    secret, _ = issue_named_token(server.store, "ana", expires_in=timedelta(hours=1))
    with httpx.Client(base_url=server.url, timeout=httpx.Timeout(10.0, read=20.0)) as http:
        mcp = _mcp_session(http, secret)
        with (
            http.stream("GET", "/api/events", headers=_bearer(secret)) as events,
            http.stream("GET", "/mcp", headers=mcp) as listening,
        ):
            assert events.status_code == 200 and listening.status_code == 200
            clock.advance(timedelta(hours=1))
            _ends(events)
            _ends(listening)
        assert http.get("/api/session", headers=_bearer(secret)).status_code == 401


# -- disabling a user -------------------------------------------------------------------------


def test_disabling_a_user_stops_their_tokens_sessions_streams_and_links_at_once(
    live: LiveServer,
) -> None:
    store = live.store
    user = unique("gone")
    token = live.token(user)
    conversation = store.create_conversation(user)
    asked = store.ask(Question(user, conversation.id, "confirm", "Ship?")).interaction
    with store.transaction() as tx:
        link = answer_links.create(tx, asked.id, user, now=store.now(), expires_at=None)
    browser = _browser(live, user)
    with httpx.Client(base_url=live.url, timeout=httpx.Timeout(10.0, read=20.0)) as http:
        _disable_while_streaming(live, http, browser, user, token, link)
    browser.close()


def _disable_while_streaming(
    live: LiveServer, http: httpx.Client, browser: httpx.Client, user: str, token: str, link: str
) -> None:
    store = live.store
    mcp = _mcp_session(http, token)
    with (
        http.stream("GET", "/api/events", headers=_bearer(token)) as by_token,
        browser.stream("GET", "/api/events") as by_cookie,
        http.stream("GET", "/mcp", headers=mcp) as by_mcp,
    ):
        assert by_token.status_code == by_cookie.status_code == by_mcp.status_code == 200
        with store.transaction() as tx:  # as `pawflow users disable` does
            set_user_disabled(tx, user, True, now=store.now())
        _ends(by_token)
        _ends(by_cookie)
        _ends(by_mcp)
        listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
        assert http.post("/mcp", json=listing, headers=mcp).status_code == 401
        refused = http.get("/api/session", headers=_bearer(token))
        assert refused.status_code == 401
        assert refused.json()["error"] == f"the user {user} is disabled"
        assert browser.get("/api/session").status_code == 401
        page = http.get(f"/a/{link}")
        assert "its access was revoked" in page.text
        # A sign-in link made for them does not sign them in.
        again = _browser_refused(live, user)
        assert again == 400
        with store.transaction() as tx:
            set_user_disabled(tx, user, False, now=store.now())
        assert http.get("/api/session", headers=_bearer(token)).status_code == 200
        assert browser.get("/api/session").status_code == 401  # sessions ended for good


def _browser_refused(server: LiveServer, user: str) -> int:
    link = issue_signin_link(server.store, user, base_url=server.url, ttl=timedelta(hours=1))
    with httpx.Client(base_url=server.url) as browser:
        return browser.post(
            "/signin", data={"token": link.split("token=", 1)[1]}, headers={"Origin": server.url}
        ).status_code


# -- the tokens API -------------------------------------------------------------------------


@pytest.fixture
def admin_server(make_server: Callable[..., LiveServer]) -> Iterator[LiveServer]:
    server = make_server(admins="boss", token_max_age="30d")
    server.token("boss")  # the store's first user (its admin by role too), before ana
    yield server


def _act(server: LiveServer, token: str, action: str, **body: Any) -> httpx.Response:
    return httpx.post(f"{server.url}/api/actions/{action}", json=body, headers=_bearer(token))


def test_members_manage_their_own_tokens_and_admins_everyones(admin_server: LiveServer) -> None:
    server = admin_server
    ana, boss = server.token("ana"), server.token("boss")
    made = _act(server, ana, "create_token", name="laptop", expires="7d")
    assert made.status_code == 200, made.text
    laptop = made.json()
    assert laptop["token"].startswith(TOKEN_PREFIX)
    assert (laptop["info"]["user"], laptop["info"]["name"]) == ("ana", "laptop")
    assert _act(server, laptop["token"], "list_conversations").status_code == 200

    listed = _act(server, ana, "list_tokens").json()["tokens"]
    assert {t["user"] for t in listed} == {"ana"} and len(listed) == 2
    used = next(t for t in listed if t["id"] == laptop["info"]["id"])
    assert used["last_used_at"] is not None and used["expires_at"] is not None
    assert "token" not in json.dumps(listed).replace('"tokens"', "")

    # The server's longest: 30 days; 'never' is not allowed here.
    for expires in ("1y", "never", "soon"):
        refused = _act(server, ana, "create_token", expires=expires)
        assert refused.status_code == 422, refused.text
        assert refused.json()["errors"][0]["path"] == "expires"

    boss_token = _act(server, boss, "list_tokens").json()["tokens"][0]["id"]
    for action, body in (
        ("list_tokens", {"all": True}),
        ("list_tokens", {"user": "boss"}),
        ("disable_user", {"user": "boss"}),
        ("enable_user", {"user": "boss"}),
    ):
        assert _act(server, ana, action, **body).status_code == 403, action
    # Another user's token is, to a member, exactly an unknown one.
    for action in ("revoke_token", "rotate_token"):
        theirs = _act(server, ana, action, token_id=boss_token)
        unknown = _act(server, ana, action, token_id="tok_unknown")
        assert theirs.status_code == unknown.status_code == 404
        assert theirs.json() == unknown.json()

    everyone = _act(server, boss, "list_tokens", all=True).json()["tokens"]
    assert {t["user"] for t in everyone} == {"ana", "boss"}
    rotated = _act(server, ana, "rotate_token", token_id=laptop["info"]["id"]).json()
    assert rotated["info"]["name"] == "laptop"
    assert _act(server, laptop["token"], "list_conversations").status_code == 401
    assert _act(server, rotated["token"], "list_conversations").status_code == 200
    gone = _act(server, boss, "revoke_token", token_id=rotated["info"]["id"])
    assert gone.status_code == 200 and gone.json()["user"] == "ana"
    assert _act(server, rotated["token"], "list_conversations").status_code == 401

    disabled = _act(server, boss, "disable_user", user="ana").json()
    assert disabled == {"user": "ana", "disabled": True, "changed": True}
    assert _act(server, ana, "list_tokens").status_code == 401
    assert _act(server, boss, "enable_user", user="ana").json()["disabled"] is False
    assert _act(server, ana, "list_tokens").status_code == 200
    assert _act(server, boss, "disable_user", user="nobody").status_code == 404


# -- browser sessions -------------------------------------------------------------------------


def test_signing_out_everywhere_ends_every_browser_session(live: LiveServer) -> None:
    user = unique("everywhere")
    token = live.token(user)
    first, second = _browser(live, user), _browser(live, user)
    try:
        ended = first.post("/api/actions/sign_out_everywhere", json={}, headers=_csrf(first))
        assert ended.status_code == 200 and ended.json() == {"ended": 2}
        assert first.get("/api/session").status_code == 401
        assert second.get("/api/session").status_code == 401
    finally:
        first.close()
        second.close()
    # Tokens are not sessions: they stay until revoked.
    assert httpx.get(f"{live.url}/api/session", headers=_bearer(token)).status_code == 200


def test_a_browser_session_ends_once_idle(make_server: Callable[..., LiveServer]) -> None:
    clock = FakeClock()
    server = make_server(clock=clock, session_idle="1h", session_ttl="1d")
    browser = _browser(server, "ana")
    try:
        for _ in range(3):  # used every 50 minutes: kept
            clock.advance(timedelta(minutes=50))
            assert browser.get("/api/session").status_code == 200
        clock.advance(timedelta(minutes=61))
        assert browser.get("/api/session").status_code == 401
    finally:
        browser.close()


def test_a_member_manages_their_tokens_from_the_terminal(admin_server: LiveServer) -> None:
    server = admin_server
    runner = CliRunner()
    env = {"PAWFLOW_SERVER": server.url, "PAWFLOW_TOKEN": server.token("ana")}
    made = runner.invoke(app, ["tokens", "create", "--name", "ci", "--expires", "7d"], env=env)
    assert made.exit_code == 0, made.output
    secret = made.output.strip().splitlines()[-1]
    assert secret.startswith(TOKEN_PREFIX)
    listed = runner.invoke(app, ["tokens", "list", "--json"], env=env)
    tokens = json.loads(listed.output)["tokens"]
    ci = next(t for t in tokens if t["name"] == "ci")
    assert {t["user"] for t in tokens} == {"ana"}
    shown = runner.invoke(app, ["tokens", "list"], env=env).output
    assert f"{ci['id']}  ana  ci  made " in shown and secret not in shown
    everyone = runner.invoke(app, ["tokens", "list", "--all"], env=env)
    assert everyone.exit_code == 1 and "only an admin" in everyone.output
    rotated = runner.invoke(app, ["tokens", "rotate", ci["id"]], env=env)
    assert rotated.exit_code == 0, rotated.output
    successor = rotated.output.strip().splitlines()[-1]
    with Client(server.url, successor) as client:
        assert client.whoami() == "ana"
    new_id = json.loads(runner.invoke(app, ["tokens", "list", "--json"], env=env).output)
    gone = next(t["id"] for t in new_id["tokens"] if t["name"] == "ci")
    revoked = runner.invoke(app, ["tokens", "revoke", gone], env=env)
    assert revoked.exit_code == 0 and f"revoked {gone} of ana" in revoked.output
    unknown = runner.invoke(app, ["tokens", "revoke", gone], env=env)
    assert unknown.exit_code == 1 and "Not found: no such token for you." in unknown.output
