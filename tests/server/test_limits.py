"""Limits: body size counted as it streams (413), a per-user rate (429), malformed input."""

from __future__ import annotations

import contextlib
import json
import socket
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import urlsplit

import pytest

from pawflow.server.testing import LiveServer
from tests.server.conftest import Api

MakeApi = Callable[[str], Api]
LIMIT = 4096


def test_a_streamed_body_over_the_limit_is_refused(make_server: Callable[..., LiveServer]) -> None:
    server = make_server(max_body=LIMIT)
    api = Api(server, "alice")

    def chunks() -> Iterator[bytes]:  # no Content-Length: the server must count
        yield b'{"title": "'
        for _ in range(10):
            yield b"x" * 1024
        yield b'"}'

    response = api.http.post(
        "/api/actions/create_conversation",
        content=chunks(),
        headers={"content-type": "application/json"},
    )
    assert response.status_code == 413
    assert response.json()["error"].startswith("request body too large")
    declared = api.http.post("/api/actions/create_conversation", content=b"x" * (LIMIT + 1))
    assert declared.status_code == 413
    under = api.call("create_conversation", title="x" * 100)
    assert under.status_code == 200
    api.close()


def test_a_body_longer_than_its_content_length_claims_is_still_counted(
    make_server: Callable[..., LiveServer],
) -> None:
    server = make_server(max_body=LIMIT)
    token = server.token("alice")
    parts = urlsplit(server.url)
    body = b'{"title": "' + b"x" * (LIMIT * 4) + b'"}'
    # A chunked body whose every chunk is small, on a raw socket: nothing declares its size.
    request = (
        "POST /api/actions/create_conversation HTTP/1.1\r\n"
        f"Host: {parts.netloc}\r\nAuthorization: Bearer {token}\r\n"
        "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
    ).encode()
    for start in range(0, len(body), 512):
        piece = body[start : start + 512]
        request += f"{len(piece):x}\r\n".encode() + piece + b"\r\n"
    request += b"0\r\n\r\n"
    with socket.create_connection((parts.hostname, parts.port), timeout=10) as sock:
        # the server may answer and close before it has read everything
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            sock.sendall(request)
        head = sock.recv(4096).decode("latin-1")
    assert head.startswith("HTTP/1.1 413")


def test_too_many_requests_get_429_with_retry_after(
    make_server: Callable[..., LiveServer],
) -> None:
    server = make_server(rate_limit=6, rate_burst=3)
    alice, bob = Api(server, "alice"), Api(server, "bob")
    statuses = [alice.call("list_conversations").status_code for _ in range(4)]
    assert statuses == [200, 200, 200, 429]
    refused = alice.call("list_conversations")
    assert refused.status_code == 429
    assert int(refused.headers["retry-after"]) >= 1
    assert refused.json()["error"].startswith("too many requests")
    assert bob.call("list_conversations").status_code == 200  # per user
    alice.close()
    bob.close()


MALFORMED: list[tuple[str, bytes, str]] = [
    ("not json", b"{nope", "application/json"),
    ("truncated", b'{"title": ', "application/json"),
    ("NaN", b'{"title": NaN}', "application/json"),
    ("Infinity", b'{"limit": Infinity}', "application/json"),
    ("bad utf-8", b'{"title": "\xff\xfe"}', "application/json"),
    ("utf-16", '{"title": "x"}'.encode("utf-16"), "application/json"),
    ("lone surrogate", b'{"title": "\\udc00"}', "application/json"),
    ("NUL", b'{"title": "a\\u0000b"}', "application/json"),
    ("NUL key", b'{"a\\u0000": 1}', "application/json"),
    ("deep list", b"[" * 5000 + b"]" * 5000, "application/json"),
    ("deep object", b'{"a":' * 100 + b"1" + b"}" * 100, "application/json"),
    ("huge int", b'{"limit": ' + b"9" * 5000 + b"}", "application/json"),
    ("array body", b"[1, 2]", "application/json"),
    ("string body", b'"hello"', "application/json"),
    ("null body", b"null", "application/json"),
    ("text/plain", b'{"title": "x"}', "text/plain"),
    ("form", b"title=x", "application/x-www-form-urlencoded"),
    ("empty with type", b"", "application/json"),
]


