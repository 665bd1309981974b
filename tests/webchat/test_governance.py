"""The page shows whom a request waits for: a refused answer says so, a quorum vote is
counted without closing the request (a second one is refused, saying which vote stands), and
"History" lists the audit trail and how each notification went."""

from __future__ import annotations

from collections.abc import Callable
from itertools import pairwise

import pytest
from playwright.sync_api import expect

from pawflow.store import Store
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
    mine.get_by_role("button", name="No").click()  # a second vote of ann's changes nothing
    expect(mine).to_contain_text(f"{ann.name} has already voted yes: the vote stands")
    expect(mine).to_have_attribute("data-status", "pending")

    selfless = ann.ask(
        chat,
        "confirm",
        "Approve my own?",
        assignees=[ben.name],
        requester_may_answer=False,
        notify=["push"],
    )
    refused = block(page, selfless.id)  # it waits for ben: said, and nothing to press
    expect(refused.locator(".notice--waiting")).to_have_text(f"Waiting for {ben.name}")
    expect(refused.get_by_role("button", name="Yes")).to_have_count(0)
    expect(refused).to_have_attribute("data-status", "pending")
    refused.get_by_text("History").click()  # ben has no device: his push failed, and says why
    expect(refused.locator(".trail-deliveries li")).to_have_text(
        [f"push to {ben.name}: failed — {ben.name} has no device subscribed to push"]
    )

    ben.api.respond_interaction(asked.id, True)
    expect(mine).to_have_attribute("data-status", "answered")
    block(page, asked.id).get_by_text("History").click()
    steps = block(page, asked.id).locator(".trail-steps li")
    expect(steps).to_have_count(4)  # asked, voted, voted, answered
    expect(steps.last).to_contain_text(f"Answered by {ben.name} via api")


def test_the_inbox_lists_what_is_assigned_and_answers_it_in_place(
    person: Callable[..., Person], store: Store
) -> None:
    """An assignee through a group sees the request in her badge, home and pending page;
    the requester sees "Waiting for group:…", with no controls and no Claim, uncounted."""
    ann, ben = person("ann"), person("ben")
    leads = f"leads-{ben.name}"
    with store.unit() as u:
        u.groups.add_members(leads, [ben.name])
    chat = ann.conversation("Releases")
    later = ann.ask(chat, "confirm", "Ship 43?", assignees=[ben.name], expires_in="2d")
    sooner = ann.ask(chat, "confirm", "Ship 42?", assignees=[f"group:{leads}"], expires_in="1d")
    own = ann.ask(chat, "confirm", "Lunch?")
    home = ben.open("/")
    expect(home.locator("#pending-badge")).to_have_text("2")
    expect(home.locator(".home")).to_contain_text("2 requests are waiting for your answer")
    page = ben.open("/confirmations")
    inbox = page.locator("section.inbox")
    items = inbox.locator("ol.inbox-list").first.locator(":scope > li.inbox-item")
    expect(items).to_have_count(2)
    expect(items.first).to_contain_text("Ship 42?")  # soonest due first
    expect(items.first).to_contain_text("assigned to your group")
    inbox.get_by_role("button", name="Claimed by me").click()
    expect(items.locator(":visible")).to_have_count(0)
    inbox.get_by_role("button", name="Assigned to me").click()
    expect(items.filter(visible=True)).to_have_count(1)
    # The filters stand apart, and the one shown looks pressed.
    filters = inbox.locator(".inbox-filters button")
    boxes = [filters.nth(i).bounding_box() for i in range(filters.count())]
    assert all(a and b and b["x"] >= a["x"] + a["width"] + 4 for a, b in pairwise(boxes))
    pressed = inbox.get_by_role("button", name="Assigned to me")
    expect(pressed).to_have_attribute("aria-pressed", "true")
    look = "el => getComputedStyle(el).backgroundColor + getComputedStyle(el).borderColor"
    others = {filters.nth(i).evaluate(look) for i in range(filters.count())} - {
        pressed.evaluate(look)
    }
    assert len(others) == 1  # every other filter alike, the pressed one apart
    history = block(page, later.id).locator("details.trail")
    history.get_by_text("History").click()
    history.get_by_role("button", name="Claim").click()
    expect(history.locator(".trail-policy")).to_contain_text(f"being handled by {ben.name}")
    expect(history.get_by_role("button", name="Release")).to_be_visible()
    inbox.get_by_role("button", name="All").click()
    block(page, sooner.id).get_by_role("button", name="Yes").click()
    expect(block(page, sooner.id)).to_have_attribute("data-status", "answered")
    expect(page.locator("#pending-badge")).to_have_text("1")
    assert ann.record(sooner.id).answered_by == ben.name
    assert ann.record(later.id).status == "pending"

    asker = ann.open("/confirmations")  # the requester: one of hers, one for someone else
    expect(asker.locator("#pending-badge")).to_have_text("1")
    expect(block(asker, own.id).get_by_role("button", name="Yes")).to_be_visible()
    waiting = asker.locator("section.inbox-others")
    theirs = waiting.locator(f'article.block[data-request-id="{later.id}"]')
    expect(theirs.locator(".notice--waiting")).to_have_text(f"Waiting for {ben.name}")
    expect(theirs.get_by_role("button", name="Yes")).to_have_count(0)
    theirs.get_by_text("History").click()
    expect(theirs.locator(".trail-policy")).to_contain_text(f"being handled by {ben.name}")
    expect(theirs.get_by_role("button", name="Claim")).to_have_count(0)


