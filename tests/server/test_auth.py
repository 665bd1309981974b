"""Authentication: every route needs a caller but the public few; tokens; sign-in links;
cookie sessions with CSRF and Origin checks."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import httpx
from fastapi.routing import APIRoute
from starlette.routing import BaseRoute, Mount
from typer.testing import CliRunner

import pawflow
from pawflow.cli import app as cli
from pawflow.clock import FakeClock
from pawflow.mcp.mounting import mount as mount_mcp
from pawflow.server.app import create_app
from pawflow.server.auth import CSRF_COOKIE, SESSION_COOKIE
from pawflow.server.credentials import issue_signin_link
from pawflow.server.testing import LiveServer, live_server
from pawflow.store import Store, open_store
from tests.server.conftest import QUIET

PUBLIC = {
    ("GET", "/"),
    ("GET", "/confirmations"),
    ("GET", "/admin"),
    ("GET", "/healthz"),
    ("GET", "/favicon.ico"),
    ("GET", "/manifest.webmanifest"),
    ("GET", "/sw.js"),
    ("GET", "/signin"),
    ("POST", "/signin"),
    # Single sign-on: off to the provider, back from it, and its logout.
    ("GET", "/signin/oidc"),
    ("GET", "/signin/oidc/callback"),
    ("GET", "/signin/oidc/logout"),
    # Answer links: the token in the path is the capability that authenticates them.
    ("GET", "/a/{token}"),
    ("GET", "/a/{token}/confirm"),
    ("POST", "/a/{token}"),
    # Slack's signature authenticates it (a 404 until the Slack settings are given).
    ("POST", "/integrations/slack/interactions"),
}


def _flat(routes: Sequence[BaseRoute]) -> Iterator[BaseRoute]:
    """Every route, looking inside included routers (FastAPI may keep them wrapped)."""
    for route in routes:
        inner = getattr(route, "original_router", None)
        if inner is not None:
            yield from _flat(inner.routes)
        else:
            yield route


def test_every_route_needs_authentication_but_the_public_ones(
    make_server: Callable[..., LiveServer], sqlite_store: Store
) -> None:
    server = make_server()
    routes = []
    for route in _flat(create_app(sqlite_store, settings=QUIET, endpoints=[mount_mcp]).routes):
        if isinstance(route, Mount):
            assert route.path in ("/static", "/docs/assets")  # static files: public by design
            continue
        if (
            getattr(route, "path", None) == "/mcp"
        ):  # the MCP endpoint: a plain ASGI route of every method
            routes += [("GET", "/mcp"), ("POST", "/mcp"), ("DELETE", "/mcp")]
            continue
        assert isinstance(route, APIRoute), route
        for method in sorted(route.methods or ()):
            routes.append((method, route.path))
    assert len(routes) >= 20
    public = set()
    with httpx.Client(base_url=server.url) as anonymous:
        for method, path in routes:
            url = re.sub(r"\{[^}]+\}", "some-id", path)
            for headers in (
                {},
                {"Authorization": "Bearer pf_wrong"},
                {"Cookie": "pawflow_session=x"},
            ):
                response = anonymous.request(method, url, headers=headers)
                if response.status_code != 401:
                    public.add((method, path))
                    break
                assert response.json() == {"error": response.json()["error"]}
    assert public == PUBLIC
    with httpx.Client(base_url=server.url) as anonymous:
        assert anonymous.get("/static/index.html").status_code == 200


def test_users_add_prints_the_token_last(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path}/users.db"
    result = CliRunner().invoke(cli, ["users", "add", "erin", "--db", db])
    assert result.exit_code == 0, result.output
    token = result.output.strip().splitlines()[-1]
    assert token.startswith("pf_") and len(token) > 40
    for stored in tmp_path.iterdir():  # the database and its WAL hold only the digest
        assert token.encode() not in stored.read_bytes()
    bad = CliRunner().invoke(cli, ["users", "add", " spaced ", "--db", db])
    assert bad.exit_code != 0
    with open_store(db) as store, live_server(store, settings=QUIET) as server:
        me = httpx.get(f"{server.url}/api/session", headers={"Authorization": f"Bearer {token}"})
        assert me.json()["user"] == "erin"


def test_bearer_tokens_authenticate(live: LiveServer) -> None:
    token = live.token("frank")
    with httpx.Client(base_url=live.url) as client:
        ok = client.get("/api/session", headers={"Authorization": f"Bearer {token}"})
        found = ok.json()
        assert found.pop("role") in ("admin", "member")  # the store's first user is its admin
        assert found == {
            "user": "frank",
            "via": "token",
            "csrf_token": None,
            "version": pawflow.__version__,
            "signout_url": "/",
        }
        for header in (f"Bearer {token}x", f"Basic {token}", "Bearer", token):
            response = client.get("/api/session", headers={"Authorization": header})
            assert response.status_code == 401
            assert response.headers["www-authenticate"].startswith("Bearer")


def _sign_in(server: LiveServer, user: str) -> httpx.Client:
    link = issue_signin_link(server.store, user, base_url=server.url, ttl=QUIET.signin_ttl)
    secret = link.split("token=", 1)[1]
    browser = httpx.Client(base_url=server.url)
    # opening the link changes nothing: it can be opened twice and still used once
    for _ in range(2):
        page = browser.get(f"/signin?token={secret}")
        assert page.status_code == 200 and "Sign in" in page.text
        assert page.headers["cache-control"] == "no-store"
    done = browser.post("/signin", data={"token": secret}, headers={"Origin": server.url})
    assert done.status_code == 303 and done.headers["location"] == "/"
    cookies = done.headers.get_list("set-cookie")
    session = next(c for c in cookies if c.startswith(SESSION_COOKIE + "="))
    assert "HttpOnly" in session and "SameSite=lax" in session
    assert any(c.startswith(CSRF_COOKIE + "=") and "HttpOnly" not in c for c in cookies)
    again = browser.post("/signin", data={"token": secret}, headers={"Origin": server.url})
    assert again.status_code == 400
    return browser


def test_sign_in_link_opens_a_session_once(live: LiveServer) -> None:
    browser = _sign_in(live, "gina")
    me = browser.get("/api/session").json()
    assert me["user"] == "gina" and me["via"] == "session" and me["csrf_token"]
    assert browser.cookies[CSRF_COOKIE] == me["csrf_token"]
    assert browser.get("/").status_code == 200
    browser.close()


def test_cookie_changes_need_csrf_and_same_origin(live: LiveServer) -> None:
    browser = _sign_in(live, "hana")
    csrf = browser.get("/api/session").json()["csrf_token"]
    url = "/api/actions/create_conversation"
    same = {"Origin": live.url}
    refusals = [
        {},  # neither
        same,  # no token
        {"X-CSRF-Token": csrf},  # no Origin
        {"X-CSRF-Token": csrf, "Origin": "http://evil.example"},
        {"X-CSRF-Token": csrf, "Origin": "null"},
        {"X-CSRF-Token": "wrong", **same},
    ]
    for headers in refusals:
        response = browser.post(url, json={"title": "x"}, headers=headers)
        assert response.status_code == 403, headers
    accepted = browser.post(url, json={"title": "x"}, headers={"X-CSRF-Token": csrf, **same})
    assert accepted.status_code == 200
    listed = browser.post(
        "/api/actions/list_conversations", json={}, headers={"X-CSRF-Token": csrf, **same}
    ).json()
    assert [c["title"] for c in listed["conversations"]] == ["x"]
    # bearer tokens need neither
    with live.client("hana") as api:
        assert api.post(url, json={"title": "y"}).status_code == 200
    # signing out ends the session
    assert browser.post("/signout", headers={"X-CSRF-Token": csrf, **same}).status_code == 204
    assert browser.get("/api/session").status_code == 401
    browser.close()


def test_cross_origin_sign_in_is_refused(live: LiveServer) -> None:
    link = issue_signin_link(live.store, "ivan", base_url=live.url, ttl=QUIET.signin_ttl)
    secret = link.split("token=", 1)[1]
    with httpx.Client(base_url=live.url) as browser:
        refused = browser.post(
            "/signin", data={"token": secret}, headers={"Origin": "http://evil.example"}
        )
        assert refused.status_code == 403
        assert SESSION_COOKIE not in browser.cookies
        # the link was not spent by the refused attempt
        done = browser.post("/signin", data={"token": secret}, headers={"Origin": live.url})
        assert done.status_code == 303


def test_a_sign_in_post_without_a_same_origin_header_is_refused(live: LiveServer) -> None:
    """As for every change a cookie makes: the POST that redeems a link must carry a
    same-origin ``Origin``, or, without one, the browser's ``Sec-Fetch-Site: same-origin``."""
    link = issue_signin_link(live.store, "uma", base_url=live.url, ttl=QUIET.signin_ttl)
    secret = link.split("token=", 1)[1]
    with httpx.Client(base_url=live.url) as browser:
        for headers in ({}, {"Sec-Fetch-Site": "cross-site"}, {"Sec-Fetch-Site": "none"}):
            refused = browser.post("/signin", data={"token": secret}, headers=headers)
            assert refused.status_code == 403, headers
            assert SESSION_COOKIE not in browser.cookies
        # Refused before the link was looked at: it still signs in, from this origin's page.
        done = browser.post(
            "/signin", data={"token": secret}, headers={"Sec-Fetch-Site": "same-origin"}
        )
        assert done.status_code == 303
        assert browser.get("/api/session").json()["user"] == "uma"


def test_expired_sign_in_links_do_not_work(make_server: Callable[..., LiveServer]) -> None:
    clock = FakeClock()
    server = make_server(clock=clock)
    link = issue_signin_link(server.store, "jo", base_url=server.url, ttl=QUIET.signin_ttl)
    clock.advance("2d")
    with httpx.Client(base_url=server.url) as browser:
        response = browser.post(
            "/signin", data={"token": link.split("token=", 1)[1]}, headers={"Origin": server.url}
        )
        assert response.status_code == 400
