"""The action API over HTTP: shapes, aliases, errors, pagination, sharing (both backends)."""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest

import pawflow
from pawflow.clock import FakeClock
from pawflow.records import Message
from pawflow.server.testing import LiveServer, live_server
from pawflow.store import Store
from tests.server.conftest import QUIET, Api

MakeApi = Callable[[str], Api]


def test_request_get_respond_cancel_round_trip(api: MakeApi) -> None:
    alice = api("alice")
    conversation = alice.conversation("Deploys")
    asked = alice.ask(conversation, "choice", options=["staging", {"value": "prod", "label": "P"}])
    assert asked["contract"] == "pawflow.user-interaction.v1"
    assert asked["owner"] == alice.user and asked["status"] == "pending"
    assert asked["requester"] == {"type": "api", "name": alice.user}
    assert asked["options"] == [
        {"value": "staging", "label": "staging"},
        {"value": "prod", "label": "P"},
    ]
    got = alice.ok("get_interaction", request_id=asked["id"])
    assert got["interaction"] == asked
    assert got["deliveries"] == []  # alice has no channels
    assert got["policy"] is None  # no assignees: the requester and the writers answer
    assert [step["action"] for step in got["audit"]] == ["created"]

    answered = alice.ok("respond_interaction", request_id=asked["id"], answer="prod")
    assert answered["interaction"]["answer"] == "prod"
    assert answered["interaction"]["answered_by"] == alice.user

    other = alice.ask(conversation, "text")
    cancelled = alice.ok("cancel_interaction", request_id=other["id"])
    assert cancelled["interaction"]["status"] == "cancelled"


def test_the_record_keeps_the_channel_a_client_declares(api: MakeApi) -> None:
    alice = api("alice")
    conversation = alice.conversation()
    for declared, kept in ((None, "api"), ("button", "button"), ("cli", "cli"), ("api", "api")):
        asked = alice.ask(conversation)
        body = {} if declared is None else {"answered_via": declared}
        done = alice.ok("respond_interaction", request_id=asked["id"], answer=True, **body)
        assert done["interaction"]["answered_via"] == kept
        assert done["interaction"]["answered_seq"] is None
        got = alice.ok("get_interaction", request_id=asked["id"])["interaction"]
        assert (got["answered_via"], got["answered_seq"]) == (kept, None)
    asked = alice.ask(conversation, "choice", options=["a", "b"])
    done = alice.ok("respond_confirmation", request_id=asked["id"], answer="b", answered_via="cli")
    assert done["interaction"]["answered_via"] == "cli"
    fresh = alice.ask(conversation)
    assert (fresh["answered_via"], fresh["answered_seq"]) == (None, None)


@pytest.mark.parametrize("claimed", ["chat", "mcp", "email", "", 3, None])
def test_a_client_cannot_claim_the_servers_channels(api: MakeApi, claimed: object) -> None:
    alice = api("alice")
    asked = alice.ask(alice.conversation())
    for action in ("respond_interaction", "respond_confirmation"):
        response = alice.call(action, request_id=asked["id"], answer=True, answered_via=claimed)
        assert response.status_code == 422, response.text
    response = alice.call(
        "respond_interaction", request_id=asked["id"], answer=True, answered_seq=1
    )
    assert response.status_code == 422
    assert alice.ok("get_interaction", request_id=asked["id"])["interaction"]["status"] == "pending"


def test_conflict_names_the_current_status(api: MakeApi) -> None:
    alice = api("alice")
    asked = alice.ask(alice.conversation())
    alice.ok("respond_interaction", request_id=asked["id"], answer=True)
    for action, body in (
        ("respond_interaction", {"answer": False}),
        ("cancel_interaction", {}),
        ("respond_confirmation", {"answer": False}),
    ):
        response = alice.call(action, request_id=asked["id"], **body)
        assert response.status_code == 409
        assert response.json() == {
            "error": "interaction is no longer pending: it is answered",
            "status": "answered",
        }


