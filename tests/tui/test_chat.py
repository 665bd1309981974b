"""The chat app against a real server: conversations, history, the message box, live events,
the pending inbox and its badge."""

from __future__ import annotations

import asyncio
import gc
import threading
import time
import warnings
from collections.abc import Iterator
from typing import Any

from tests.tui.conftest import (
    User,
    answered_in_store,
    block_of,
    make_app,
    ready_block,
    running,
    shown_status,
    until,
)
from textual.widgets import Input, Static

from pawflow.client import Client
from pawflow.records import Interaction
from pawflow.tui import ChatApp
from pawflow.tui.app import Resync
from pawflow.tui.live import Connection
from pawflow.tui.views import ConversationList, InboxScreen, MessageItem


def test_history_messages_and_a_live_request(user: User) -> None:
    user.client.send_message(user.conversation, "Hello from **before**")

    async def scenario() -> None:
        app = make_app(user)
        async with running(app) as pilot:
            await until(pilot, lambda: app.hydrations > 0 and app.query(MessageItem))
            assert app.view.conversation_id == user.conversation
            await until(pilot, lambda: app.connection is Connection.LIVE)
            assert "live" in str(app.status.render())

            # Typed in the message box, sent with Enter, stored by the server.
            app.query_one("#composer", Input).focus()
            await pilot.press(*"status please", "enter")
            stored = await asyncio.to_thread(user.client.get_history, user.conversation)
            assert [m.content for m in stored][-1] == "status please"
            await until(pilot, lambda: len(app.query(MessageItem)) == 2)

            # A request published while the app runs arrives over the stream.
            record = await asyncio.to_thread(user.ask, "confirm", "Ship it?")
            await until(pilot, lambda: block_of(app, record.id))
            await until(pilot, lambda: "Pending  1 " in str(app.status.render()))

            # Answered elsewhere: the block closes here too.
            await asyncio.to_thread(user.client.respond_interaction, record.id, True)
            await until(pilot, lambda: shown_status(app, record.id) == "answered")
            await until(pilot, lambda: not block_of(app, record.id).query(".controls"))
            outcome = str(block_of(app, record.id).query_one(".outcome").render())
            assert "through the API: Yes" in outcome

    asyncio.run(scenario())


def test_conversation_list_and_new_conversation(user: User) -> None:
    other = user.client.create_conversation("Billing").id
    record = user.client.request_interaction(other, "confirm", "Refund?")

    async def scenario() -> None:
        app = make_app(user)
        async with running(app) as pilot:
            await until(pilot, lambda: app.hydrations > 0)
            listing = app.query_one(ConversationList)
            assert set(listing.ids) >= {user.conversation, other}
            await pilot.press("ctrl+l")
            assert app.focused is listing
            # Down to "Billing" and open it with Enter.
            for _ in range(len(listing.ids)):
                if listing.ids[listing.index or 0] == other:
                    break
                await pilot.press("down")
            await pilot.press("enter")
            await until(
                pilot, lambda: app.view.conversation_id == other and block_of(app, record.id)
            )

            await pilot.press("ctrl+o")
            await until(pilot, lambda: app.view.conversation_id not in (other, user.conversation))
            created = app.view.conversation_id
            listed = await asyncio.to_thread(user.client.list_conversations)
            assert created in {c.id for c in listed}

    asyncio.run(scenario())


def test_pending_inbox_across_conversations(user: User) -> None:
    second = user.client.create_conversation("Second").id
    first = user.ask("confirm", "First?")
    other = user.client.request_interaction(second, "text", "Name?")

    async def scenario() -> None:
        app = make_app(user)
        async with running(app) as pilot:
            await until(pilot, lambda: app.hydrations > 0)
            await pilot.press("ctrl+p")
            await until(pilot, lambda: isinstance(app.screen, InboxScreen))
            inbox = app.screen
            assert isinstance(inbox, InboxScreen)
            await until(
                pilot, lambda: {b.record.id for b in inbox.blocks()} == {first.id, other.id}
            )
            title = str(inbox.query_one("#inbox-title", Static).render())
            assert "2 waiting" in title

            # Answered from the inbox with keystrokes: y on the confirm.
            await ready_block(pilot, app, first.id)
            await pilot.press("y")
            assert (await answered_in_store(user, first.id)).answer is True
            await until(pilot, lambda: "1 waiting" in str(inbox.query_one("#inbox-title").render()))

            # A new request anywhere joins the inbox live.
            third = await asyncio.to_thread(user.client.request_interaction, second, "confirm", "?")
            await until(pilot, lambda: third.id in {b.record.id for b in inbox.blocks()})
            await pilot.press("escape")
            assert not isinstance(app.screen, InboxScreen)

    asyncio.run(scenario())


