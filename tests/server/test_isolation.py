"""Three users, every action, own / foreign / deleted / random ids: nothing leaks, and a
foreign id answers exactly like one that never existed (status, headers, body)."""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from pawflow.server.testing import LiveServer
from pawflow.store.engine.database import sql
from tests.server.conftest import Api

MakeApi = Callable[[str], Api]


@dataclass
class World:
    """What one user owns: a conversation, pending requests of two kinds, an upload, a
    webhook, a device subscribed to push."""

    api: Api
    conversation: str
    confirm: str
    text: str
    file: str
    webhook: str
    push_device: str


# A browser's subscription: a public endpoint (nothing is sent to it) and well-formed keys.
SUBSCRIPTION = {"keys": {"p256dh": "BA" + "A" * 85, "auth": "A" * 22}}


def build(api: Api) -> World:
    conversation = api.conversation()
    confirm = api.ask(conversation, "confirm")["id"]
    text = api.ask(conversation, "text")["id"]
    upload = api.http.post("/api/files", files={"file": ("a.txt", b"hi", "text/plain")})
    assert upload.status_code == 201
    file_id = upload.json()["file"]["id"]
    # the upload answers a request, so a download check must look past its owner
    api.ok("respond_interaction", request_id=api.ask(conversation, "file")["id"], answer=file_id)
    # and the conversation is offered to someone outside every world
    api.server.token(OUTSIDER)
    api.ok("share_conversation", conversation_id=conversation, user=OUTSIDER, access="read")
    # a public address: nothing is sent here (no dispatcher runs), and none may be inward
    hook = api.ok("create_webhook", url="http://1.1.1.1/hook", events=["interaction.answered"])
    endpoint = f"https://1.1.1.1/push/{secrets.token_urlsafe(8)}"
    device = api.ok("subscribe_push", endpoint=endpoint, **SUBSCRIPTION)
    return World(api, conversation, confirm, text, file_id, hook["webhook"]["id"], device["id"])


OUTSIDER = "outsider"


def deleted_ids(live: LiveServer, owner: Api) -> dict[str, str]:
    """Ids that existed once: made by ``owner``, then removed from the database."""
    world = build(owner)
    with live.store.transaction() as tx:
        sql(tx).execute("DELETE FROM file_links WHERE file_id = ?", (world.file,))
        sql(tx).execute(
            "DELETE FROM conversation_invitations WHERE conversation_id = ?", (world.conversation,)
        )
        sql(tx).execute("DELETE FROM interactions WHERE conversation_id = ?", (world.conversation,))
        sql(tx).execute("DELETE FROM events WHERE conversation_id = ?", (world.conversation,))
        sql(tx).execute("DELETE FROM conversations WHERE id = ?", (world.conversation,))
        sql(tx).execute("DELETE FROM files WHERE id = ?", (world.file,))
        sql(tx).execute("DELETE FROM webhooks WHERE id = ?", (world.webhook,))
        sql(tx).execute("DELETE FROM push_subscriptions WHERE id = ?", (world.push_device,))
    return {
        "conversation": world.conversation,
        "confirm": world.confirm,
        "text": world.text,
        "file": world.file,
        "webhook": world.webhook,
        "push_device": world.push_device,
    }


# action -> (the id it takes, the kind of id, the other fields)
ID_ACTIONS: dict[str, tuple[str, str, dict[str, Any]]] = {
    "get_interaction": ("request_id", "confirm", {}),
    "respond_interaction": ("request_id", "text", {"answer": "fine"}),
    "cancel_interaction": ("request_id", "text", {}),
    "respond_confirmation": ("request_id", "confirm", {"answer": True}),
    "cancel_confirmation": ("request_id", "confirm", {}),
    "request_interaction": ("conversation_id", "conversation", {"kind": "confirm", "message": "?"}),
    "get_history": ("conversation_id", "conversation", {}),
    "send_message": ("conversation_id", "conversation", {"content": "hello"}),
    "share_conversation": ("conversation_id", "conversation", {"user": "x", "access": "read"}),
    "accept_invitation": ("conversation_id", "conversation", {}),
    "decline_invitation": ("conversation_id", "conversation", {}),
    "list_interactions": ("conversation_id", "conversation", {}),
    "list_confirmations": ("conversation_id", "conversation", {}),
    "delete_webhook": ("webhook_id", "webhook", {}),
    "list_webhook_deliveries": ("webhook_id", "webhook", {}),
    "remove_push_device": ("device_id", "push_device", {}),
}


