"""A web chat that feels finished: deliberate empty answers, a stable order, focus kept,
words instead of raw values, Markdown, the pages around the chat, shared requests."""

from __future__ import annotations

import secrets
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, Route, expect

from pawflow.clock import FakeClock
from pawflow.server.credentials import issue_signin_link
from pawflow.store import Question, Store, open_store
from tests.served import Served
from tests.webchat.conftest import Person, block

pytestmark = pytest.mark.slow


def _answer_of(ann: Person, request_id: str) -> Any:
    return ann.record(request_id).answer


# -- empty answers, focus, cancelling --------------------------------------------------------


def test_an_empty_answer_needs_a_second_deliberate_click(person: Callable[..., Person]) -> None:
    ann = person()
    chat = ann.conversation("Empty")
    note = ann.ask(chat, "text", "Anything to add?")
    tools = ann.ask(chat, "multi", "Which tools?", options=["git", "jira"])
    page = ann.open_conversation(chat)

    asked = block(page, note.id)
    asked.get_by_role("button", name="Send").click()
    expect(asked.get_by_text("Send an empty answer?")).to_be_visible()
    assert ann.record(note.id).status == "pending"  # one click stored nothing
    asked.get_by_role("button", name="Keep editing").click()
    expect(asked.get_by_label("Your answer")).to_be_focused()
    asked.get_by_role("button", name="Send").click()
    asked.get_by_role("button", name="Send it empty").click()
    expect(asked).to_have_attribute("data-status", "answered")
    assert _answer_of(ann, note.id) == ""

    chosen = block(page, tools.id)
    chosen.get_by_role("button", name="Validate").click()
    expect(chosen.get_by_text("Send with nothing chosen?")).to_be_visible()
    assert ann.record(tools.id).status == "pending"
    chosen.get_by_role("button", name="Send with none chosen").click()
    expect(chosen).to_have_attribute("data-status", "answered")
    assert _answer_of(ann, tools.id) == []


def test_answering_from_the_keyboard_keeps_the_focus_on_the_block(
    person: Callable[..., Person],
) -> None:
    ann = person()
    chat = ann.conversation("Keys")
    asked = ann.ask(chat, "confirm", "Ship it?")
    named = ann.ask(chat, "text", "Release name?")
    page = ann.open_conversation(chat)

    block(page, asked.id).get_by_role("button", name="Yes").focus()
    page.keyboard.press("Enter")
    expect(block(page, asked.id)).to_have_attribute("data-status", "answered")
    expect(block(page, asked.id)).to_be_focused()

    block(page, named.id).get_by_label("Your answer").fill("Otter")
    page.keyboard.press("Enter")
    expect(block(page, named.id)).to_have_attribute("data-status", "answered")
    expect(block(page, named.id)).to_be_focused()


def test_the_owner_cancels_a_pending_request_from_its_block(
    person: Callable[..., Person],
) -> None:
    ann = person()
    chat = ann.conversation("Cancel")
    asked = ann.ask(chat, "confirm", "Order the cake?")
    page = ann.open_conversation(chat)
    shown = block(page, asked.id)
    shown.get_by_role("button", name="Cancel request").click()
    assert ann.record(asked.id).status == "pending"  # it asks first
    shown.get_by_role("button", name="Cancel the request").click()
    expect(shown).to_have_attribute("data-status", "cancelled")
    expect(shown).to_contain_text("Cancelled by you")
    assert ann.record(asked.id).status == "cancelled"


def test_a_shared_request_says_who_answered(person: Callable[..., Person]) -> None:
    ann = person("ann")
    bob = person("bob")
    chat = ann.conversation("Shared")
    ann.api.share_conversation(chat, bob.name, "write")
    bob.api.accept_invitation(chat)
    theirs = ann.ask(chat, "confirm", "Book the room?")
    mine = ann.ask(chat, "confirm", "Order lunch?")
    page = ann.open_conversation(chat)
    bob.api.respond_interaction(theirs.id, True)  # a collaborator answers
    expect(block(page, theirs.id)).to_contain_text(f"Answered by {bob.name} through the API")
    block(page, mine.id).get_by_role("button", name="No").click()
    expect(block(page, mine.id)).to_contain_text("Answered by you in its block")
    assert ann.record(mine.id).answered_via == "button"
    typed = ann.ask(chat, "confirm", "Book the train?")
    expect(block(page, typed.id)).to_be_visible()
    ann.api.send_message(chat, "yes please")  # a typed answer, read by the chat
    expect(block(page, typed.id)).to_contain_text("Answered by you in the chat")
    expect(page.get_by_text("Taking yes for 'Book the train?'")).to_be_visible()


# -- order -----------------------------------------------------------------------------------


