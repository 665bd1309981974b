"""Uploads for file answers: checked against the request, hashed, owned by the uploader."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

from pawflow.server.testing import LiveServer
from tests.server.conftest import Api

MakeApi = Callable[[str], Api]
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 64


def upload(api: Api, content: bytes, name: str, media: str, **form: str) -> Any:
    return api.http.post("/api/files", data=form, files={"file": (name, content, media)})


def file_request(api: Api, **schema: Any) -> dict[str, Any]:
    body = {"type": "object", "x-pawflow-kind": "file", **schema}
    return api.ask(api.conversation(), "file", response_schema=body)


def test_upload_then_answer_with_it(api: MakeApi) -> None:
    alice = api("alice")
    asked = file_request(alice, mediaTypes=["image/*"], maxBytes=1000)
    made = upload(alice, PNG, "shot.png", "image/png", request_id=asked["id"])
    assert made.status_code == 201
    ref = made.json()["file"]
    assert ref["sha256"] == hashlib.sha256(PNG).hexdigest()
    assert (ref["size"], ref["media_type"], ref["name"]) == (len(PNG), "image/png", "shot.png")
    answered = alice.ok("respond_interaction", request_id=asked["id"], answer={"id": ref["id"]})
    assert answered["interaction"]["answer"] == ref
    assert alice.http.get(f"/api/files/{ref['id']}").content == PNG


def test_upload_is_checked_against_the_named_request(api: MakeApi) -> None:
    alice = api("alice")
    asked = file_request(alice, mediaTypes=["image/png"], maxBytes=10)
    wrong_type = upload(alice, b"hi", "a.txt", "text/plain", request_id=asked["id"])
    assert wrong_type.status_code == 422
    assert wrong_type.json()["errors"][0]["path"] == "file"
    too_big = upload(alice, PNG, "a.png", "image/png", request_id=asked["id"])
    assert too_big.status_code == 422
    assert "at most 10 bytes" in too_big.json()["errors"][0]["message"]
    text = alice.ask(alice.conversation(), "text")
    assert upload(alice, b"x", "a.txt", "text/plain", request_id=text["id"]).status_code == 422
    # without a request, any type is taken; its type comes from the name when not declared
    loose = upload(alice, b"col\n1\n", "data.csv", "application/octet-stream")
    assert loose.status_code == 201 and loose.json()["file"]["media_type"] == "text/csv"


def test_an_answer_may_not_use_someone_elses_upload(api: MakeApi) -> None:
    alice, mallory = api("alice"), api("mallory")
    asked = file_request(alice)
    theirs = upload(mallory, b"evil", "x.txt", "text/plain").json()["file"]
    response = alice.call(
        "respond_interaction", request_id=asked["id"], answer={"id": theirs["id"]}
    )
    assert response.status_code == 422
    assert response.json()["errors"] == [{"path": "", "message": "not a file you uploaded"}]
    assert alice.ok("get_interaction", request_id=asked["id"])["interaction"]["status"] == "pending"


def test_a_collaborators_upload_reaches_the_asker(api: MakeApi) -> None:
    alice, bob, eve = api("alice"), api("bob"), api("eve")
    bob.conversation()
    eve.conversation()
    conversation = alice.conversation()
    alice.ok("share_conversation", conversation_id=conversation, user=bob.user, access="write")
    bob.ok("accept_invitation", conversation_id=conversation)
    asked = alice.ask(conversation, "file")
    ref = upload(bob, b"report", "r.txt", "text/plain", request_id=asked["id"]).json()["file"]
    bob.ok("respond_interaction", request_id=asked["id"], answer=ref["id"])
    got = alice.http.get(f"/api/files/{ref['id']}")
    assert got.content == b"report"
    assert got.headers["content-type"] == "application/octet-stream"  # never rendered inline
    assert got.headers["content-disposition"].startswith("attachment")
    assert eve.http.get(f"/api/files/{ref['id']}").status_code == 404


def test_uploads_over_the_cap_are_413(make_server: Callable[..., LiveServer]) -> None:
    server = make_server(max_upload=1000)
    alice = Api(server, "alice")
    assert upload(alice, b"x" * 1001, "a.bin", "application/octet-stream").status_code == 413
    assert upload(alice, b"x" * 1000, "a.bin", "application/octet-stream").status_code == 201
    huge = upload(alice, b"x" * 200_000, "a.bin", "application/octet-stream")
    assert huge.status_code == 413  # refused by the body limit before it is parsed
    alice.close()


def test_malformed_uploads_are_4xx(api: MakeApi) -> None:
    alice = api("alice")
    no_file = alice.http.post("/api/files", data={"request_id": "x"})
    assert no_file.status_code == 422
    garbage = alice.http.post(
        "/api/files",
        content=b"--x\r\nnot multipart",
        headers={"content-type": "multipart/form-data; boundary=x"},
    )
    assert 400 <= garbage.status_code < 500
    bad_type = upload(alice, b"x", "a", "not a type")
    assert bad_type.status_code == 422


def test_uploads_for_a_form_field_are_checked_against_that_field(api: MakeApi) -> None:
    alice = api("alice")
    schema = {
        "type": "object",
        "properties": {
            "amount": {"type": "number"},
            "receipt": {"type": "object", "x-pawflow-kind": "file", "mediaTypes": ["image/*"]},
        },
        "required": ["amount", "receipt"],
    }
    asked = alice.ask(alice.conversation(), "form", response_schema=schema)
    refused = upload(
        alice, b"%PDF", "r.pdf", "application/pdf", request_id=asked["id"], field="receipt"
    )
    assert refused.status_code == 422
    assert (
        upload(alice, PNG, "r.png", "image/png", request_id=asked["id"], field="amount").status_code
        == 422
    )
    ref = upload(alice, PNG, "r.png", "image/png", request_id=asked["id"], field="receipt")
    assert ref.status_code == 201
    answer = {"amount": 12.5, "receipt": ref.json()["file"]["id"]}
    done = alice.ok("respond_interaction", request_id=asked["id"], answer=answer)
    assert done["interaction"]["answer"]["receipt"]["sha256"] == ref.json()["file"]["sha256"]