def test_a_request_with_an_idempotency_key_is_asked_once(api: MakeApi) -> None:
    alice = api("alice")
    conversation = alice.conversation()
    first = alice.ask(conversation, idempotency_key="deploy-7")
    assert alice.ask(conversation, idempotency_key="deploy-7") == first
    other = alice.call(
        "request_interaction",
        conversation_id=conversation,
        kind="confirm",
        message="Deploy elsewhere?",
        idempotency_key="deploy-7",
    )
    assert other.status_code == 409
    assert other.json()["error"] == (
        "idempotency_key 'deploy-7' was used for another request (it differs in message)"
    )
    unusable = alice.call(
        "request_interaction",
        conversation_id=conversation,
        kind="confirm",
        message="Proceed?",
        idempotency_key="a\nb",
    )
    assert unusable.status_code == 422
    assert alice.ok("list_interactions")["interactions"] == [first]


def test_invalid_answer_is_422_with_field_errors_and_stays_pending(api: MakeApi) -> None:
    alice = api("alice")
    schema = {
        "type": "object",
        "properties": {"age": {"type": "integer", "minimum": 0}, "name": {"type": "string"}},
        "required": ["age", "name"],
    }
    asked = alice.ask(alice.conversation(), "form", response_schema=schema)
    response = alice.call("respond_interaction", request_id=asked["id"], answer={"age": -1})
    assert response.status_code == 422
    body = response.json()
    assert set(body) == {"error", "errors"}
    assert {e["path"] for e in body["errors"]} == {"age", "name"}
    assert alice.ok("get_interaction", request_id=asked["id"])["interaction"]["status"] == "pending"


@pytest.mark.parametrize("field", ["owner", "status", "created_at", "answered_by", "requester"])
def test_server_decided_fields_cannot_be_set(api: MakeApi, field: str) -> None:
    alice = api("alice")
    body = {"conversation_id": alice.conversation(), "kind": "confirm", "message": "?"}
    response = alice.call("request_interaction", **body, **{field: "mallory"})
    assert response.status_code == 422
    assert response.json()["errors"] == [
        {"path": field, "message": "Extra inputs are not permitted"}
    ]


def test_aliases_reach_only_confirmation_kinds(api: MakeApi) -> None:
    alice = api("alice")
    conversation = alice.conversation()
    text = alice.ask(conversation, "text")
    confirm = alice.ask(conversation, "confirm")
    multi = alice.ask(conversation, "multi", options=["a", "b"])
    unknown = alice.call("respond_confirmation", request_id="x" * 22, answer="hi")
    for action, body in (("respond_confirmation", {"answer": "hi"}), ("cancel_confirmation", {})):
        response = alice.call(action, request_id=text["id"], **body)
        assert (response.status_code, response.content) == (404, unknown.content)
    listed = alice.ok("list_confirmations")["interactions"]
    assert [i["id"] for i in listed] == [confirm["id"], multi["id"]]
    assert alice.call("list_confirmations", kind="text").status_code == 422
    assert alice.ok("respond_confirmation", request_id=multi["id"], answer=["b", "a"])[
        "interaction"
    ]["answer"] == ["a", "b"]
    alice.ok("cancel_confirmation", request_id=confirm["id"])
    assert alice.ok("get_interaction", request_id=text["id"])["interaction"]["status"] == "pending"