def test_blocks_of_one_millisecond_keep_one_order_and_follow_their_message(
    person: Callable[..., Person],
) -> None:
    ann = person()
    chat = ann.conversation("Order")
    page = ann.open_conversation(chat)
    frozen = FakeClock(datetime.now(UTC))
    with open_store(ann.served.db, clock=frozen) as same_instant:
        made = [
            same_instant.ask(Question(ann.name, chat, "confirm", f"Question {n}?")).interaction.id
            for n in range(5)
        ]
        # An agent asks first, then says what it asked: the block goes after its message.
        frozen.advance(timedelta(milliseconds=1))
        picked = same_instant.ask(
            Question(ann.name, chat, "choice", "Which region?", options=["eu", "us"])
        ).interaction
        frozen.advance(timedelta(milliseconds=1))
        with same_instant.unit() as u:
            u.messages.append_message(
                chat,
                content="Before I deploy, I need one answer from you.",
                role="assistant",
                author="deployer",
                data={"request_id": picked.id},
            )
    expected = [*made, "message", picked.id]  # in the order they were asked

    def shown(on: Page) -> list[str]:
        items = on.locator("ol.timeline > li")
        expect(items).to_have_count(7)
        return [
            str(item.get_attribute("data-request-id") or "message")
            for item in items.locator("article").all()
        ]

    assert shown(page) == expected  # as they arrived live
    page.reload()
    assert shown(page) == expected  # and as read back


# -- words, not raw values -------------------------------------------------------------------


def test_requests_read_in_words(person: Callable[..., Person]) -> None:
    ann = person()
    chat = ann.conversation("Words")
    flight = ann.ask(
        chat,
        "choice",
        "Which flight?",
        options=[{"value": "kl1008", "label": "KL 1008 to Amsterdam"}, "af1234"],
        ui_surface={
            "contract": "pawflow.ui-surface.v1",
            "type": "table",
            "fallback": "choice",
            "columns": [{"key": "flight", "label": "Flight"}],
            "rows": [
                {"value": "kl1008", "cells": {"flight": "KL 1008 to Amsterdam"}},
                {"value": "af1234", "cells": {"flight": "AF 1234 to Paris"}},
            ],
        },
    )
    ticket = ann.ask(
        chat,
        "text",
        "Ticket?",
        response_schema={"type": "string", "pattern": "^[A-Z]{3}-\\d{4}$"},
    )
    receipt = ann.ask(
        chat,
        "file",
        "Your receipt (5 MB at most)?",
        response_schema={"maxBytes": 5_000_000, "mediaTypes": ["application/pdf", "image/*"]},
    )
    expense = ann.ask(
        chat,
        "form",
        "Expense?",
        response_schema={
            "type": "object",
            "properties": {
                "amount": {"type": "number", "title": "Amount", "x-pawflow-currency": "EUR"},
                "code": {
                    "type": "string",
                    "title": "Cost centre",
                    "pattern": "^CC\\d+$",
                    "x-pawflow-hint": "your cost centre, such as CC12",
                },
            },
        },
    )
    approval = ann.ask(
        chat,
        "confirm",
        "Allow deployer to run rollback?",
        ui_surface={
            "contract": "pawflow.ui-surface.v1",
            "type": "card",
            "fallback": "confirm",
            "title": "deployer wants to run rollback",
            "fields": [{"label": "environment", "value": "production"}],
            "actions": [
                {"label": "Allow", "value": True, "style": "primary"},
                {"label": "Don't allow", "value": False},
            ],
        },
    )
    page = ann.open_conversation(chat)

    block(page, flight.id).get_by_role("button", name="Choose KL 1008 to Amsterdam").click()
    expect(block(page, flight.id)).to_contain_text("Answered by you")
    expect(block(page, flight.id).locator(".answer-value")).to_have_text("KL 1008 to Amsterdam")

    asked = block(page, ticket.id)
    expect(asked.locator(".hint")).to_have_text("like ABC-1234")
    asked.get_by_label("Your answer").fill("abc")
    asked.get_by_role("button", name="Send").click()
    expect(asked.locator(".field-error")).to_have_text("does not have the expected format")

    expect(block(page, receipt.id).locator(".hint")).to_have_text(
        "a PDF or an image · at most 5 MB"
    )

    form = block(page, expense.id)
    expect(form.locator(".field--decimal .hint")).to_have_text("an amount in € (EUR)")
    expect(form.locator(".field--text .hint")).to_have_text("your cost centre, such as CC12")
    form.get_by_label("Amount").fill("42.5")
    form.get_by_label("Cost centre").fill("X1")
    form.get_by_role("button", name="Submit").click()
    expect(form.locator(".field--text .field-error")).to_have_text(
        "does not have the expected format: your cost centre, such as CC12"
    )
    form.get_by_label("Cost centre").fill("CC12")
    form.get_by_role("button", name="Submit").click()
    expect(form.locator(".answer-list dd").first).to_have_text("€42.50")

    card = block(page, approval.id)
    expect(card.locator(".card-title")).to_have_text("deployer wants to run rollback")
    expect(card.locator(".card-fields")).to_contain_text("environment")
    expect(card.locator(".card-fields")).to_contain_text("production")
    expect(card).not_to_contain_text("rollback(")
    card.get_by_role("button", name="Allow", exact=True).click()
    expect(card).to_have_attribute("data-status", "answered")


