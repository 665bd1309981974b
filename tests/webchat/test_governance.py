"""The page shows whom a request waits for: a refused answer says so, a quorum vote is
counted without closing the request, and "History" lists the audit trail."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from playwright.sync_api import expect

from tests.webchat.conftest import Person, block

pytestmark = pytest.mark.slow


def test_the_page_shows_whom_a_request_waits_for_and_its_history(
    person: Callable[..., Person],
) -> None:
    ann, ben, cat = person("ann"), person("ben"), person("cat")
    chat = ann.conversation("Releases")
    asked = ann.ask(
        chat,
        "confirm",
        "Ship release 42?",
        assignees=[ann.name, ben.name, cat.name],
        required_approvals=2,
    )
    page = ann.open_conversation(chat)
    mine = block(page, asked.id)
    mine.get_by_role("button", name="Yes").click()
    expect(mine).to_contain_text("Your vote was counted")
    expect(mine).to_have_attribute("data-status", "pending")
    mine.get_by_text("History").click()
    expect(mine.locator(".trail-policy")).to_contain_text("1 of 2 approvals")
    expect(mine.locator(".trail-steps li")).to_have_count(2)  # asked, voted

    selfless = ann.ask(
        chat, "confirm", "Approve my own?", assignees=[ben.name], requester_may_answer=False
    )
    refused = block(page, selfless.id)
    refused.get_by_role("button", name="Yes").click()
    expect(refused).to_contain_text("the requester may not answer their own request")
    expect(refused).to_have_attribute("data-status", "pending")

    ben.api.respond_interaction(asked.id, True)
    expect(mine).to_have_attribute("data-status", "answered")
    block(page, asked.id).get_by_text("History").click()
    steps = block(page, asked.id).locator(".trail-steps li")
    expect(steps).to_have_count(4)  # asked, voted, voted, answered
    expect(steps.last).to_contain_text(f"Answered by {ben.name} via api")
