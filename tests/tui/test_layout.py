"""The terminal chat drawn as the web chat is: a request block after the agent reply that
introduced it, no empty rows inside a block, a form's yes/no field shown whole, "by you"
for the reader's own answers, amounts in the one money format, a tool approval tagged as
one whose Approve says when it carries edits; a redraw that keeps what it can."""

from __future__ import annotations

import asyncio
from typing import Any

from tests.tui.conftest import User, block_of, make_app, running, until
from tests.tui.test_finish import text_of
from textual.app import App
from textual.containers import VerticalScroll
from textual.widget import Widget
from textual.widgets import Button, Checkbox, Input, Static

from pawflow.interactions.tool_approval import make_surface
from pawflow.records import Message
from pawflow.server.testing import LiveServer
from pawflow.tui import ChatApp
from pawflow.tui.blocks import RequestBlock
from pawflow.tui.views import MessageItem, arrange


def _order(app: ChatApp) -> list[str]:
    """The conversation's items top to bottom: message ids and request ids."""
    history = app.view.history
    return [
        child.message.id if isinstance(child, MessageItem) else child.record.id
        for child in history.children
        if isinstance(child, MessageItem | RequestBlock)
    ]


def _reply(live: LiveServer, user: User, request_id: str) -> Message:
    """What an agent says after asking: a reply that introduces the request."""
    with live.store.unit() as u:
        return u.messages.append_message(
            user.conversation,
            content="I've asked where to deploy; I'll carry on when you answer.",
            role="assistant",
            author="deployer",
            data={"request_id": request_id},
        )


def test_a_request_comes_after_the_agent_reply_that_introduced_it(
    live: LiveServer, user: User
) -> None:
    asked = user.ask("choice", "Where to?", options=["staging", "production"])
    reply = _reply(live, user, asked.id)  # written after the request, as an agent does

    async def scenario() -> None:
        app = make_app(user)
        async with running(app) as pilot:
            await until(pilot, lambda: app.hydrations > 0 and block_of(app, asked.id))
            assert _order(app)[-2:] == [reply.id, asked.id]
            # Live: the request arrives first, then the reply; the block moves after it.
            later = await asyncio.to_thread(user.ask, "confirm", "Now?")
            await until(pilot, lambda: block_of(app, later.id))
            said = await asyncio.to_thread(_reply, live, user, later.id)
            await until(pilot, lambda: _order(app)[-2:] == [said.id, later.id])

    asyncio.run(scenario())


def _empty_rows(block: Widget) -> list[int]:
    """The rows inside ``block`` (within its border and padding) where nothing is drawn."""
    inner = block.content_region
    drawn: set[int] = set()
    for widget in block.query("*"):
        if not widget.children and widget.region.height:
            drawn |= set(range(widget.region.y, widget.region.bottom))
    return [y for y in range(inner.y, inner.bottom) if y not in drawn]


def test_blocks_have_no_empty_rows_inside_but_one_before_the_answer(user: User) -> None:
    asked = [
        user.ask("confirm", "Ship it?"),
        user.ask("choice", "Where to?", options=["staging", "production"]),
        user.ask("text", "Release name?"),
    ]

    async def scenario() -> None:
        app = make_app(user)
        async with running(app) as pilot:
            await until(pilot, lambda: app.hydrations > 0 and block_of(app, asked[-1].id))
            await pilot.pause()
            for record in asked:
                block = block_of(app, record.id)
                meta = block.query_one(".meta")
                assert _empty_rows(block) == [meta.region.bottom], record.kind

    asyncio.run(scenario())


def test_a_form_s_yes_no_field_shows_its_whole_label(user: User) -> None:
    schema = {
        "type": "object",
        "properties": {"laptop": {"type": "boolean", "title": "Needs a laptop"}},
    }
    record = user.ask("form", "About the new teammate", response_schema=schema)

    async def scenario() -> None:
        app = make_app(user)
        async with running(app) as pilot:
            await until(pilot, lambda: app.hydrations > 0 and block_of(app, record.id))
            await pilot.pause()
            box = block_of(app, record.id).query_one(Checkbox)
            assert box.label.plain == "Needs a laptop"
            assert box.content_region.width >= len("▐X▌ Needs a laptop")

    asyncio.run(scenario())


def test_answers_read_by_you_and_amounts_as_everywhere(user: User) -> None:
    schema = {"type": "number", "x-pawflow-currency": "EUR"}
    budget = user.ask("decimal", "Budget?", response_schema=schema)
    user.client.respond_interaction(budget.id, "42.5")

    async def scenario() -> str:
        app = make_app(user)
        async with running(app) as pilot:
            await until(pilot, lambda: app.hydrations > 0 and block_of(app, budget.id))
            return text_of(block_of(app, budget.id), ".outcome")

    assert asyncio.run(scenario()) == "✓ Answered by you through the API: €42.50"


def test_a_tool_approval_is_tagged_so_and_says_when_it_carries_edits(user: User) -> None:
    surface = make_surface(
        tool="deploy",
        agent="releaser",
        description="Deploy the service.",
        arguments={"environment": "production"},
        schema={"type": "object", "properties": {"environment": {"type": "string"}}},
    )
    record = user.ask("confirm", "Allow releaser to run deploy?", ui_surface=surface)

    async def scenario() -> None:
        app = make_app(user)
        async with running(app) as pilot:
            await until(pilot, lambda: app.hydrations > 0 and block_of(app, record.id))
            block: Any = block_of(app, record.id)
            assert "Approval" in text_of(block, ".tag")
            approve = block.query_one("#approve", Button)
            assert str(approve.label) == "Approve"
            field = block.query_one("#argument-environment", Input)
            field.value = "staging"
            await until(pilot, lambda: str(approve.label) == "Approve with my edits")
            field.value = "production"
            await until(pilot, lambda: str(approve.label) == "Approve")

    asyncio.run(scenario())


def test_arrange_keeps_the_widgets_it_is_given_and_their_focus() -> None:
    """What a resync draws with: the children become exactly the ones wanted, in order; the
    ones kept are moved, never remounted (the text typed and the focus stay)."""

    class Box(App[None]):
        def compose(self) -> Any:
            yield VerticalScroll(id="box")

    async def scenario() -> None:
        app = Box()
        async with app.run_test() as pilot:
            box = app.query_one("#box", VerticalScroll)
            a, b, c, d = (Static(name, id=name) for name in "abcd")
            field = Input(id="field")
            await arrange(box, [a, field, b, c, d])
            field.focus()
            await pilot.press(*"typed")
            fresh = [Static(name, id=name) for name in ("first", "middle", "last")]
            assert await arrange(box, [fresh[0], c, field, fresh[1], a, fresh[2]])
            assert [child.id for child in box.children] == [
                "first", "c", "field", "middle", "a", "last",
            ]  # fmt: skip
            assert app.focused is field and field.value == "typed"
            assert not b.is_attached and not d.is_attached
            assert not await arrange(box, [a, field])  # nothing mounted
            assert list(box.children) == [a, field] and app.focused is field

    asyncio.run(scenario())