def test_a_wakeup_reads_as_a_sentence(person: Callable[..., Person]) -> None:
    ann = person()
    chat = ann.conversation("Wakeups")
    with ann.store.unit() as u:
        u.messages.append_message(
            chat,
            content='[agent:deployer] [confirmation:abc] The user answered "Roll back?": true',
            role="system",
            author="agent:deployer",
            data={"wakeup": "w1", "status": "answered", "question": "Roll back?"},
        )
    page = ann.open_conversation(chat)
    timeline = page.locator("ol.timeline")
    expect(timeline).to_contain_text("deployer has your answer and carries on.")
    expect(timeline).not_to_contain_text("[agent:")


@pytest.mark.parametrize(
    ("locale", "placeholder", "typed"),
    [("en-GB", "dd/mm/yyyy", "31/12/2025"), ("en-US", "mm/dd/yyyy", "12/31/2025")],
)
def test_dates_are_typed_as_the_locale_writes_them(
    person: Callable[..., Person], locale: str, placeholder: str, typed: str
) -> None:
    ann = person(locale=locale)
    chat = ann.conversation("Dates")
    asked = ann.ask(chat, "date", "Which day?")
    page = ann.open_conversation(chat)
    field = block(page, asked.id).get_by_label("Date")
    expect(field).to_have_attribute("placeholder", placeholder)
    field.fill(typed)
    block(page, asked.id).get_by_role("button", name="Send").click()
    expect(block(page, asked.id)).to_have_attribute("data-status", "answered")
    assert _answer_of(ann, asked.id) == "2025-12-31"


# -- Markdown --------------------------------------------------------------------------------


def test_assistant_messages_render_markdown_and_html_stays_text(
    person: Callable[..., Person],
) -> None:
    ann = person()
    chat = ann.conversation("Markdown")
    with ann.store.unit() as u:
        u.messages.append_message(
            chat,
            content=(
                "Here is the plan:\n\n1. **Draft** the note\n2. Send it\n\n"
                "<script>alert(1)</script>"
            ),
            role="assistant",
            author="planner",
        )
    page = ann.open_conversation(chat)
    rich = page.locator(".message--assistant .message-content--rich")
    expect(rich.locator("ol > li")).to_have_count(2)
    expect(rich.locator("strong")).to_have_text("Draft")
    expect(rich).to_contain_text("<script>alert(1)</script>")
    expect(page.locator(".message-content script")).to_have_count(0)
    ann.api.send_message(chat, "**mine** stays as typed")
    expect(page.locator(".message--user .message-content")).to_have_text("**mine** stays as typed")


# -- the pages around the chat ---------------------------------------------------------------


def test_the_api_reference_works_offline(person: Callable[..., Person]) -> None:
    ann = person()
    page = ann.context.new_page()
    outside: list[str] = []

    def only_here(route: Route) -> None:
        if route.request.url.startswith(ann.url):
            route.continue_()
        else:
            outside.append(route.request.url)
            route.abort()

    page.route("**/*", only_here)
    page.goto(f"{ann.url}/docs")
    # The reference is a 1.5 MB script drawing a 140 KB document, each request passing through
    # the route above: beside another test run on two cores it took longer than the usual
    # 15 s deadline (once in six runs), so this wait has a longer one.
    expect(page.locator(".swagger-ui .info .title")).to_contain_text("PawFlow", timeout=60_000)
    assert outside == []
    page.close()


def test_the_signin_page_is_styled_and_names_who_signs_in(
    served: Served, store: Store, browser: Browser
) -> None:
    user = f"eve-{secrets.token_hex(3)}"
    link = issue_signin_link(store, user, base_url=served.url, ttl=timedelta(minutes=5))
    context = browser.new_context(locale="en-GB")
    try:
        page = context.new_page()
        page.goto(link)
        expect(page.get_by_role("heading", level=1)).to_have_text(f"Sign in as {user}")
        button = page.get_by_role("button", name="Sign in")
        color = button.evaluate("(el) => getComputedStyle(el).backgroundColor")
        assert color == "rgb(90, 72, 214)"  # the chat's brand colour: the stylesheet applied
        icon = page.evaluate("() => fetch('/favicon.ico').then((r) => r.status)")
        assert icon == 200
        button.click()
        expect(page.locator("#who")).to_have_text(user)
        expect(page.locator('link[rel="icon"]')).to_have_attribute("href", "/favicon.ico")
    finally:
        context.close()


def test_a_toast_does_not_cover_the_timeline(person: Callable[..., Person]) -> None:
    ann = person()
    here = ann.conversation("Here")
    elsewhere = ann.conversation("Elsewhere")
    page = ann.open_conversation(here)
    ann.ask(elsewhere, "confirm", "A question from elsewhere?")
    toast = page.locator(".toast")
    expect(toast).to_be_visible()
    shown = toast.bounding_box()
    timeline = page.locator(".timeline-scroll").bounding_box()
    composer = page.locator("form.composer").bounding_box()
    assert shown is not None and timeline is not None and composer is not None
    for other in (timeline, composer):
        apart = (
            shown["x"] + shown["width"] <= other["x"]
            or other["x"] + other["width"] <= shown["x"]
            or shown["y"] + shown["height"] <= other["y"]
            or other["y"] + other["height"] <= shown["y"]
        )
        assert apart, (shown, other)