def signature(response: httpx.Response) -> tuple[int, list[tuple[str, str]], bytes]:
    headers = sorted((k, v) for k, v in response.headers.items() if k != "date")
    return response.status_code, headers, response.content


def test_foreign_ids_answer_exactly_like_unknown_ones(api: MakeApi, live: LiveServer) -> None:
    alice, bob, carol = api("alice"), api("bob"), api("carol")
    worlds = {w.api.user: w for w in map(build, (alice, bob, carol))}
    gone = deleted_ids(live, api("dave"))
    for caller in (alice, bob, carol):
        others = [w for user, w in worlds.items() if user != caller.user]
        for action, (field, kind, extra) in ID_ACTIONS.items():
            random_id = secrets.token_urlsafe(16)
            reference = signature(caller.call(action, **{field: random_id}, **extra))
            assert reference[0] in (200, 404), (action, reference)
            for other in others:
                foreign = getattr(other, kind)
                assert signature(caller.call(action, **{field: foreign}, **extra)) == reference, (
                    action,
                    "foreign",
                )
            deleted = signature(caller.call(action, **{field: gone[kind]}, **extra))
            assert deleted == reference, (action, "deleted")
        # downloads: a foreign or deleted upload is as unknown as a random id
        reference = signature(caller.http.get(f"/api/files/{secrets.token_urlsafe(16)}"))
        assert reference[0] == 404
        for other in others:
            assert signature(caller.http.get(f"/api/files/{other.file}")) == reference
        assert signature(caller.http.get(f"/api/files/{gone['file']}")) == reference
        # uploading for someone else's request is as unknown as for no request at all
        upload_reference = signature(
            caller.http.post(
                "/api/files",
                data={"request_id": "nope"},
                files={"file": ("a.txt", b"x", "text/plain")},
            )
        )
        assert upload_reference[0] == 404
        for other in others:
            foreign_upload = caller.http.post(
                "/api/files",
                data={"request_id": other.text},
                files={"file": ("a.txt", b"x", "text/plain")},
            )
            assert signature(foreign_upload) == upload_reference


def test_own_ids_work_and_listings_hold_only_own_records(api: MakeApi) -> None:
    alice, bob = api("alice"), api("bob")
    mine, theirs = build(alice), build(bob)
    assert (
        alice.ok("get_interaction", request_id=mine.confirm)["interaction"]["owner"] == alice.user
    )
    assert alice.http.get(f"/api/files/{mine.file}").content == b"hi"
    listed = alice.ok("list_interactions")["interactions"]
    assert {i["id"] for i in listed} >= {mine.confirm, mine.text}
    assert len(listed) == 3  # and the file request its upload answered
    assert all(i["owner"] == alice.user for i in listed)
    assert [c["id"] for c in alice.ok("list_conversations")["conversations"]] == [mine.conversation]
    assert alice.ok("list_interactions", conversation_id=theirs.conversation) == {
        "interactions": [],
        "next_cursor": None,
    }
    assert [h["id"] for h in alice.ok("list_webhooks")["webhooks"]] == [mine.webhook]
    # the foreign requests are untouched by everything above
    assert bob.ok("get_interaction", request_id=theirs.text)["interaction"]["status"] == "pending"


@pytest.mark.parametrize("action", sorted(ID_ACTIONS))
def test_no_action_accepts_a_foreign_id_through_another_field(api: MakeApi, action: str) -> None:
    """Ids are only read from the fields the action declares: anything else is refused."""
    alice = api("alice")
    field, _, extra = ID_ACTIONS[action]
    response = alice.call(action, **{field: "x"}, **extra, owner="someone-else")
    assert response.status_code == 422