def test_work_called_off_before_it_starts_leaves_nothing_unfinished(user: User) -> None:
    """Readings of the server that are replaced or cancelled before they start (a second
    resync, quitting) are never left as coroutines that nobody awaited, and hold back no
    live event."""
    record = user.ask("confirm", "Ship?")

    async def scenario() -> None:
        app = make_app(user)
        async with running(app) as pilot:
            await until(pilot, lambda: app.hydrations > 0)
            for _ in range(3):
                app.record_changed(record)
                app.on_resync(Resync())  # each replaces the last, maybe before it started
            app.workers.cancel_all()
            await pilot.pause()
            later = await asyncio.to_thread(user.ask, "confirm", "Asked after the reads?")
            await until(pilot, lambda: block_of(app, later.id) is not None)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        asyncio.run(scenario())
        gc.collect()
    assert [str(w.message) for w in caught if "never awaited" in str(w.message)] == []


def test_a_resync_called_off_while_it_redraws_leaves_the_screen_whole(user: User) -> None:
    """A resync replaced or cancelled at any point (a newer one, quitting) never cancels the
    widgets being redrawn: every row comes back and the app still closes cleanly."""

    async def scenario() -> None:
        app = make_app(user)
        async with running(app) as pilot:
            await until(pilot, lambda: app.hydrations > 0)
            listing = app.conversation_list
            for round_ in range(5):
                await until(pilot, lambda: listing.index is not None)
                worker = app.hydrate()
                # The list's rows are being taken down (``clear`` leaves no row chosen):
                # call the resync off right then, without giving the loop a moment more.
                deadline = time.monotonic() + 15
                while listing.index is not None:
                    assert time.monotonic() < deadline, f"round {round_}: no redraw seen"
                    await asyncio.sleep(0)
                worker.cancel()
            await until(pilot, lambda: listing.index is not None and len(listing.children) == 1)
            assert listing.ids == [user.conversation]

    asyncio.run(scenario())


class HeldRead(Client):
    """A client whose next read of a conversation's requests, once ``armed``, is held after
    the server answered it, until ``release`` is set: a read slowed down on a loaded machine."""

    def __init__(self, url: str, token: str) -> None:
        super().__init__(url, token)
        self.armed = False
        self.read = threading.Event()
        self.release = threading.Event()

    def iter_interactions(self, **filters: Any) -> Iterator[Interaction]:
        if not (self.armed and "conversation_id" in filters):
            return super().iter_interactions(**filters)
        self.armed = False
        found = list(super().iter_interactions(**filters))
        self.read.set()
        self.release.wait(15)
        return iter(found)


def test_what_arrives_live_while_a_read_is_on_its_way_is_not_drawn_over(user: User) -> None:
    """A request asked and a message sent after a resync read the conversation, but before
    it drew what it read, stay on the screen: the late read does not draw over them."""

    async def scenario() -> None:
        client = HeldRead(user.client.server, user.token)
        app = ChatApp(client, conversation_id=user.conversation)
        try:
            async with running(app) as pilot:
                await until(pilot, lambda: app.hydrations > 0 and app.connection is Connection.LIVE)
                client.armed = True
                app.hydrate()
                assert await asyncio.to_thread(client.read.wait, 15)
                asked = await asyncio.to_thread(user.ask, "confirm", "Asked during the read?")
                await asyncio.to_thread(
                    user.client.send_message, user.conversation, "Sent meanwhile"
                )

                def received() -> bool:
                    held = [e.data for e in getattr(app, "held", None) or []]
                    request = block_of(app, asked.id) is not None or any(
                        d.get("id") == asked.id for d in held
                    )
                    message = bool(app.query("#history MessageItem")) or any(
                        d.get("content") == "Sent meanwhile" for d in held
                    )
                    return request and message

                await until(pilot, received)
                client.release.set()
                await until(pilot, lambda: app.hydrations > 1)
                await until(pilot, lambda: block_of(app, asked.id) is not None)
                await until(
                    pilot,
                    lambda: any(
                        "Sent meanwhile" in str(m.message.content) for m in app.query(MessageItem)
                    ),
                )
                assert app.state.pending(user.conversation)[-1].id == asked.id
        finally:
            client.release.set()
            client.close()

    asyncio.run(scenario())