def test_a_queue_is_cleared_in_one_go_and_by_keyboard(
    person: Callable[..., Person], store: Store
) -> None:
    """Twenty confirms selected and approved together, the one that waits for someone else
    reported with why; then j/y/n decide the next ones from the keyboard."""
    ann, ben = person("ann"), person("ben")
    chat = ann.conversation("Queue")
    asked = [ann.ask(chat, "confirm", f"Deploy {n}?") for n in range(19)]
    claimed = ann.ask(chat, "confirm", "Claimed?", assignees=[ann.name, ben.name])
    with store.unit() as u:
        u.accountability.claim(claimed.id, user=ben.name)
    page = ann.open("/confirmations")
    inbox = page.locator("section.inbox")
    expect(inbox.locator(".inbox-keys")).to_contain_text("j next · k previous · y yes · n no")
    boxes = inbox.locator("input.inbox-select")
    expect(boxes).to_have_count(19)  # the claimed one is not hers to answer now
    with store.unit() as u:
        u.accountability.release(claimed.id, user=ben.name)
    page.reload()
    expect(boxes).to_have_count(20)
    for n in range(20):
        boxes.nth(n).check()
    with store.unit() as u:
        u.accountability.claim(claimed.id, user=ben.name)  # taken meanwhile
    inbox.get_by_role("button", name="Yes to selected").click()
    result = inbox.locator(".inbox-bulk-result")
    expect(result).to_contain_text("Answered 19 of 20.")
    expect(result).to_contain_text(f"“Claimed?” — this request is being handled by {ben.name}.")
    assert all(ann.record(r.id).answer is True for r in asked)
    assert ann.record(claimed.id).status == "pending"

    first = ann.ask(chat, "confirm", "Keys one?")
    second = ann.ask(chat, "confirm", "Keys two?")
    expect(block(page, second.id)).to_be_visible()
    inbox.get_by_role("heading", name="Waiting for you").focus()
    page.keyboard.press("j")  # the answered ones are passed over: the claimed one is first
    expect(block(page, claimed.id)).to_be_focused()
    page.keyboard.press("j")
    expect(block(page, first.id)).to_be_focused()
    page.keyboard.press("y")
    expect(block(page, first.id)).to_have_attribute("data-status", "answered")
    expect(block(page, second.id)).to_be_focused()
    page.keyboard.press("n")
    expect(block(page, second.id)).to_have_attribute("data-status", "answered")
    assert (ann.record(first.id).answer, ann.record(second.id).answer) == (True, False)
