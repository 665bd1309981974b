"""A terminal chat that finishes what it started: a form's yes/no field that Enter leaves
alone, deliberate empty answers, answers and wakeups in words, a header that keeps its
Pending count, an inbox that opens on its first request."""

from __future__ import annotations

import asyncio
from typing import Any

from tests.tui.conftest import (
    User,
    answered_in_store,
    block_of,
    make_app,
    ready_block,
    running,
    until,
)
from tests.tui.test_kinds import answer_with
from textual.pilot import Pilot
from textual.widgets import Static

from pawflow.client import Client
from pawflow.server.testing import LiveServer, free_port
from pawflow.tui import ChatApp
from pawflow.tui.live import Connection
from pawflow.tui.views import MessageItem

TEAMMATE = {
    "type": "object",
    "properties": {
        "laptop": {"type": "boolean", "title": "Needs a laptop"},
        "desk": {"type": "integer", "title": "Desk number"},
        "team": {
            "type": "string",
            "title": "Team",
            "enum": ["platform", "data"],
            "enumNames": ["Platform", "Data"],
        },
    },
}


def shown(widget: Any) -> str:
    """What a widget shows on the screen, line by line."""
    return "\n".join(widget.render_line(y).text for y in range(widget.size.height))


def text_of(widget: Any, selector: str) -> str:
    return " ".join(str(s.render()) for s in widget.query(selector).results(Static))


def test_enter_on_a_yes_no_field_moves_on_and_keeps_the_tick(user: User) -> None:
    record = user.ask("form", "About the new teammate", response_schema=TEAMMATE)

    async def keys(pilot: Pilot[None], app: ChatApp, block: Any) -> None:
        await pilot.press("space")  # ticks "Needs a laptop"
        await pilot.press("enter")  # on to "Desk number", the tick kept
        await pilot.press("1", "2", "ctrl+s")

    assert answer_with(user, record, keys).answer == {"laptop": True, "desk": 12}


def test_an_answered_form_reads_with_titles_and_labels(user: User) -> None:
    record = user.ask("form", "About the new teammate", response_schema=TEAMMATE)
    user.client.respond_interaction(record.id, {"laptop": False, "desk": 4, "team": "data"})

    async def scenario() -> str:
        app = make_app(user)
        async with running(app) as pilot:
            await until(pilot, lambda: app.hydrations > 0 and block_of(app, record.id))
            return text_of(block_of(app, record.id), ".outcome")

    outcome = asyncio.run(scenario())
    assert outcome.endswith(": Needs a laptop: No, Desk number: 4, Team: Data"), outcome


def test_an_empty_answer_needs_a_second_deliberate_enter(user: User) -> None:
    tools = user.ask("multi", "Which tools?", options=["git", "jira"])
    note = user.ask("text", "Anything to add?")

    async def scenario() -> None:
        app = make_app(user)
        async with running(app) as pilot:
            block = await ready_block(pilot, app, tools.id)
            await pilot.press("enter")
            await until(pilot, lambda: "nothing chosen" in text_of(block, ".confirm"))
            assert (await asyncio.to_thread(user.get, tools.id)).status == "pending"
            await pilot.press("space")  # a tick: the question is gone
            await until(pilot, lambda: text_of(block, ".confirm").strip() == "")
            await pilot.press("space", "enter")  # untick, then Enter asks again
            await until(pilot, lambda: "nothing chosen" in text_of(block, ".confirm"))
            await pilot.press("enter")
            assert (await answered_in_store(user, tools.id)).answer == []

            block = await ready_block(pilot, app, note.id)
            await pilot.press("enter")
            await until(pilot, lambda: "empty answer" in text_of(block, ".confirm"))
            assert (await asyncio.to_thread(user.get, note.id)).status == "pending"
            await pilot.press("enter")
            assert (await answered_in_store(user, note.id)).answer == ""

    asyncio.run(scenario())


def test_a_wakeup_reads_as_a_sentence(live: LiveServer, user: User) -> None:
    with live.store.unit() as u:
        u.messages.append_message(
            user.conversation,
            content='[agent:deployer] [confirmation:abc] The user answered "Roll back?": true',
            role="system",
            author="agent:deployer",
            data={"wakeup": "w1", "status": "answered", "question": "Roll back?"},
        )

    async def scenario() -> str:
        app = make_app(user)
        async with running(app) as pilot:
            await until(pilot, lambda: app.hydrations > 0 and app.query(MessageItem))
            return " ".join(shown(item) for item in app.query(MessageItem))

    lines = asyncio.run(scenario())
    assert "deployer has your answer and carries on." in lines
    assert "[agent:" not in lines


def test_the_header_keeps_its_pending_count_while_the_stream_is_down(user: User) -> None:
    user.ask("confirm", "Ship it?")
    # The actions reach the server; the event stream's address answers nothing.
    dead = Client(f"http://127.0.0.1:{free_port()}", user.token)

    async def scenario() -> str:
        app = make_app(user, events_client=dead)
        async with running(app, (100, 30)) as pilot:
            await until(
                pilot,
                lambda: (
                    app.hydrations > 0
                    and app.connection is Connection.RECONNECTING
                    and app.connection_reason
                ),
            )
            await pilot.pause()
            return app.status.render_line(0).text

    try:
        line = asyncio.run(scenario())
    finally:
        dead.close()
    assert "reconnecting" in line
    assert "Pending  1  (Ctrl+P)" in line
    assert "[/" not in line and "[dim" not in line


def test_the_inbox_opens_on_its_first_request(user: User) -> None:
    first = user.ask("confirm", "First?")
    user.ask("text", "Second?")

    async def scenario() -> None:
        app = make_app(user)
        async with running(app) as pilot:
            await until(pilot, lambda: app.hydrations > 0)
            await pilot.press("ctrl+p")
            inbox = await until(pilot, lambda: app.inbox())
            await until(pilot, lambda: block_of(app, first.id))
            await until(
                pilot,
                lambda: app.focused is not None and app.focused in inbox.blocks()[0].query("*"),
            )
            await pilot.press("y")
            assert (await answered_in_store(user, first.id)).answer is True

    asyncio.run(scenario())


def test_a_table_pick_reads_as_its_row(user: User) -> None:
    flights = [
        {"value": "af1234", "cells": {"flight": "AF 1234", "price": "€142"}},
        {"value": "lh0981", "cells": {"flight": "LH 981", "price": "€118"}},
    ]
    record = user.ask(
        "choice",
        "Which flight?",
        options=[row["value"] for row in flights],
        ui_surface={
            "contract": "pawflow.ui-surface.v1",
            "type": "table",
            "columns": [{"key": "flight", "label": "Flight"}, {"key": "price", "label": "Price"}],
            "rows": flights,
            "fallback": "choice",
        },
    )
    user.client.respond_interaction(record.id, "lh0981")

    async def scenario() -> str:
        app = make_app(user)
        async with running(app) as pilot:
            await until(pilot, lambda: app.hydrations > 0 and block_of(app, record.id))
            return text_of(block_of(app, record.id), ".outcome")

    assert asyncio.run(scenario()).endswith(": LH 981")