def test_list_filters_and_paginates(api: MakeApi) -> None:
    alice = api("alice")
    first, second = alice.conversation(), alice.conversation()
    made = [alice.ask(first, "confirm") for _ in range(3)] + [alice.ask(second, "text")]
    alice.ok("cancel_interaction", request_id=made[0]["id"])

    seen, cursor = [], None
    while True:
        page = alice.ok("list_interactions", limit=2, **({"cursor": cursor} if cursor else {}))
        assert set(page) == {"interactions", "next_cursor"}
        seen += [i["id"] for i in page["interactions"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert seen == [m["id"] for m in made]

    def ids(**filters: object) -> list[str]:
        return [i["id"] for i in alice.ok("list_interactions", **filters)["interactions"]]

    assert ids(status="pending") == [m["id"] for m in made[1:]]
    assert ids(conversation_id=second) == [made[3]["id"]]
    assert ids(kind="text") == [made[3]["id"]]
    assert ids(status="cancelled", kind="confirm") == [made[0]["id"]]
    page = alice.ok("list_confirmations", limit=1, status="pending")
    assert [i["id"] for i in page["interactions"]] == [made[1]["id"]]
    after = alice.ok("list_confirmations", limit=5, cursor=page["next_cursor"])
    assert [i["id"] for i in after["interactions"]] == [made[2]["id"]]
    assert after["next_cursor"] is None
    assert alice.call("list_interactions", cursor="not-a-cursor!").status_code == 422


def test_conversations_history_and_messages(api: MakeApi) -> None:
    alice = api("alice")
    created = alice.ok("create_conversation", title="Plans")["conversation"]
    assert created["owner"] == alice.user and created["title"] == "Plans"
    assert alice.ok("list_conversations") == {"conversations": [created]}
    sent = alice.ok("send_message", conversation_id=created["id"], content="hello")["message"]
    assert sent["role"] == "user" and sent["author"] == alice.user
    history = alice.ok("get_history", conversation_id=created["id"])["messages"]
    assert history == [sent]
    assert alice.ok("get_history", conversation_id=created["id"], after_seq=sent["seq"]) == {
        "messages": []
    }


def test_sharing_grants_answering_to_writers_only(api: MakeApi) -> None:
    alice, bob, carol = api("alice"), api("bob"), api("carol")
    bob.conversation()  # bob and carol exist
    carol.conversation()
    conversation = alice.conversation()
    offered = alice.ok(
        "share_conversation", conversation_id=conversation, user=bob.user, access="write"
    )["conversation"]
    assert offered["members"] == {}  # an invitation until bob accepts it
    joined = bob.ok("accept_invitation", conversation_id=conversation)["conversation"]
    assert joined["access"] == "write"
    shared = alice.ok("get_history", conversation_id=conversation)
    alice.ok("share_conversation", conversation_id=conversation, user=carol.user, access="read")
    carol.ok("accept_invitation", conversation_id=conversation)
    assert shared == {"messages": []}

    asked = alice.ask(conversation)
    assert carol.call("respond_interaction", request_id=asked["id"], answer=True).status_code == 404
    assert (
        bob.ok("respond_interaction", request_id=asked["id"], answer=True)["interaction"][
            "answered_by"
        ]
        == bob.user
    )
    # a reader reads the history but does not post or ask there
    assert carol.ok("get_history", conversation_id=conversation) == {"messages": []}
    assert carol.call("send_message", conversation_id=conversation, content="x").status_code == 404
    asked_by_reader = carol.call(
        "request_interaction", conversation_id=conversation, kind="confirm", message="?"
    )
    assert asked_by_reader.status_code == 404
    # only the owner shares; whether the other user exists does not show
    assert (
        bob.call(
            "share_conversation", conversation_id=conversation, user=carol.user, access="write"
        ).status_code
        == 404
    )
    nobody = alice.call(
        "share_conversation", conversation_id=conversation, user="no-such-user", access="read"
    )
    assert nobody.status_code == 200


def test_expired_request_answers_409_expired(
    tmp_path: object, sqlite_store: Store, clock: FakeClock
) -> None:
    with live_server(sqlite_store, settings=QUIET) as server:
        alice = Api(server, "alice")
        asked = alice.ask(alice.conversation(), expires_in="1h")
        clock.advance("2h")
        response = alice.call("respond_interaction", request_id=asked["id"], answer=True)
        assert response.status_code == 409 and response.json()["status"] == "expired"
        alice.close()


def test_send_message_hands_the_message_on_off_the_request_path(sqlite_store: Store) -> None:
    release = threading.Event()
    seen: list[tuple[str, Message]] = []
    handled = threading.Event()

    def on_message(store: Store, conversation_id: str, message: Message) -> None:
        release.wait(10)  # the HTTP answer must not wait for this
        seen.append((conversation_id, message))
        handled.set()

    with live_server(sqlite_store, settings=QUIET, on_message=on_message) as server:
        alice = Api(server, "alice")
        conversation = alice.conversation()
        sent = alice.ok("send_message", conversation_id=conversation, content="plan my week")
        assert not handled.is_set()
        release.set()
        assert handled.wait(10)
        assert seen[0][0] == conversation
        assert seen[0][1].id == sent["message"]["id"]
        alice.close()


def test_healthz_needs_nobody(live: LiveServer) -> None:
    with live.client() as anonymous:
        response = anonymous.get("/healthz")
    assert response.status_code == 200
    body = response.json()
    assert body["store"] == "ok" and body["loops"]["sweeper"] == "running"
    assert body["version"] == pawflow.__version__
