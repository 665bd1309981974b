"""``pawflow chat``'s list of what is assigned to the user (Ctrl+G): by name, through a
group, or claimed by them, each under why; answered from there."""

from __future__ import annotations

import asyncio
import secrets

from tests.tui.conftest import User, answered_in_store, block_of, running, until

from pawflow.client import Client
from pawflow.server.testing import LiveServer
from pawflow.tui.app import ChatApp


def test_what_is_assigned_shows_why_and_is_answered_there(live: LiveServer) -> None:
    tag = secrets.token_hex(3)
    bob = User(live.url, live.token(f"bob-{tag}"))
    alice = User(live.url, live.token(f"alice-{tag}"))
    live.store.accountability.add_to_group(f"ops-{tag}", [f"bob-{tag}"])
    mine = alice.ask("confirm", "Ship it?", assignees=[f"bob-{tag}"])
    grouped = alice.ask("confirm", "Roll back?", assignees=[f"group:ops-{tag}"])
    alice.ask("confirm", "Not for Bob", assignees=[f"alice-{tag}"])

    async def scenario() -> None:
        app = ChatApp(bob.client, conversation_id=bob.conversation)
        async with running(app) as pilot:
            await until(pilot, lambda: app.hydrations > 0)
            await pilot.press("ctrl+g")
            assigned = await until(pilot, lambda: app.assigned())
            await until(pilot, lambda: block_of(app, grouped.id))
            shown = [block.record.id for block in assigned.blocks()]
            reasons = [str(w.render()) for w in assigned.query(".why")]
            assert dict(zip(shown, reasons, strict=True)) == {
                mine.id: "assigned to you",
                grouped.id: "assigned to your group",
            }
            block_of(app, mine.id).focus_answer()
            await pilot.press("y")
            assert (await answered_in_store(alice, mine.id)).answered_by == f"bob-{tag}"

    try:
        asyncio.run(scenario())
    finally:
        for person in (alice, bob):
            person.client.close()


def test_the_client_lists_the_inbox_by_filter(live: LiveServer) -> None:
    tag = secrets.token_hex(3)
    with (
        Client(live.url, live.token(f"cy-{tag}")) as cy,
        Client(live.url, live.token(f"di-{tag}")) as di,
    ):
        conversation = cy.create_conversation("c").id
        asked = cy.request_interaction(conversation, "confirm", "Go?", assignees=[f"di-{tag}"])
        assert [(r.id, why) for r, why in di.list_inbox()] == [(asked.id, "mine")]
        assert di.list_inbox("claimed") == []
        assert cy.list_inbox() == []
