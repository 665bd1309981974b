"""A tool approval in the web chat: the call's arguments in a form pre-filled with the
proposed ones; an edit the tool's schema refuses is shown beside its field, and the
request stays open; a reject sends its reason."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from playwright.sync_api import expect

from pawflow.interactions.tool_approval import make_surface
from tests.webchat.conftest import Person, block

pytestmark = pytest.mark.slow

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "environment": {"type": "string", "enum": ["staging", "production"]},
        "replicas": {"type": "integer", "maximum": 5, "description": "How many to run."},
    },
    "required": ["environment"],
    "additionalProperties": False,
}


def approval(ann: Person, chat: str) -> str:
    surface = make_surface(
        tool="deploy",
        agent="releaser",
        description="Deploy the service.",
        arguments={"environment": "production", "replicas": 2},
        schema=SCHEMA,
    )
    asked = ann.ask(chat, "confirm", "Allow releaser to run deploy?", ui_surface=surface)
    return asked.id


def test_an_edit_is_checked_and_then_sent(person: Callable[..., Person]) -> None:
    ann = person()
    chat = ann.conversation("Deploys")
    request_id = approval(ann, chat)
    page = ann.open_conversation(chat)
    asked = block(page, request_id)
    expect(asked.locator(".card-title")).to_have_text("releaser wants to run deploy")
    expect(asked.get_by_label("environment")).to_have_value("production")
    expect(asked.get_by_label("replicas")).to_have_value("2")
    # Tagged as what it is; "Approve" until an argument is changed.
    expect(asked.locator(".kind-tag")).to_have_text("Approval")
    expect(asked.get_by_role("button", name="Approve", exact=True)).to_be_visible()
    expect(asked.get_by_role("button", name="Approve with my edits")).to_have_count(0)
    asked.get_by_label("replicas").fill("3")
    expect(asked.get_by_role("button", name="Approve with my edits")).to_be_visible()
    asked.get_by_label("replicas").fill("2")  # back as proposed
    expect(asked.get_by_role("button", name="Approve", exact=True)).to_be_visible()

    asked.get_by_label("replicas").fill("50")
    asked.get_by_role("button", name="Approve with my edits").click()
    expect(asked.locator(".field--invalid .field-error")).to_have_text("must be at most 5")
    assert ann.record(request_id).status == "pending"

    asked.get_by_label("environment").select_option("staging")
    asked.get_by_label("replicas").fill("3")
    asked.get_by_role("button", name="Approve with my edits").click()
    expect(asked).to_have_attribute("data-status", "answered")
    answer = ann.record(request_id).answer
    assert answer["decision"] == "edit"
    assert answer["arguments"] == {"environment": "staging", "replicas": 3}
    expect(asked.locator(".answer-value")).to_contain_text("Approved with edits")


def test_a_reject_sends_its_reason(person: Callable[..., Person]) -> None:
    ann = person()
    chat = ann.conversation("Deploys")
    request_id = approval(ann, chat)
    page = ann.open_conversation(chat)
    asked = block(page, request_id)
    asked.get_by_label("Reason (optional)").fill("use staging first")
    asked.get_by_role("button", name="Reject").click()
    expect(asked).to_have_attribute("data-status", "answered")
    answer = ann.record(request_id).answer
    assert (answer["decision"], answer["reason"]) == ("reject", "use staging first")
    expect(asked.locator(".answer-value")).to_have_text("Rejected: use staging first")


def test_an_always_allow_is_listed_and_revoked_here(person: Callable[..., Person]) -> None:
    ann = person()
    chat = ann.conversation("Deploys")
    request_id = approval(ann, chat)
    page = ann.open_conversation(chat)
    asked = block(page, request_id)
    asked.get_by_label("Always allow this call in this conversation").check()
    asked.get_by_role("button", name="Approve", exact=True).click()
    expect(asked).to_have_attribute("data-status", "answered")
    assert ann.record(request_id).answer["always"] == "conversation"

    page = ann.open_conversation(chat)
    rules = page.locator(".approval-rules")
    expect(rules).to_contain_text('releaser may run deploy {"environment":"production"')
    rules.get_by_role("button", name="Revoke").click()
    expect(rules).to_be_hidden()
    found = ann.api.action("list_approval_rules", conversation_id=chat)
    assert found["rules"] == []
