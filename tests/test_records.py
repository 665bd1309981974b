"""One codec for the records: rows in, contract JSON out, and the same JSON read back."""

from __future__ import annotations

import json
from typing import Any

from pawflow.records import Interaction, Message
from pawflow.server.app import create_app
from pawflow.store import Store

ROW: dict[str, Any] = {
    "id": "r1",
    "contract_version": 1,
    "kind": "text",
    "title": None,
    "message": "Name?",
    "options": None,
    "response_schema": json.dumps({"type": "string"}),
    "owner": "alice",
    "conversation_id": "c1",
    "requester": json.dumps({"type": "flow", "name": "f", "instance": "d1"}),
    "signal_id": "interaction:r1",
    "status": "answered",
    "answer": json.dumps("[1, 2]"),  # a text answer that looks like JSON stays text
    "answered_by": "alice",
    "answered_at": 1_767_225_600_250,
    "answered_via": "button",
    "answered_seq": None,
    "created_at": 1_767_225_600_000,
    "expires_at": None,
    "ui_surface": None,
    "unrelated_column": "ignored",
}


def test_a_row_becomes_contract_json_and_back() -> None:
    record = Interaction.from_row(ROW)
    dumped = record.model_dump(mode="json")
    assert dumped == record.to_dict()
    assert dumped == {
        "contract": "pawflow.user-interaction.v1",
        "id": "r1",
        "kind": "text",
        "title": None,
        "message": "Name?",
        "options": None,
        "response_schema": {"type": "string"},
        "owner": "alice",
        "conversation_id": "c1",
        "requester": {"type": "flow", "name": "f", "instance": "d1"},
        "signal_id": "interaction:r1",
        "status": "answered",
        "answer": "[1, 2]",
        "answered_by": "alice",
        "answered_at": "2026-01-01T00:00:00.250Z",
        "answered_via": "button",
        "answered_seq": None,
        "created_at": "2026-01-01T00:00:00.000Z",
        "expires_at": None,
        "ui_surface": None,
    }
    assert Interaction.model_validate(json.loads(json.dumps(dumped))) == record


def test_stored_records_are_the_api_response_models(sqlite_store: Store) -> None:
    conversation = sqlite_store.create_conversation("alice", "Codec")
    with sqlite_store.unit() as u:
        said = u.messages.append_message(
            conversation.id, content="hi", author="alice", data={"n": 1}
        )
    assert Message.model_validate(said.to_dict()) == said
    schemas = create_app(sqlite_store).openapi()["components"]["schemas"]
    interaction = schemas["Interaction"]
    created_at = interaction["properties"]["created_at"]
    assert (created_at["type"], created_at["format"]) == ("string", "date-time")
    assert "contract_version" not in interaction["properties"]
    assert set(interaction["required"]) == set(Interaction.model_fields) - {"contract_version"}
    assert schemas["InteractionEnvelope"]["properties"]["interaction"] == {
        "$ref": "#/components/schemas/Interaction"
    }
