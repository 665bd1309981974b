"""The live connection across a server crash and restart: the state shows the drop, and on
reconnect the pending requests are re-read from the server (what was answered while the
app was cut off closes, what was asked appears), whatever the app held in memory; an answer
being typed meanwhile stays where it is, with the focus."""

from __future__ import annotations

import asyncio
import threading

import pytest
from tests.served import Served
from tests.tui.conftest import block_of, ready_block, running, shown_status, token_for, until
from textual.widgets import Input

from pawflow.client import Client, ServerEvent
from pawflow.store import Question, open_store
from pawflow.testing import eventually
from pawflow.tui import ChatApp
from pawflow.tui.live import Connection, LiveHandlers, LiveStream


@pytest.mark.slow
def test_restart_rehydrates_pending_from_the_server(served: Served) -> None:
    token = token_for(served, "ada")
    client = Client(served.url, token)
    conversation = client.create_conversation("Ops").id
    first = client.request_interaction(conversation, "confirm", "First?")
    typing = client.request_interaction(conversation, "text", "Name?")

    async def scenario() -> None:
        app = ChatApp(client, conversation_id=conversation)
        async with running(app) as pilot:
            await until(
                pilot, lambda: app.connection is Connection.LIVE and block_of(app, first.id)
            )
            await ready_block(pilot, app, typing.id)
            await pilot.press(*"Ada")
            field = app.focused
            assert isinstance(field, Input) and field.value == "Ada"
            hydrations = app.hydrations

            await asyncio.to_thread(served.kill)
            await until(pilot, lambda: app.connection is Connection.RECONNECTING)
            assert "reconnecting" in str(app.status.render())

            # While the server is down, the store moves on without the app.
            with open_store(served.db) as store:
                store.respond_interaction(first.id, True, user="ada")
                second = store.ask(Question("ada", conversation, "text", "Second?")).interaction

            await asyncio.to_thread(served.start)
            await until(pilot, lambda: app.connection is Connection.LIVE, timeout=30)
            await until(pilot, lambda: app.hydrations > hydrations)
            await until(pilot, lambda: block_of(app, second.id))
            await until(pilot, lambda: shown_status(app, first.id) == "answered")
            assert [r.id for r in app.state.pending()] == [typing.id, second.id]
            assert app.focused is field and field.value == "Ada"
            # The header follows the state once the lists are refreshed.
            await until(pilot, lambda: "Pending  2 " in str(app.status.render()))

    try:
        asyncio.run(scenario())
    finally:
        client.close()


@pytest.mark.slow
def test_stream_resumes_from_the_last_event_id(served: Served) -> None:
    """Events written while the stream was down are replayed after it, in order, once."""
    token = token_for(served, "bob")
    client = Client(served.url, token)
    conversation = client.create_conversation("Ops").id
    seen: list[ServerEvent] = []
    states: list[Connection] = []
    reconnects = threading.Event()
    stream = LiveStream(
        Client(served.url, token),
        LiveHandlers(
            on_state=lambda state, _: states.append(state),
            on_event=seen.append,
            on_reconnected=reconnects.set,
            on_reset=lambda: None,
        ),
    )
    stream.start()
    try:
        eventually(lambda: Connection.LIVE in states)
        before = client.request_interaction(conversation, "confirm", "Before?")
        eventually(lambda: any(e.data.get("id") == before.id for e in seen))
        served.kill()
        eventually(lambda: states[-1] is Connection.RECONNECTING)
        with open_store(served.db) as store:
            during = store.ask(Question("bob", conversation, "confirm", "During?")).interaction
        served.start()
        eventually(reconnects.is_set, timeout=30)
        eventually(lambda: any(e.data.get("id") == during.id for e in seen))
        requests = [e.data["id"] for e in seen if e.type == "interaction_request"]
        assert requests == [before.id, during.id]
        assert stream.drops >= 1
    finally:
        stream.stop()
        stream.client.close()
        client.close()
