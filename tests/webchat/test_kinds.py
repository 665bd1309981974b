"""Every kind answered through the page and stored normalized; refused answers show the
server's field errors and stay pending; outcomes, surfaces, labels, keyboard, 360 px."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from playwright.sync_api import FilePayload, Page, expect

from pawflow.clock import FakeClock
from pawflow.demo.tour import EXAMPLES
from pawflow.store import open_store
from tests.webchat.conftest import Person, block

pytestmark = pytest.mark.slow

FORM_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Full name", "minLength": 2},
        "email": {"type": "string", "title": "Email", "format": "email"},
        "team": {
            "type": "string",
            "title": "Team",
            "enum": ["platform", "data"],
            "enumNames": ["Platform", "Data"],
        },
        "start": {"type": "string", "format": "date", "title": "First day"},
        "when": {"type": "string", "format": "date-time", "title": "Welcome call"},
        "laptop": {"type": "boolean", "title": "Needs a laptop"},
        "desk": {"type": "integer", "title": "Desk", "minimum": 1},
        "budget": {"type": "number", "title": "Budget"},
        "tools": {
            "type": "array",
            "title": "Tools",
            "items": {"type": "string", "enum": ["git", "jira", "figma"]},
        },
        "bio": {"x-pawflow-kind": "multiline", "type": "string", "title": "About"},
        "photo": {"x-pawflow-kind": "file", "title": "Photo", "mediaTypes": ["image/*"]},
    },
    "required": ["name", "email", "team"],
}

UNLABELLED = """() => [...document.querySelectorAll('button, input, select, textarea')]
  .filter((el) => el.offsetParent !== null || el.type === 'checkbox')
  .filter((el) => {
    const named = el.getAttribute('aria-label') || el.getAttribute('aria-labelledby');
    if (el.tagName === 'BUTTON') return !(named || el.textContent.trim());
    return !(named || (el.labels && el.labels.length));
  })
  .map((el) => el.outerHTML.slice(0, 120))"""


def answered(page: Page, request_id: str) -> None:
    expect(block(page, request_id)).to_have_attribute("data-status", "answered")


def test_every_kind_answered_in_the_page_is_stored_normalized(
    person: Callable[..., Person],
) -> None:
    ann = person()
    chat = ann.conversation("Every kind")
    ask = ann.ask
    confirm = ask(chat, "confirm", "Ship it?")
    choice = ask(
        chat,
        "choice",
        "Format?",
        options=[{"value": "pdf", "label": "PDF"}, {"value": "html", "label": "Web page"}],
    )
    multi = ask(chat, "multi", "Who?", options=["support", "sales", "legal"])
    text = ask(chat, "text", "Project name?")
    multiline = ask(chat, "multiline", "Notes?")
    integer = ask(chat, "integer", "Replicas?")
    decimal = ask(chat, "decimal", "Budget?")
    date = ask(chat, "date", "Start day?")
    moment = ask(chat, "datetime", "Window opens?")
    upload = ask(chat, "file", "Contract?", response_schema={"mediaTypes": ["text/plain"]})
    form = ask(chat, "form", "Teammate?", response_schema=FORM_SCHEMA)
    page = ann.open_conversation(chat)

    block(page, confirm.id).get_by_role("button", name="Yes").click()
    block(page, choice.id).get_by_role("button", name="Web page").click()
    picks = block(page, multi.id)
    picks.get_by_label("legal").check()
    picks.get_by_label("support").check()
    picks.get_by_role("button", name="Validate").click()
    block(page, text.id).get_by_label("Your answer").fill("Apollo")
    block(page, text.id).get_by_role("button", name="Send").click()
    # Tagged apart from a one-line text.
    expect(block(page, multiline.id).locator(".kind-tag")).to_have_text("Long text")
    expect(block(page, text.id).locator(".kind-tag")).to_have_text("Text")
    notes = block(page, multiline.id).get_by_label("Your answer")
    notes.fill("line one\nline two")
    notes.press("Control+Enter")
    block(page, integer.id).get_by_label("Whole number").fill(" 7 ")
    block(page, integer.id).get_by_role("button", name="Send").click()
    block(page, decimal.id).get_by_label("Number").fill("12.50")
    block(page, decimal.id).get_by_role("button", name="Send").click()
    block(page, date.id).get_by_label("Date").fill("2026-12-24")
    block(page, date.id).get_by_role("button", name="Send").click()
    block(page, moment.id).get_by_label("Date and time").fill("2026-12-24T10:30")
    block(page, moment.id).get_by_role("button", name="Send").click()
    contract: FilePayload = {"name": "contract.txt", "mimeType": "text/plain", "buffer": b"signed"}
    block(page, upload.id).get_by_label("File").set_input_files(contract)
    block(page, upload.id).get_by_role("button", name="Upload and send").click()

    fields = block(page, form.id)
    fields.get_by_label("Full name").fill("Ada Lovelace")
    fields.get_by_label("Email").fill("ada@example.org")
    fields.get_by_label("Team").select_option("data")
    fields.get_by_label("First day").fill("2027-01-04")
    fields.get_by_label("Welcome call").fill("2027-01-04T09:00")
    fields.get_by_label("Needs a laptop").check()
    fields.get_by_label("Desk").fill("12")
    fields.get_by_label("Budget").fill("1e3")
    fields.get_by_label("figma").check()
    fields.get_by_label("git").check()
    fields.get_by_label("About").fill("Writes\nprograms")
    photo: FilePayload = {"name": "ada.png", "mimeType": "image/png", "buffer": b"\x89PNG fake"}
    fields.get_by_label("Photo").set_input_files(photo)
    fields.get_by_role("button", name="Submit").click()

    for record in (confirm, choice, multi, text, multiline, integer, decimal, date, moment):
        answered(page, record.id)
    answered(page, upload.id)
    answered(page, form.id)
    stored = {r.id: r.answer for r in ann.api.iter_interactions(conversation_id=chat)}
    assert stored[confirm.id] is True
    assert stored[choice.id] == "html"
    assert stored[multi.id] == ["support", "legal"]
    assert stored[text.id] == "Apollo"
    assert stored[multiline.id] == "line one\nline two"
    assert stored[integer.id] == 7
    assert stored[decimal.id] == "12.5"
    assert stored[date.id] == "2026-12-24"
    assert stored[moment.id] == "2026-12-24T09:30:00Z"  # 10:30 in Paris, in winter
    assert stored[upload.id] == {
        "id": stored[upload.id]["id"],
        "name": "contract.txt",
        "size": 6,
        "media_type": "text/plain",
        "sha256": hashlib.sha256(b"signed").hexdigest(),
    }
    teammate = stored[form.id]
    assert teammate.pop("photo")["name"] == "ada.png"
    assert teammate == {
        "name": "Ada Lovelace",
        "email": "ada@example.org",
        "team": "data",
        "start": "2027-01-04",
        "when": "2027-01-04T08:00:00Z",
        "laptop": True,
        "desk": 12,
        "budget": "1000",
        "tools": ["git", "figma"],
        "bio": "Writes\nprograms",
    }
    # The outcome is drawn from the stored record: labels, not raw values.
    expect(block(page, choice.id)).to_contain_text("Web page")
    expect(block(page, multi.id).locator(".answer-value")).to_have_text("support, legal")
    expect(block(page, form.id).locator(".answer-list")).to_contain_text("Ada Lovelace")
    expect(
        block(page, upload.id).get_by_role("link", name=re.compile("contract.txt"))
    ).to_be_visible()
    expect(page.locator("article.block button")).to_have_count(0)


def test_refused_answers_show_the_servers_errors_beside_the_fields_and_stay_pending(
    person: Callable[..., Person],
) -> None:
    ann = person()
    chat = ann.conversation("Errors")
    replicas = ann.ask(
        chat, "integer", "Replicas?", response_schema={"type": "integer", "maximum": 10}
    )
    form = ann.ask(chat, "form", "Teammate?", response_schema=FORM_SCHEMA)
    page = ann.open_conversation(chat)

    count = block(page, replicas.id)
    count.get_by_label("Whole number").fill("11")
    count.get_by_role("button", name="Send").click()
    expect(count.locator(".field-error")).to_have_text("must be at most 10")
    expect(count.get_by_label("Whole number")).to_have_attribute("aria-invalid", "true")
    expect(count).to_have_attribute("data-status", "pending")
    count.get_by_label("Whole number").fill("2.5")
    count.get_by_role("button", name="Send").click()
    expect(count.locator(".field-error")).to_have_text("expected an integer")
    assert ann.record(replicas.id).status == "pending"

    fields = block(page, form.id)
    fields.get_by_label("Full name").fill("A")
    fields.get_by_label("Email").fill("not an address")
    fields.get_by_label("Desk").fill("0")
    fields.get_by_role("button", name="Submit").click()
    errors = {
        "Full name": "must be at least 2 characters long",
        "Email": "must be an email address",
        "Team": "required",
        "Desk": "must be at least 1",
    }
    for label, message in errors.items():
        holder = fields.locator(".field").filter(has=page.get_by_label(label))
        expect(holder.locator(".field-error")).to_have_text(message)
    expect(fields.get_by_label("Full name")).to_be_focused()
    assert ann.record(form.id).status == "pending"

    fields.get_by_label("Full name").fill("Al")
    fields.get_by_label("Email").fill("al@example.org")
    fields.get_by_label("Team").select_option("platform")
    fields.get_by_label("Desk").fill("")
    fields.get_by_role("button", name="Submit").click()
    answered(page, form.id)
    assert ann.record(form.id).answer == {
        "name": "Al",
        "email": "al@example.org",
        "team": "platform",
        "laptop": False,
    }
    count.get_by_label("Whole number").fill("10")
    count.get_by_role("button", name="Send").click()
    answered(page, replicas.id)
    assert ann.record(replicas.id).answer == 10


def test_cancelled_and_expired_blocks_show_their_outcome_and_offer_nothing(
    person: Callable[..., Person],
) -> None:
    ann = person()
    chat = ann.conversation("Outcomes")
    withdrawn = ann.ask(chat, "confirm", "Still needed?")
    late = ann.ask(chat, "choice", "Which?", options=["a", "b"], expires_in="1d")
    live = ann.ask(chat, "text", "Name?")
    page = ann.open_conversation(chat)
    expect(block(page, late.id)).to_contain_text("expires in 1 day")

    ann.api.cancel_interaction(withdrawn.id)
    # Two days on, the sweeper (here: another process with a clock that moved) expires it.
    later = FakeClock(datetime.now(UTC) + timedelta(days=2))
    with open_store(ann.served.db, clock=later) as sweeping:
        sweeping.sweep()

    expect(block(page, withdrawn.id)).to_have_attribute("data-status", "cancelled")
    expect(block(page, withdrawn.id)).to_contain_text("nothing left to answer")
    expect(block(page, late.id)).to_have_attribute("data-status", "expired")
    expect(block(page, late.id)).to_contain_text("no answer came before the deadline")
    for closed in (withdrawn, late):
        expect(block(page, closed.id).locator("button, input")).to_have_count(0)
    expect(block(page, live.id)).to_have_attribute("data-status", "pending")
    page.reload()
    expect(block(page, late.id)).to_have_attribute("data-status", "expired")
    expect(block(page, live.id).get_by_label("Your answer")).to_be_editable()


def test_surfaces_answer_through_the_requests_kind_and_unknown_ones_fall_back(
    person: Callable[..., Person],
) -> None:
    ann = person()
    chat = ann.conversation("Surfaces")
    table_example, card_example = (e for e in EXAMPLES if "ui_surface" in e)
    table = ann.ask(chat, **table_example)
    card = ann.ask(chat, **card_example)
    rows = [{"value": v, "cells": {"team": v.title()}} for v in ("red", "blue", "green")]
    teams = ann.ask(
        chat,
        "multi",
        "Which teams?",
        options=["red", "blue", "green"],
        ui_surface={
            "contract": "pawflow.ui-surface.v1",
            "type": "table",
            "columns": [{"key": "team", "label": "Team"}],
            "rows": rows,
            "fallback": "multi",
        },
    )
    chart = ann.ask(
        chat,
        "decimal",
        "Forecast for Q3?",
        ui_surface={
            "contract": "pawflow.ui-surface.v1",
            "type": "chart",
            "series": [1, 2, 3],
            "fallback": "decimal",
        },
    )
    page = ann.open_conversation(chat)

    block(page, table.id).get_by_role("button", name="Choose KL 1008").click()
    card_block = block(page, card.id)
    expect(card_block).to_contain_text("1,204 passed")
    card_block.get_by_role("button", name="Merge").click()
    block(page, teams.id).get_by_label("Select Green").check()
    block(page, teams.id).get_by_label("Select Red").check()
    block(page, teams.id).get_by_role("button", name="Validate").click()
    fallback = block(page, chart.id)
    expect(fallback.locator(".notice")).to_contain_text("cannot be shown here")
    fallback.get_by_label("Number").fill("3.10")
    fallback.get_by_role("button", name="Send").click()

    for record in (table, card, teams, chart):
        answered(page, record.id)
    assert ann.record(table.id).answer == "kl1008"
    assert ann.record(card.id).answer is True
    assert ann.record(teams.id).answer == ["red", "green"]
    assert ann.record(chart.id).answer == "3.1"
    expect(block(page, table.id).locator("tr.chosen")).to_contain_text("KL 1008")
    expect(block(page, table.id).locator("button")).to_have_count(0)


def test_every_control_is_labelled_and_answerable_from_the_keyboard(
    person: Callable[..., Person],
) -> None:
    ann = person()
    chat = ann.conversation("Keyboard")
    tour = [ann.ask(chat, **example) for example in EXAMPLES]
    quick = ann.ask(chat, "confirm", "Keyboard only?")
    name = ann.ask(chat, "text", "Your name?")
    page = ann.open_conversation(chat)
    assert page.evaluate(UNLABELLED) == []
    # The Tour's file question takes what it asks for: "(PDF or image, at most 5 MB)".
    [contract] = [asked for asked in tour if asked.kind == "file"]
    assert "(PDF or image, at most 5 MB)" in contract.message
    expect(block(page, contract.id).locator(".hint")).to_have_text(
        "a PDF or an image · at most 5 MB"
    )

    field = block(page, name.id).get_by_label("Your answer")
    field.focus()
    page.keyboard.type("Grace")
    page.keyboard.press("Tab")
    expect(block(page, name.id).get_by_role("button", name="Send")).to_be_focused()
    page.keyboard.press("Enter")
    answered(page, name.id)
    block(page, quick.id).get_by_role("button", name="Yes").focus()
    page.keyboard.press("Enter")
    answered(page, quick.id)
    assert ann.record(name.id).answer == "Grace"

    pending = ann.open("/confirmations")
    expect(pending.locator(".inbox-item")).to_have_count(len(EXAMPLES))
    assert pending.evaluate(UNLABELLED) == []


def test_readable_and_answerable_at_360_pixels(person: Callable[..., Person]) -> None:
    ann = person(viewport={"width": 360, "height": 740}, is_mobile=True, has_touch=True)
    chat = ann.conversation("Phone")
    for example in EXAMPLES:
        ann.ask(chat, **example)
    page = ann.open_conversation(chat)
    fits = "() => document.documentElement.scrollWidth <= window.innerWidth"
    assert page.evaluate(fits)
    expect(page.locator("#sidebar")).to_be_hidden()
    blocks = page.locator("article.block")
    expect(blocks).to_have_count(len(EXAMPLES))
    for index in range(len(EXAMPLES)):
        box = blocks.nth(index).bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 360
    form = page.locator('article.block[data-kind="form"]')
    form.scroll_into_view_if_needed()
    form.get_by_label("Full name").fill("Lin")
    form.get_by_label("Email").fill("lin@example.org")
    form.get_by_label("Team").select_option("product")
    form.get_by_role("button", name="Submit").click()
    expect(form).to_have_attribute("data-status", "answered")
    page.get_by_role("link", name="← Conversations").click()
    expect(page.locator("#sidebar")).to_be_visible()
    assert page.evaluate(fits)


def test_the_example_of_a_date_cannot_be_read_with_day_and_month_swapped(
    person: Callable[..., Person],
) -> None:
    """On 12 February the example was 12/02/2026 (12 February, or 2 December?): it is a
    day past 12 of the month now."""
    ann = person()
    chat = ann.conversation("Dates")
    date = ann.ask(chat, "date", "Start day?")
    ann.context.clock.set_fixed_time(datetime(2026, 2, 12, 9, 30))
    page = ann.open_conversation(chat)
    block(page, date.id).get_by_label("Date").fill("soon")
    block(page, date.id).get_by_role("button", name="Send").click()
    expect(block(page, date.id).locator(".field-error")).to_have_text(
        "Write the date as dd/mm/yyyy, such as 28/02/2026."  # the reader's locale: en-GB
    )
    assert ann.script_errors == []
