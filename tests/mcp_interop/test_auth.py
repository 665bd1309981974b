"""``/mcp`` under the action API's rules: failed guesses are throttled together, and a revoked
token's streams and waits end as its event streams do."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from pawflow.server.credentials import revoke_tokens
from pawflow.server.testing import LiveServer
from pawflow.store import Store, open_store
from pawflow.store.engine.sqlite import SqliteDatabase
from tests.server.conftest import Api

UserApi = Callable[[str], tuple[Api, str]]

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


def test_wrong_tokens_on_mcp_count_toward_the_api_throttle(
    make_server: Callable[..., LiveServer],
) -> None:
    server = make_server(auth_failure_limit=1, auth_failure_burst=3)
    good = _bearer(server.token("guessed-at"))
    wrong = _bearer("pf_wrong")
    listing = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    with httpx.Client(base_url=server.url, headers=ACCEPT) as client:
        statuses = [client.post("/mcp", json=listing, headers=wrong).status_code for _ in range(2)]
        statuses.append(client.get("/api/session", headers=wrong).status_code)
        assert statuses == [401, 401, 401]
        # The address has used up its guesses, on either surface, whatever it sends next.
        throttled = client.post("/mcp", json=HELLO, headers=good)
        assert throttled.status_code == 429
        assert int(throttled.headers["retry-after"]) >= 1
        assert "failed sign-in attempts" in throttled.json()["error"]
        assert client.get("/api/session", headers=good).status_code == 429


def test_mcp_guesses_alone_reach_the_limit_the_api_has(
    make_server: Callable[..., LiveServer],
) -> None:
    server = make_server(auth_failure_limit=1, auth_failure_burst=2)
    wrong = _bearer("pf_wrong")
    with httpx.Client(base_url=server.url, headers=ACCEPT) as client:
        statuses = [client.post("/mcp", json=HELLO, headers=wrong).status_code for _ in range(3)]
        api = client.get("/api/session", headers=wrong).status_code
    assert statuses == [401, 401, 429]
    assert api == 429


# -- revocation -------------------------------------------------------------------------------


def _messages(body: bytes) -> list[dict[str, Any]]:
    """The JSON-RPC messages of an SSE (or plain JSON) response body."""
    text = body.decode()
    if not text.lstrip().startswith(("event:", "data:", "id:", ":", "retry:")):
        return [json.loads(text)] if text.strip() else []
    found = []
    for line in text.splitlines():
        if line.startswith("data:") and line[5:].strip():
            found.append(json.loads(line[5:]))
    return found


def _read_to_end(response: httpx.Response, seconds: float = 20.0) -> bytes:
    """The rest of a streamed body; a stream still open after ``seconds`` fails the test."""
    deadline = time.monotonic() + seconds
    chunks = []
    for chunk in response.iter_raw():
        chunks.append(chunk)
        assert time.monotonic() < deadline, "the stream is still open"
    return b"".join(chunks)


def _open_session(http: httpx.Client, token: str) -> dict[str, str]:
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


def _url_of(store: Store) -> str:
    db = store.db
    if isinstance(db, SqliteDatabase):
        return f"sqlite:///{db.path}"
    url: str = getattr(db, "url")  # noqa: B009 - PostgresDatabase is imported only on demand
    return url


@pytest.fixture(params=["here", "elsewhere"])
def revoke(request: pytest.FixtureRequest, live: LiveServer) -> Iterator[Callable[[str], None]]:
    """Revoke a user's tokens in the server's own process, or in another store on the same
    database (as ``pawflow users revoke`` does)."""
    other = open_store(_url_of(live.store)) if request.param == "elsewhere" else None
    store = other or live.store

    def run(user: str) -> None:
        with store.transaction() as tx:
            revoke_tokens(tx, user, now=store.now())

    yield run
    if other is not None:
        other.close()


def test_a_revoked_token_ends_its_mcp_streams_and_its_wait(
    live: LiveServer, user_api: UserApi, revoke: Callable[[str], None]
) -> None:
    api, token = user_api("rev")
    request_id = api.ask(api.conversation())["id"]
    waiting_call = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {
            "name": "wait_for_answer",
            "arguments": {"request_id": request_id, "seconds": 60},
        },
    }
    with httpx.Client(base_url=live.url, timeout=httpx.Timeout(10.0, read=20.0)) as http:
        headers = _open_session(http, token)
        with (
            http.stream("GET", "/mcp", headers=headers) as listening,
            http.stream("POST", "/mcp", json=waiting_call, headers=headers) as waiting,
        ):
            assert listening.status_code == 200
            assert waiting.status_code == 200
            revoke(api.user)
            # Answered after the revocation: nothing of it may reach the revoked token.
            live.store.respond_interaction(request_id, True, user=api.user)
            waited = _read_to_end(waiting)
            _read_to_end(listening)
        # The session is gone with the token: another token of the same user cannot resume it.
        fresh = {**headers, **_bearer(live.token(api.user))}
        listing = {"jsonrpc": "2.0", "id": 3, "method": "tools/list"}
        resumed = http.post("/mcp", json=listing, headers=fresh)
        refused = http.post("/mcp", json=listing, headers=headers)
    for message in _messages(waited):
        assert "answered" not in json.dumps(message), message
    assert resumed.status_code == 404
    assert refused.status_code == 401
