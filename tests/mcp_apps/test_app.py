"""PawFlow's MCP App in an agent host: every kind, the rich surfaces and a tool approval are
answered inside the host's sandboxed frame through ``respond_interaction``
(``answered_via: "mcp-app"``); refused answers show the server's errors beside the fields; an
answer given elsewhere shows in the app; a closed app leaves the question waiting."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

import pytest
from playwright.sync_api import FilePayload, Request, expect

from pawflow.demo.tour import EXAMPLES
from pawflow.interactions.tool_approval import make_surface
from tests.mcp_apps.conftest import Host
from tests.webchat.test_kinds import FORM_SCHEMA
from tests.webchat.test_tool_approvals import SCHEMA as DEPLOY_SCHEMA

pytestmark = pytest.mark.slow

ASK = "request_user_input"
APP_CALLS = {"app_action", "app_upload", "get_interaction"}
"""The tools the app calls through the host: its own two, and the read of its request."""


def answered(host: Host, frame: str) -> None:
    expect(host.block(frame)).to_have_attribute("data-status", "answered")


def sent(host: Host, frame: str) -> None:
    """Wait, as a person would, for ``frame`` to show its answer and the host to size it
    again: an answered block is shorter, so every frame below it moves up, and a click aimed
    at the next one meanwhile lands where that frame no longer is."""
    answered(host, frame)
    host.settled(frame)


def test_every_kind_is_answered_in_the_app_and_stored_normalized(
    host: Callable[[], Host],
) -> None:
    ann = host()
    # The model is shown the six tools; the app's own two are kept for the app.
    assert sorted(ann.tools) == sorted(
        [
            "request_confirmation",
            "request_user_input",
            "get_interaction",
            "list_interactions",
            "cancel_interaction",
            "wait_for_answer",
        ]
    )
    from_frames: list[Request] = []
    ann.page.on(
        "request", lambda r: from_frames.append(r) if r.frame != ann.page.main_frame else None
    )
    dark = {"--color-background-primary": "rgb(12, 34, 56)", "--color-text-primary": "#fafafa"}
    confirm, confirm_id = ann.asked(
        "request_confirmation",
        {"message": "Ship it?"},
        theme="dark",
        styles={"variables": dark},
    )
    choice, choice_id = ann.asked(
        "request_confirmation",
        {
            "message": "Format?",
            "mode": "choice",
            "options": [{"value": "pdf", "label": "PDF"}, {"value": "html", "label": "Web page"}],
        },
    )
    multi, multi_id = ann.asked(
        "request_confirmation",
        {"message": "Who?", "mode": "multi", "options": ["support", "sales", "legal"]},
    )
    text, text_id = ann.asked(ASK, {"kind": "text", "message": "Project name?"})
    multiline, multiline_id = ann.asked(ASK, {"kind": "multiline", "message": "Notes?"})
    integer, integer_id = ann.asked(
        ASK,
        {"kind": "integer", "message": "Replicas?", "response_schema": {"maximum": 10}},
    )
    decimal, decimal_id = ann.asked(ASK, {"kind": "decimal", "message": "Budget?"})
    date, date_id = ann.asked(ASK, {"kind": "date", "message": "Start day?"})
    moment, moment_id = ann.asked(ASK, {"kind": "datetime", "message": "Window opens?"})
    upload, upload_id = ann.asked(
        ASK,
        {"kind": "file", "message": "Contract?", "response_schema": {"mediaTypes": ["text/plain"]}},
    )
    form, form_id = ann.asked(
        ASK, {"kind": "form", "message": "Teammate?", "response_schema": FORM_SCHEMA}
    )

    # The host's theme: its variables become the block's colours.
    dark_block = ann.block(confirm)
    expect(dark_block).to_have_css("background-color", "rgb(12, 34, 56)")
    expect(ann.frame(confirm).locator("html")).to_have_attribute("data-theme", "dark")
    dark_block.get_by_role("button", name="Yes").click()
    sent(ann, confirm)
    ann.block(choice).get_by_role("button", name="Web page").click()
    sent(ann, choice)
    picks = ann.block(multi)
    picks.get_by_label("legal").check()
    picks.get_by_label("support").check()
    picks.get_by_role("button", name="Validate").click()
    sent(ann, multi)
    ann.block(text).get_by_label("Your answer").fill("Apollo")
    ann.block(text).get_by_label("Your answer").press("Enter")
    sent(ann, text)
    notes = ann.block(multiline).get_by_label("Your answer")
    notes.fill("line one\nline two")
    notes.press("Control+Enter")
    sent(ann, multiline)

    # A refused answer: the server's error beside the field, and the request still pending.
    count = ann.block(integer)
    count.get_by_label("Whole number").fill("11")
    count.get_by_role("button", name="Send").click()
    expect(count.locator(".field-error")).to_have_text("must be at most 10")
    expect(count.get_by_label("Whole number")).to_have_attribute("aria-invalid", "true")
    expect(count).to_have_attribute("data-status", "pending")
    assert ann.api.get_interaction(integer_id).status == "pending"
    ann.settled(integer)  # taller now, with its error
    count.get_by_label("Whole number").fill("7")
    count.get_by_role("button", name="Send").click()
    sent(ann, integer)

    ann.block(decimal).get_by_label("Number").fill("12.50")
    ann.block(decimal).get_by_role("button", name="Send").click()
    sent(ann, decimal)
    ann.block(date).get_by_label("Date").fill("2026-12-24")
    ann.block(date).get_by_role("button", name="Send").click()
    sent(ann, date)
    ann.block(moment).get_by_label("Date and time").fill("2026-12-24T10:30")
    ann.block(moment).get_by_role("button", name="Send").click()
    sent(ann, moment)

    # A file the request does not take is refused beside its field (as the web chat does, before
    # it is sent); the right one is kept.
    sending = ann.block(upload)
    wrong: FilePayload = {"name": "contract.pdf", "mimeType": "application/pdf", "buffer": b"%PDF"}
    sending.get_by_label("File").set_input_files(wrong)
    sending.get_by_role("button", name="Upload and send").click()
    expect(sending.locator(".field-error")).to_have_text("This file is a PDF: choose a text file.")
    expect(sending).to_have_attribute("data-status", "pending")
    ann.settled(upload)
    contract: FilePayload = {"name": "contract.txt", "mimeType": "text/plain", "buffer": b"signed"}
    sending.get_by_label("File").set_input_files(contract)
    sending.get_by_role("button", name="Upload and send").click()
    sent(ann, upload)

    fields = ann.block(form)
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
        holder = fields.locator(".field").filter(has=ann.frame(form).get_by_label(label))
        expect(holder.locator(".field-error")).to_have_text(message)
    assert ann.api.get_interaction(form_id).status == "pending"
    ann.settled(form)
    fields.get_by_label("Full name").fill("Ada Lovelace")
    fields.get_by_label("Email").fill("ada@example.org")
    fields.get_by_label("Team").select_option("data")
    fields.get_by_label("Desk").fill("12")
    fields.get_by_label("figma").check()
    photo: FilePayload = {"name": "ada.png", "mimeType": "image/png", "buffer": b"\x89PNG fake"}
    fields.get_by_label("Photo").set_input_files(photo)
    fields.get_by_role("button", name="Submit").click()

    frames = (confirm, choice, multi, text, multiline, integer, decimal, date, moment, upload, form)
    for frame in frames:
        answered(ann, frame)
    ids = (
        confirm_id,
        choice_id,
        multi_id,
        text_id,
        multiline_id,
        integer_id,
        decimal_id,
        date_id,
        moment_id,
        upload_id,
        form_id,
    )
    stored = {request_id: ann.api.get_interaction(request_id) for request_id in ids}
    for record in stored.values():
        assert (record.answered_by, record.answered_via) == (ann.user, "mcp-app")
    answers = {request_id: record.answer for request_id, record in stored.items()}
    assert answers[confirm_id] is True
    assert answers[choice_id] == "html"
    assert answers[multi_id] == ["support", "legal"]
    assert answers[text_id] == "Apollo"
    assert answers[multiline_id] == "line one\nline two"
    assert answers[integer_id] == 7
    assert answers[decimal_id] == "12.5"
    assert answers[date_id] == "2026-12-24"
    assert answers[moment_id] == "2026-12-24T09:30:00Z"  # 10:30 in Paris, in winter
    assert answers[upload_id]["name"] == "contract.txt"
    assert answers[upload_id]["sha256"] == hashlib.sha256(b"signed").hexdigest()
    teammate = answers[form_id]
    assert teammate.pop("photo")["name"] == "ada.png"
    assert teammate == {
        "name": "Ada Lovelace",
        "email": "ada@example.org",
        "team": "data",
        "laptop": False,
        "desk": 12,
        "tools": ["figma"],
    }
    # Each answered once, drawn from the stored record: labels, who and how.
    for request_id in ids:
        audit = ann.api.action("get_interaction", request_id=request_id)["audit"]
        assert [step["via"] for step in audit if step["action"] == "answered"] == ["mcp-app"]
    expect(ann.block(choice)).to_contain_text("Web page")
    expect(ann.block(confirm)).to_contain_text("Answered by you in an MCP app")
    expect(ann.block(upload).get_by_role("link", name="contract.txt")).to_be_visible()
    # The model is told the outcome, and the app called only what apps may call, through the
    # host: the frames themselves asked the network for nothing.
    told = ann.seen(confirm)["contexts"]
    assert told and f"PawFlow request {confirm_id} was answered" in told[-1]["content"][0]["text"]
    calls = {call for frame in frames for call in ann.seen(frame)["calls"]}
    assert calls == APP_CALLS
    assert from_frames == []


def test_a_tool_approval_and_the_rich_surfaces_are_answered_in_the_app(
    host: Callable[[], Host],
) -> None:
    ann = host()

    def approval() -> dict[str, Any]:
        surface = make_surface(
            tool="deploy",
            agent="releaser",
            description="Deploy the service.",
            arguments={"environment": "production", "replicas": 2},
            schema=DEPLOY_SCHEMA,
        )
        message = "Allow releaser to run deploy?"
        return {"kind": "confirm", "message": message, "ui_surface": surface}

    edit, edit_id = ann.asked(ASK, approval())
    approve, approve_id = ann.asked(ASK, approval())
    reject, reject_id = ann.asked(ASK, approval())
    respond, respond_id = ann.asked(ASK, approval())
    table_example, card_example = (e for e in EXAMPLES if "ui_surface" in e)
    table, table_id = ann.asked(ASK, table_example)
    card, card_id = ann.asked(ASK, card_example)

    asked = ann.block(edit)
    expect(asked.locator(".card-title")).to_have_text("releaser wants to run deploy")
    expect(asked.get_by_label("replicas")).to_have_value("2")
    asked.get_by_label("replicas").fill("50")
    asked.get_by_role("button", name="Approve with my edits").click()
    expect(asked.locator(".field--invalid .field-error")).to_have_text("must be at most 5")
    assert ann.api.get_interaction(edit_id).status == "pending"
    ann.settled(edit)
    asked.get_by_label("environment").select_option("staging")
    asked.get_by_label("replicas").fill("3")
    asked.get_by_role("button", name="Approve with my edits").click()
    sent(ann, edit)
    ann.block(approve).get_by_role("button", name="Approve", exact=True).click()
    sent(ann, approve)
    ann.block(reject).get_by_label("Reason (optional)").fill("use staging first")
    ann.block(reject).get_by_role("button", name="Reject").click()
    sent(ann, reject)
    ann.block(respond).get_by_label("Result to give instead").fill("deployed by hand")
    ann.block(respond).get_by_role("button", name="Respond instead").click()
    sent(ann, respond)
    ann.block(table).get_by_role("button", name="Choose KL 1008").click()
    sent(ann, table)
    expect(ann.block(card)).to_contain_text("1,204 passed")
    ann.block(card).get_by_role("button", name="Merge").click()

    for frame in (edit, approve, reject, respond, table, card):
        answered(ann, frame)
    decisions = {
        request_id: ann.api.get_interaction(request_id).answer
        for request_id in (edit_id, approve_id, reject_id, respond_id)
    }
    assert decisions[edit_id]["decision"] == "edit"
    assert decisions[edit_id]["arguments"] == {"environment": "staging", "replicas": 3}
    assert decisions[approve_id]["decision"] == "approve"
    assert (decisions[reject_id]["decision"], decisions[reject_id]["reason"]) == (
        "reject",
        "use staging first",
    )
    assert (decisions[respond_id]["decision"], decisions[respond_id]["text"]) == (
        "respond",
        "deployed by hand",
    )
    assert ann.api.get_interaction(table_id).answer == "kl1008"
    assert ann.api.get_interaction(card_id).answer is True
    for request_id in (edit_id, table_id, card_id):
        assert ann.api.get_interaction(request_id).answered_via == "mcp-app"
    expect(ann.block(reject).locator(".answer-value")).to_have_text("Rejected: use staging first")
    expect(ann.block(edit).locator(".answer-value")).to_contain_text("Approved with edits")
    expect(ann.block(table).locator("tr.chosen")).to_contain_text("KL 1008")


def test_answers_from_elsewhere_show_in_the_app_and_each_request_is_answered_once(
    host: Callable[[], Host],
) -> None:
    ann = host()
    # Answered over HTTP meanwhile: the app, and the same call drawn again, show who and how.
    first, first_id = ann.asked("request_confirmation", {"message": "Deploy on Friday?"})
    again = ann.reopen(first)
    expect(ann.block(again)).to_have_attribute("data-status", "pending")
    ann.api.respond_interaction(first_id, False, via="cli")
    for frame in (first, again):
        answered(ann, frame)
        expect(ann.block(frame)).to_contain_text("Answered by you with pawflow answer")
        expect(ann.block(frame).locator(".answer-value")).to_have_text("No")
    told = ann.seen(first)["contexts"][-1]["content"][0]["text"]
    assert told == f"PawFlow request {first_id} was answered by {ann.user} (cli): false"

    # Two frames of one request, one of them never told (its host relays none of its reads):
    # its answer, second, is refused and the frame shows the first; one answer is kept.
    second, second_id = ann.asked("request_confirmation", {"message": "Roll back?"})
    stale = ann.reopen(second, hold_reads=True)
    ann.block(second).get_by_role("button", name="Yes").click()
    answered(ann, second)
    expect(ann.block(stale)).to_have_attribute("data-status", "pending")
    ann.block(stale).get_by_role("button", name="No").click()
    answered(ann, stale)
    expect(ann.block(stale).locator(".answer-value")).to_have_text("Yes")
    audit = ann.api.action("get_interaction", request_id=second_id)["audit"]
    assert [step["action"] for step in audit].count("answered") == 1
    assert ann.api.get_interaction(second_id).answer is True

    # The host closes the app: the question waits, and is answered anywhere.
    third, third_id = ann.asked(ASK, {"kind": "text", "message": "Release name?"})
    ann.close(third)
    assert ann.api.get_interaction(third_id).status == "pending"
    done = ann.api.respond_interaction(third_id, "Falcon", via="cli")
    assert (done.status, done.answer) == ("answered", "Falcon")