def test_a_resync_redraws_only_what_changed(user: User) -> None:
    """A resync (what a reconnect or a ``reset`` makes) reconciles the open conversation
    with what it read: the answer being typed in a pending request stays, with the focus in
    it; what did not change keeps its widget; what changed while the stream was down is
    updated, and what was said meanwhile is added in its place."""
    user.client.send_message(user.conversation, "Before")
    typed = user.ask("text", "Name?")
    other = user.ask("confirm", "Ship?")

    async def scenario() -> None:
        app = make_app(user)
        async with running(app) as pilot:
            await until(pilot, lambda: app.connection is Connection.LIVE)
            block = await ready_block(pilot, app, typed.id)
            await pilot.press(*"Ada Love")
            field = app.focused
            assert isinstance(field, Input) and field.value == "Ada Love"
            before = app.query_one(MessageItem)

            # The stream stops listening (as a dropped connection) while the server moves on.
            app.live.stop()
            await asyncio.to_thread(user.client.respond_interaction, other.id, True)
            said = await asyncio.to_thread(user.client.send_message, user.conversation, "Later")
            asked = await asyncio.to_thread(user.ask, "confirm", "And this?")

            hydrations = app.hydrations
            app.post_message(Resync())
            await until(pilot, lambda: app.hydrations > hydrations)
            assert app.focused is field and field.value == "Ada Love"
            shown = [child.id for child in app.view.history.children]
            assert shown == [
                f"message-{before.message.id}",
                f"request-{typed.id}",
                f"request-{other.id}",
                f"message-{said.id}",
                f"request-{asked.id}",
            ]
            assert app.query_one(f"#message-{before.message.id}") is before
            assert block_of(app, typed.id) is block
            assert shown_status(app, other.id) == "answered"
            assert not block_of(app, other.id).query(".controls")

            await pilot.press(*"lace", "enter")
            assert (await answered_in_store(user, typed.id)).answer == "Ada Lovelace"

    asyncio.run(scenario())


def test_a_resync_keeps_what_is_typed_in_the_pending_inbox(user: User) -> None:
    """The pending inbox, refilled by a resync, keeps the blocks still pending as they are
    (what is typed, the focus) and drops the ones answered meanwhile."""
    typed = user.ask("text", "Name?")
    other = user.ask("confirm", "Ship?")

    async def scenario() -> None:
        app = make_app(user)
        async with running(app) as pilot:
            await until(pilot, lambda: app.hydrations > 0 and app.connection is Connection.LIVE)
            await pilot.press("ctrl+p")
            inbox = await until(pilot, app.inbox)
            await until(pilot, lambda: len(inbox.blocks()) == 2)
            await ready_block(pilot, app, typed.id)
            await pilot.press(*"Ada")
            field = app.focused
            assert isinstance(field, Input) and field.value == "Ada"

            app.live.stop()
            await asyncio.to_thread(user.client.respond_interaction, other.id, True)
            hydrations = app.hydrations
            app.post_message(Resync())
            await until(pilot, lambda: app.hydrations > hydrations)
            assert [b.record.id for b in inbox.blocks()] == [typed.id]
            assert app.focused is field and field.value == "Ada"
            assert "1 waiting" in str(inbox.query_one("#inbox-title", Static).render())

    asyncio.run(scenario())
