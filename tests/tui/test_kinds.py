"""Every kind answered with keystrokes in the app, stored normalized by a real server; the
server's refusals shown beside the inputs while the request stays pending."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from tests.tui.conftest import User, answered_in_store, make_app, ready_block, running, until
from textual.pilot import Pilot
from textual.widgets import Static

from pawflow.records import Interaction
from pawflow.tui import ChatApp

Keys = Callable[[Pilot[None], ChatApp, Any], Awaitable[None]]


def answer_with(user: User, record: Interaction, keys: Keys) -> Interaction:
    """Open the app, focus the request with Ctrl+N, run ``keys``; the stored record."""

    async def scenario() -> Interaction:
        app = make_app(user)
        async with running(app) as pilot:
            block = await ready_block(pilot, app, record.id)
            await keys(pilot, app, block)
            done = await answered_in_store(user, record.id)
            await until(pilot, lambda: block.record.status == "answered")
            await until(pilot, lambda: "Answered" in str(block.query_one(".outcome").render()))
            return done

    return asyncio.run(scenario())


def errors_of(block: Any) -> list[str]:
    return [str(s.render()) for s in block.query(".field-error").results(Static) if str(s.render())]


def test_confirm_with_y_and_n(user: User) -> None:
    yes = user.ask("confirm", "Deploy?")
    no = user.ask("confirm", "Delete?")

    async def press(key: str) -> Callable[[Pilot[None], ChatApp, Any], Awaitable[None]]:
        async def keys(pilot: Pilot[None], app: ChatApp, block: Any) -> None:
            await pilot.press(key)

        return keys

    assert answer_with(user, yes, asyncio.run(press("y"))).answer is True
    assert answer_with(user, no, asyncio.run(press("n"))).answer is False


def test_confirm_with_the_buttons(user: User) -> None:
    record = user.ask("confirm", "Deploy?")

    async def keys(pilot: Pilot[None], app: ChatApp, block: Any) -> None:
        await pilot.press("tab")  # from "Yes" to "No"
        await pilot.press("enter")

    assert answer_with(user, record, keys).answer is False


def test_choice_with_a_digit_and_with_arrows(user: User) -> None:
    options = [{"value": "pdf", "label": "PDF"}, {"value": "csv", "label": "CSV"}, "html"]
    by_digit = user.ask("choice", "Format?", options=options)
    by_arrows = user.ask("choice", "Format again?", options=options)

    async def digit(pilot: Pilot[None], app: ChatApp, block: Any) -> None:
        await pilot.press("2")

    async def arrows(pilot: Pilot[None], app: ChatApp, block: Any) -> None:
        await pilot.press("down", "down", "enter")

    assert answer_with(user, by_digit, digit).answer == "csv"
    assert answer_with(user, by_arrows, arrows).answer == "html"


def test_multi_space_ticks_enter_validates(user: User) -> None:
    record = user.ask("multi", "Notify?", options=["support", "sales", "legal"])

    async def keys(pilot: Pilot[None], app: ChatApp, block: Any) -> None:
        await pilot.press("down", "down", "space", "up", "up", "space", "enter")

    assert answer_with(user, record, keys).answer == ["support", "legal"]


def test_text_and_multiline(user: User) -> None:
    text = user.ask("text", "Name?")
    notes = user.ask("multiline", "Notes?")

    async def line(pilot: Pilot[None], app: ChatApp, block: Any) -> None:
        await pilot.press(*"Apollo", "enter")

    async def lines(pilot: Pilot[None], app: ChatApp, block: Any) -> None:
        await pilot.press(*"one", "enter", *"two", "ctrl+s")

    assert answer_with(user, text, line).answer == "Apollo"
    assert answer_with(user, notes, lines).answer == "one\ntwo"


def test_integer_refused_then_accepted(user: User) -> None:
    record = user.ask(
        "integer", "Replicas?", response_schema={"type": "integer", "minimum": 1, "maximum": 10}
    )

    async def keys(pilot: Pilot[None], app: ChatApp, block: Any) -> None:
        await pilot.press(*"42", "enter")
        await until(pilot, lambda: errors_of(block))
        assert "10" in errors_of(block)[0]
        assert (await asyncio.to_thread(user.get, record.id)).status == "pending"
        await pilot.press("backspace", "backspace", "7", "enter")

    assert answer_with(user, record, keys).answer == 7


def test_decimal_sent_as_typed_and_normalized_by_the_server(user: User) -> None:
    record = user.ask("decimal", "Budget?")

    async def keys(pilot: Pilot[None], app: ChatApp, block: Any) -> None:
        await pilot.press(*"12.50", "enter")

    assert answer_with(user, record, keys).answer == "12.5"


def test_date_and_datetime_in_local_time_sent_in_utc(user: User) -> None:
    day = user.ask("date", "Start?")
    moment = user.ask("datetime", "When?")

    async def date_keys(pilot: Pilot[None], app: ChatApp, block: Any) -> None:
        await pilot.press(*"2031-02-03", "enter")

    async def datetime_keys(pilot: Pilot[None], app: ChatApp, block: Any) -> None:
        await pilot.press(*"2031-07-14 09:30", "enter")

    assert answer_with(user, day, date_keys).answer == "2031-02-03"
    stored = answer_with(user, moment, datetime_keys).answer
    local = datetime(2031, 7, 14, 9, 30).astimezone()
    assert datetime.fromisoformat(stored.replace("Z", "+00:00")) == local
    assert stored.endswith("Z") or stored.endswith("+00:00")
    assert local.astimezone(UTC).hour == int(stored[11:13])


def test_file_path_uploaded_then_answered(
    user: User, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    record = user.ask("file", "Contract?", response_schema={"mediaTypes": ["text/plain"]})
    monkeypatch.setenv("HOME", str(tmp_path))  # typed as ~/…: a short path, a key a character
    (tmp_path / "contract.txt").write_text("signed\n")
    (tmp_path / "picture.png").write_bytes(b"\x89PNG\r\n")

    async def keys(pilot: Pilot[None], app: ChatApp, block: Any) -> None:
        await pilot.press(*"~/picture.png", "enter")
        await until(pilot, lambda: errors_of(block))
        assert (await asyncio.to_thread(user.get, record.id)).status == "pending"
        block.query_one("#answer").value = ""
        await pilot.press(*"~/contract.txt", "enter")

    done = answer_with(user, record, keys)
    assert done.answer["name"] == "contract.txt"
    assert done.answer["size"] == len("signed\n")


FORM = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Full name", "minLength": 2},
        "team": {"type": "string", "enum": ["platform", "data"], "enumNames": ["Platform", "Data"]},
        "start": {"type": "string", "format": "date", "title": "First day"},
        "laptop": {"type": "boolean", "title": "Needs a laptop"},
        "desk": {"type": "integer", "minimum": 1},
    },
    "required": ["name", "team"],
}


def test_form_field_by_field_with_errors_beside_the_fields(user: User) -> None:
    record = user.ask("form", "New teammate", response_schema=FORM)

    async def keys(pilot: Pilot[None], app: ChatApp, block: Any) -> None:
        # name: too short; team left empty; start; laptop ticked; desk 0 (below minimum).
        await pilot.press("A", "enter")  # Enter moves on to the next field
        await pilot.press("tab")  # past the team select, left empty
        await pilot.press(*"2031-02-03", "enter")
        await pilot.press("space", "tab")
        await pilot.press("0", "ctrl+s")
        await until(pilot, lambda: len(errors_of(block)) >= 3)
        boxes = {
            name: str(block.query_one(f"#box-{name} .field-error").render())
            for name in FORM["properties"]
        }
        assert boxes["name"] and boxes["team"] and boxes["desk"]
        assert not boxes["start"] and not boxes["laptop"]
        assert (await asyncio.to_thread(user.get, record.id)).status == "pending"

        # Fixed field by field; the team picked from the select with the keyboard.
        block.query_one("#field-name").focus()
        await pilot.press("end", *"da")  # "Ada"
        block.query_one("#field-team").focus()
        await pilot.press("enter", "down", "down", "enter")
        block.query_one("#field-desk").focus()
        await pilot.press("end", "backspace", "4", "ctrl+s")

    done = answer_with(user, record, keys)
    assert done.answer == {
        "name": "Ada",
        "team": "data",
        "start": "2031-02-03",
        "laptop": True,
        "desk": 4,
    }