@pytest.mark.parametrize(
    "action",
    ["create_conversation", "request_interaction", "respond_interaction", "list_interactions"],
)
def test_malformed_bodies_are_4xx_never_5xx(api: MakeApi, action: str) -> None:
    alice = api("alice")
    for name, body, content_type in MALFORMED:
        response = alice.http.post(
            f"/api/actions/{action}", content=body, headers={"content-type": content_type}
        )
        if action in ("create_conversation", "list_interactions") and name == "empty with type":
            assert response.status_code == 200  # every field has a default
            continue
        assert 400 <= response.status_code < 500, (name, response.status_code, response.text)
        assert "error" in response.json()


WRONG_TYPES: list[dict[str, Any]] = [
    {"conversation_id": 1, "kind": "confirm", "message": "?"},
    {"conversation_id": "c", "kind": "nope", "message": "?"},
    {"conversation_id": "c", "kind": "confirm", "message": ["?"]},
    {"conversation_id": "c", "kind": "confirm", "message": "?", "expires_in": True},
    {"conversation_id": "c", "kind": "confirm", "message": "?", "expires_in": -5},
    {"conversation_id": "c", "kind": "confirm", "message": "?", "expires_in": "100000mo"},
    {
        "conversation_id": "c",
        "kind": "confirm",
        "message": "?",
        "expires_at": "9999-12-31T23:59-01:00",
    },
    {"conversation_id": "c", "kind": "confirm", "message": "?", "expires_at": "tomorrow"},
    {"conversation_id": "c", "kind": "choice", "message": "?", "options": [{"value": 1}]},
    {"conversation_id": "c", "kind": "choice", "message": "?", "options": "a,b"},
    {"conversation_id": "c", "kind": "form", "message": "?", "response_schema": {"type": 5}},
    {"conversation_id": "c", "kind": "text", "message": "?", "ui_surface": []},
]


def test_wrong_types_are_422_with_errors(api: MakeApi) -> None:
    alice = api("alice")
    conversation = alice.conversation()
    for body in WRONG_TYPES:
        if body["conversation_id"] == "c":
            body = {**body, "conversation_id": conversation}
        response = alice.call("request_interaction", **body)
        assert response.status_code == 422, (body, response.text)
        assert response.json()["errors"], json.dumps(body)


NUL_AT_THE_DOOR: list[tuple[str, dict[str, Any]]] = [
    ("create_conversation", {"title": "Plans\x00"}),
    ("send_message", {"content": "hi\x00"}),
    ("request_interaction", {"kind": "confirm", "message": "Go\x00?"}),
    ("request_interaction", {"kind": "confirm", "message": "Go?", "title": "\x00"}),
    ("respond_interaction", {"answer": "yes\x00"}),
    ("share_conversation", {"with_user": "bob\x00", "access": "read"}),
    ("create_token", {"name": "laptop\x00"}),
    ("create_webhook", {"url": "https://example.com/\x00", "events": ["interaction_answered"]}),
    ("get_interaction", {"request_id": "id\x00"}),
]


@pytest.mark.parametrize(("action", "fields"), NUL_AT_THE_DOOR)
def test_a_nul_at_each_door_is_a_4xx_over_http_and_nothing_is_kept(
    api: MakeApi, action: str, fields: dict[str, Any]
) -> None:
    alice = api("alice")
    conversation = alice.conversation()
    asked = alice.ask(conversation)
    body = {"conversation_id": conversation, "request_id": asked["id"], **fields}
    refused = alice.call(action, **body)
    assert 400 <= refused.status_code < 500, refused.text
    assert "NUL" in refused.json()["error"]
    assert [c["id"] for c in alice.ok("list_conversations")["conversations"]] == [conversation]
    assert alice.ok("get_history", conversation_id=conversation)["messages"] == []
    assert alice.ok("get_interaction", request_id=asked["id"])["interaction"]["status"] == "pending"
