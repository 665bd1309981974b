"""One user can never stall, read or spoof another: each case an attacker with a valid
account tried, on both backends."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from pawflow.client import Client
from pawflow.clock import FakeClock
from pawflow.server.credentials import issue_signin_link, revoke_tokens
from pawflow.server.testing import LiveServer
from pawflow.testing import eventually
from tests.server.conftest import Api, unique
from tests.server.sse import stream, until
from tests.server.test_isolation import signature

MakeApi = Callable[[str], Api]


# -- 1. a pattern never stalls anyone ---------------------------------------------------------


def test_a_pathological_pattern_answers_at_once_while_others_keep_going(api: MakeApi) -> None:
    alice, bob = api("alice"), api("bob")
    asked = alice.ask(
        alice.conversation(), "text", response_schema={"type": "string", "pattern": "^(a+)+$"}
    )
    bobs = bob.ask(bob.conversation(), "confirm")
    # A backtracking engine takes about 2^n steps on n "a"s and a "!": never, for 20,000.
    outcome: dict[str, httpx.Response] = {}

    def answer() -> None:
        outcome["alice"] = alice.call(
            "respond_interaction", request_id=asked["id"], answer="a" * 20_000 + "!"
        )

    worker = threading.Thread(target=answer)
    worker.start()
    served = bob.ok("get_interaction", request_id=bobs["id"])  # another user is served
    assert served["interaction"]["status"] == "pending"
    eventually(lambda: "alice" in outcome, timeout=20)
    worker.join()
    refused = outcome["alice"]
    assert refused.status_code == 422
    assert refused.json()["errors"] == [
        {"path": "", "message": "does not have the expected format"}
    ]
    answered = alice.ok("respond_interaction", request_id=asked["id"], answer="a" * 20_000)
    assert answered["interaction"]["status"] == "answered"


@pytest.mark.parametrize(
    "pattern", [r"(a)\1", r"(?=a)b", r"a(?!b)", "a{1000}{1000}", "(", "x" * 2000]
)
def test_a_pattern_the_linear_engine_refuses_is_refused_when_asked(
    api: MakeApi, pattern: str
) -> None:
    alice = api("alice")
    response = alice.call(
        "request_interaction",
        conversation_id=alice.conversation(),
        kind="text",
        message="?",
        response_schema={"type": "string", "pattern": pattern},
    )
    assert response.status_code == 422, response.text
    assert [e["path"] for e in response.json()["errors"]] == ["response_schema.pattern"]


# -- 2. a file id alone downloads nothing -----------------------------------------------------


def _upload(api: Api, content: bytes, **form: str) -> dict[str, Any]:
    response = api.http.post(
        "/api/files", files={"file": ("f.txt", content, "text/plain")}, data=form
    )
    assert response.status_code == 201, response.text
    found: dict[str, Any] = response.json()["file"]
    return found


def test_a_file_id_shaped_answer_downloads_nothing(api: MakeApi) -> None:
    alice, bob = api("alice"), api("bob")
    secret = _upload(bob, b"bob's secret")
    form = alice.ask(
        alice.conversation(),
        "form",
        response_schema={
            "type": "object",
            "properties": {"id": {"type": "string"}, "sha256": {"type": "string"}},
        },
    )
    alice.ok(
        "respond_interaction", request_id=form["id"], answer={"id": secret["id"], "sha256": "x"}
    )
    stolen = alice.http.get(f"/api/files/{secret['id']}")
    unknown = alice.http.get("/api/files/AAAAAAAAAAAAAAAAAAAAAA")
    assert stolen.status_code == 404
    assert signature(stolen) == signature(unknown)
    # nor does naming it as the answer of a file request
    asked = alice.ask(alice.conversation(), "file")
    refused = alice.call("respond_interaction", request_id=asked["id"], answer=secret["id"])
    assert refused.status_code == 422
    assert alice.http.get(f"/api/files/{secret['id']}").status_code == 404
    assert bob.http.get(f"/api/files/{secret['id']}").content == b"bob's secret"


def test_a_form_file_field_is_readable_by_the_conversations_readers(api: MakeApi) -> None:
    alice, bob, carol, eve = api("alice"), api("bob"), api("carol"), api("eve")
    for other in (bob, carol, eve):
        other.conversation()
    conversation = alice.conversation()
    for member, access in ((bob, "write"), (carol, "read")):
        alice.ok(
            "share_conversation", conversation_id=conversation, user=member.user, access=access
        )
        member.ok("accept_invitation", conversation_id=conversation)
    form = alice.ask(
        conversation,
        "form",
        response_schema={
            "type": "object",
            "properties": {
                "note": {"type": "string"},
                "scan": {"type": "object", "x-pawflow-kind": "file"},
            },
        },
    )
    ref = _upload(bob, b"scan bytes", request_id=form["id"], field="scan")
    bob.ok("respond_interaction", request_id=form["id"], answer={"note": "n", "scan": ref["id"]})
    for reader in (alice, bob, carol):
        assert reader.http.get(f"/api/files/{ref['id']}").content == b"scan bytes"
    assert eve.http.get(f"/api/files/{ref['id']}").status_code == 404


# -- 3. revocation, sign-out and expiry end open streams --------------------------------------


def _ends(lines: Any) -> bool:
    """Read to the end of the stream; a stream still open past the read timeout fails."""
    for _ in lines:
        pass
    return True


def test_revoking_a_token_ends_its_open_stream(live: LiveServer) -> None:
    user = Api(live, f"rev-{threading.get_ident()}").user
    token = live.token(user)
    headers = {"Authorization": f"Bearer {token}"}
    with (
        httpx.Client(base_url=live.url, timeout=httpx.Timeout(10.0, read=10.0)) as client,
        client.stream("GET", "/api/events", headers=headers) as response,
    ):
        assert response.status_code == 200
        lines = response.iter_lines()
        assert next(lines).startswith("retry:")
        with live.store.transaction() as tx:
            revoke_tokens(tx, user, now=live.store.now())
        assert _ends(lines)
        assert client.get("/api/session", headers=headers).status_code == 401


def _session(live: LiveServer, user: str) -> httpx.Client:
    link = issue_signin_link(live.store, user, base_url=live.url, ttl=live.settings.signin_ttl)
    token = link.split("token=", 1)[1]
    client = httpx.Client(base_url=live.url, timeout=httpx.Timeout(10.0, read=10.0))
    signed_in = client.post("/signin", data={"token": token}, headers={"Origin": live.url})
    assert signed_in.status_code == 303
    return client


def test_signing_out_ends_the_sessions_open_stream(live: LiveServer) -> None:
    user = Api(live, f"out-{threading.get_ident()}").user
    browser = _session(live, user)
    csrf = browser.get("/api/session").json()["csrf_token"]
    with browser.stream("GET", "/api/events") as response:
        assert response.status_code == 200
        lines = response.iter_lines()
        next(lines)
        signed_out = browser.post("/signout", headers={"X-CSRF-Token": csrf, "Origin": live.url})
        assert signed_out.status_code == 204
        assert _ends(lines)
    browser.close()


def test_an_expired_session_ends_its_stream(make_server: Callable[..., LiveServer]) -> None:
    clock = FakeClock()
    server = make_server(clock=clock, credential_check=0.1, session_ttl="1h")
    browser = _session(server, "expiring")
    with browser.stream("GET", "/api/events") as response:
        lines = response.iter_lines()
        next(lines)
        clock.advance("2h")
        assert _ends(lines)
    browser.close()


# -- 4. malformed input is a 4xx with a message -----------------------------------------------


@pytest.mark.parametrize(
    "cursor",
    [
        "OTk5OTk5OTk5OTk5OTk5OTk5OTk5OTk5OTkuYWJj",  # the old, base64 form
        f"{2**63}.abc",
        "-1.abc",
        "01.abc",
        "1.",
        "1abc",
        "é",
        "%%%",
    ],
)
def test_malformed_cursors_are_a_422(api: MakeApi, cursor: str) -> None:
    response = api("alice").call("list_interactions", cursor=cursor)
    assert response.status_code == 422, response.text
    assert [error["path"] for error in response.json()["errors"]] == ["cursor"]


def test_a_cursor_that_names_no_request_still_starts_a_page(api: MakeApi) -> None:
    alice = api("alice")
    asked = alice.ask(alice.conversation())["id"]
    from_the_start = alice.ok("list_interactions", cursor="0.0")["interactions"]
    past_the_end = alice.ok("list_interactions", cursor="9" * 18 + ".zzz")["interactions"]
    assert [i["id"] for i in from_the_start] == [asked] and past_the_end == []


@pytest.mark.parametrize(
    "value", [b"\xb2", b"\xb9\xb2", "١٢".encode(), b"1" * 19, b"-1", b"1e3", b"12x"]
)
def test_malformed_last_event_ids_are_a_400(live: LiveServer, value: bytes) -> None:
    token = live.token("ids")
    response = httpx.get(
        f"{live.url}/api/events",
        headers=[(b"Authorization", f"Bearer {token}".encode()), (b"Last-Event-ID", value)],
    )
    assert response.status_code == 400
    assert response.json()["error"] == "Last-Event-ID must be an event id from this server"


# -- 5. decimals sent as JSON numbers are exact -----------------------------------------------


def _answer_verbatim(api: Api, request_id: str, number: str) -> httpx.Response:
    """Answer with ``number`` as written, a JSON number no float ever held."""
    body = '{"request_id": ' + json.dumps(request_id) + ', "answer": ' + number + "}"
    return api.http.post(
        "/api/actions/respond_interaction",
        content=body.encode(),
        headers={"Content-Type": "application/json"},
    )


@pytest.mark.parametrize(
    ("number", "stored"),
    [
        ("12345678901234567.89", "12345678901234567.89"),
        ("1e-400", "0." + "0" * 399 + "1"),
        ("0.1", "0.1"),
        ("-2.50E+3", "-2500"),
    ],
)
def test_decimal_answers_sent_as_numbers_are_exact(api: MakeApi, number: str, stored: str) -> None:
    alice = api("alice")
    asked = alice.ask(alice.conversation(), "decimal")
    response = _answer_verbatim(alice, asked["id"], number)
    assert response.status_code == 200, response.text
    assert response.json()["interaction"]["answer"] == stored


def test_numbers_too_long_to_read_exactly_are_refused(api: MakeApi) -> None:
    alice = api("alice")
    asked = alice.ask(alice.conversation(), "decimal")
    response = _answer_verbatim(alice, asked["id"], "1e999999999")
    assert response.status_code == 422
    assert response.json()["errors"] == [{"path": "", "message": "number is too long"}]
    integer = alice.ask(alice.conversation(), "integer")
    response = _answer_verbatim(alice, integer["id"], "3.000")
    assert response.json()["interaction"]["answer"] == 3


# -- 7. sharing needs consent and tells nothing of who exists --------------------------------


def test_sharing_answers_alike_for_users_and_strangers(api: MakeApi) -> None:
    alice, bob = api("alice"), api("bob")
    bob.conversation()
    first, second = alice.conversation("same"), alice.conversation("same")
    to_bob = alice.call("share_conversation", conversation_id=first, user=bob.user, access="read")
    to_nobody = alice.call(
        "share_conversation", conversation_id=first, user=bob.user + "-x", access="read"
    )
    assert to_bob.status_code == to_nobody.status_code == 200
    assert signature(to_bob) == signature(to_nobody)
    assert second  # a second conversation of alice's, never offered, stays unknown to bob
    assert bob.call("accept_invitation", conversation_id=second).status_code == 404


def test_an_invitation_shows_nothing_of_the_conversation_until_accepted(
    api: MakeApi, live: LiveServer
) -> None:
    alice, bob = api("alice"), api("bob")
    bob.conversation()
    conversation = alice.conversation("Plans")
    token = live.token(bob.user)
    with stream(live.url, token) as events:
        next(events)
        alice.ok("share_conversation", conversation_id=conversation, user=bob.user, access="write")
        alice.ask(conversation, "text", message="Re-enter your API token")
        with live.store.unit() as u:
            u.messages.notify_user(bob.user, "marker")
        seen = until(events, "notification")
    assert [e.type for e in seen] == ["invitation", "notification"]
    assert seen[0].data["conversation_id"] == conversation
    assert seen[0].data["invited_by"] == alice.user
    listed = bob.ok("list_conversations")["conversations"]
    assert conversation not in [c["id"] for c in listed]
    assert bob.call("get_history", conversation_id=conversation).status_code == 404
    assert bob.ok("list_invitations")["invitations"] == [seen[0].data]
    joined = bob.ok("accept_invitation", conversation_id=conversation)["conversation"]
    assert joined["access"] == "write"
    assert bob.ok("list_invitations")["invitations"] == []
    assert conversation in [c["id"] for c in bob.ok("list_conversations")["conversations"]]
    # declining leaves nothing behind; a second decline is unknown
    other = alice.conversation()
    alice.ok("share_conversation", conversation_id=other, user=bob.user, access="read")
    assert bob.call("decline_invitation", conversation_id=other).status_code == 204
    assert bob.call("decline_invitation", conversation_id=other).status_code == 404
    assert bob.call("get_history", conversation_id=other).status_code == 404


def test_invitation_actions_refuse_bad_bodies(api: MakeApi) -> None:
    bob = api("bob")
    for action in ("accept_invitation", "decline_invitation"):
        assert bob.call(action).status_code == 422
        assert bob.call(action, conversation_id=7).status_code == 422
        assert bob.call(action, conversation_id="x", extra=1).status_code == 422
    assert json.loads(bob.call("list_invitations").text) == {"invitations": []}


def test_the_client_accepts_and_declines(live: LiveServer) -> None:
    alice, bob = unique("alice"), unique("bob")
    with Client(live.url, live.token(alice)) as owner, Client(live.url, live.token(bob)) as guest:
        first, second = owner.create_conversation("one"), owner.create_conversation("two")
        owner.share_conversation(first.id, bob, "read")
        owner.share_conversation(second.id, bob, "write")
        offered = guest.list_invitations()
        assert [(i["conversation_id"], i["access"]) for i in offered] == [
            (first.id, "read"),
            (second.id, "write"),
        ]
        assert guest.accept_invitation(first.id).access == "read"
        guest.decline_invitation(second.id)
        assert guest.list_invitations() == []
        assert [c.id for c in guest.list_conversations()] == [first.id]
