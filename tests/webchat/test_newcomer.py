"""The web chat as a newcomer first meets it: a question after a list stays out of the list,
a table pick reads as its row, errors speak the words of the hints, a note about a lost
server goes once it is back, and a conversation without an agent says so."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from playwright.sync_api import expect

from pawflow.demo.tour import FLIGHTS
from tests.served import Served
from tests.webchat.conftest import Person, block

pytestmark = pytest.mark.slow


def test_a_closing_question_after_a_list_is_a_paragraph_of_its_own(
    person: Callable[..., Person],
) -> None:
    ann = person()
    chat = ann.conversation("Reports")
    with ann.store.unit() as u:
        u.messages.append_message(
            chat,
            content="Here are the reports:\n\n- Alpha report\n- Beta report\n- Gamma report\n"
            "Which one should I open?",
            role="assistant",
            author="planner",
        )
        u.messages.append_message(
            chat,
            content="From: ada@example.com\nTo: bob@example.com\nSubject: Invoice 42",
            role="assistant",
            author="planner",
        )
    page = ann.open_conversation(chat)
    rich = page.locator(".message--assistant .message-content--rich")
    reports, email = rich.nth(0), rich.nth(1)
    expect(reports.locator("ul > li")).to_have_text(["Alpha report", "Beta report", "Gamma report"])
    expect(reports.locator(":scope > p").last).to_have_text("Which one should I open?")
    expect(email.locator("br")).to_have_count(2)  # one header a line, as written
    assert email.inner_text().splitlines() == [
        "From: ada@example.com",
        "To: bob@example.com",
        "Subject: Invoice 42",
    ]


def test_a_table_pick_reads_as_its_row(person: Callable[..., Person]) -> None:
    ann = person()
    chat = ann.conversation("Flights")
    asked = ann.ask(
        chat,
        "choice",
        "Which flight?",
        options=[row["value"] for row in FLIGHTS],
        ui_surface={
            "contract": "pawflow.ui-surface.v1",
            "type": "table",
            "columns": [
                {"key": "flight", "label": "Flight"},
                {"key": "leaves", "label": "Leaves"},
                {"key": "price", "label": "Price"},
            ],
            "rows": FLIGHTS,
            "fallback": "choice",
        },
    )
    page = ann.open_conversation(chat)
    block(page, asked.id).get_by_role("button", name="Choose LH 981").click()
    expect(block(page, asked.id)).to_have_attribute("data-status", "answered")
    expect(block(page, asked.id).locator(".answer-value")).to_have_text("LH 981")
    assert ann.record(asked.id).answer == "lh0981"


def test_a_date_error_speaks_the_pattern_of_its_hint(person: Callable[..., Person]) -> None:
    ann = person(locale="en-US")
    chat = ann.conversation("Dates")
    asked = ann.ask(chat, "date", "Which day?")
    page = ann.open_conversation(chat)
    asked_block = block(page, asked.id)
    expect(asked_block.locator(".hint")).to_have_text("as mm/dd/yyyy")
    asked_block.get_by_label("Date").fill("next tuesday")
    asked_block.get_by_role("button", name="Send").click()
    error = asked_block.locator(".field-error")
    expect(error).to_contain_text("mm/dd/yyyy")
    expect(error).not_to_contain_text("YYYY-MM-DD")
    assert ann.record(asked.id).status == "pending"


def test_a_file_error_names_kinds_of_file(person: Callable[..., Person]) -> None:
    ann = person()
    chat = ann.conversation("Files")
    asked = ann.ask(
        chat,
        "file",
        "The signed contract?",
        response_schema={"mediaTypes": ["application/pdf", "image/*"], "maxBytes": 5_000_000},
    )
    page = ann.open_conversation(chat)
    asked_block = block(page, asked.id)
    expect(asked_block.locator(".hint")).to_contain_text("a PDF or an image")
    asked_block.get_by_label("File").set_input_files(
        {"name": "notes.txt", "mimeType": "text/plain", "buffer": b"some notes"}
    )
    asked_block.get_by_role("button", name="Upload and send").click()
    error = asked_block.locator(".field-error")
    expect(error).to_have_text("This file is a text file: choose a PDF or an image.")
    assert ann.record(asked.id).status == "pending"


def test_the_unreachable_notes_go_once_the_stream_is_back(
    person: Callable[..., Person], served: Served
) -> None:
    ann = person()
    chat = ann.conversation("Down")
    asked = ann.ask(chat, "text", "What changed?")
    page = ann.open_conversation(chat)
    expect(page.locator("#connection")).to_have_text("Live")

    served.kill()
    try:
        expect(page.locator("#connection")).to_have_text("Reconnecting…")
        asked_block = block(page, asked.id)
        asked_block.get_by_label("Your answer").fill("nothing")
        asked_block.get_by_role("button", name="Send").click()
        expect(asked_block.locator(".block-error")).to_contain_text("cannot be reached")
        composer = page.get_by_role("form", name="Send a message")
        composer.get_by_role("textbox", name="Message").fill("hello?")
        composer.get_by_role("button", name="Send").click()
        note = page.locator(".composer-note")
        expect(note).to_contain_text("cannot be reached")
    finally:
        served.start()
    expect(page.locator("#connection")).to_have_text("Live")
    expect(asked_block.locator(".block-error")).to_be_hidden()
    expect(note).to_have_text("")
    asked_block.get_by_role("button", name="Send").click()  # and it works now
    expect(asked_block).to_have_attribute("data-status", "answered")


def test_a_conversation_without_an_agent_says_so_and_can_get_one(
    person: Callable[..., Person],
) -> None:
    ann = person()
    chat = ann.conversation("Notes")
    page = ann.open_conversation(chat)
    hint = page.locator(".agent-note")
    expect(hint).to_contain_text("No agent answers in this conversation")
    hint.get_by_label("Agent").select_option("deployer")
    hint.get_by_role("button", name="Ask it to answer here").click()
    expect(hint).to_have_text("deployer answers the messages of this conversation.")
    page.get_by_role("textbox", name="Message").fill("hello")
    page.keyboard.press("Enter")
    expect(page.locator(".message--assistant")).to_have_count(1)
    expect(page.locator(".message--assistant .author")).to_have_text("deployer")
