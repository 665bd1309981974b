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
    with live.store.unit() as u:
        u.groups.add_members(f"ops-{tag}", [f"bob-{tag}"])
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


def test_the_count_is_what_waits_for_you_and_the_rest_says_for_whom(live: LiveServer) -> None:
    """An assignee through a group counts the request and answers it; its requester sees it
    "Waiting for group:…" with no controls, and it is not in her Pending count."""
    tag = secrets.token_hex(3)
    lee = User(live.url, live.token(f"lee-{tag}"))
    ann = User(live.url, live.token(f"ann-{tag}"))
    with live.store.unit() as u:
        u.groups.add_members(f"leads-{tag}", [f"lee-{tag}"])
    theirs = ann.ask("confirm", "Deploy?", assignees=[f"group:leads-{tag}"])
    own = ann.ask("confirm", "Lunch?")

    async def scenario() -> None:
        app = ChatApp(ann.client, conversation_id=ann.conversation)
        async with running(app) as pilot:
            await until(pilot, lambda: app.hydrations > 0 and block_of(app, theirs.id))
            assert [r.id for r in app.state.pending()] == [own.id]
            waiting = block_of(app, theirs.id)
            assert [str(w.render()) for w in waiting.query(".note")] == [
                f"Waiting for group:leads-{tag}"
            ]
            assert not waiting.query(".controls")
            assert block_of(app, own.id).query(".controls")
        app = ChatApp(lee.client)
        async with running(app) as pilot:
            await until(pilot, lambda: app.hydrations > 0)
            assert [r.id for r in app.state.pending()] == [theirs.id]
            await pilot.press("ctrl+p")
            await until(pilot, lambda: app.inbox() and block_of(app, theirs.id))
            block_of(app, theirs.id).focus_answer()
            await pilot.press("y")
            assert (await answered_in_store(ann, theirs.id)).answered_by == f"lee-{tag}"

    try:
        asyncio.run(scenario())
    finally:
        for person in (ann, lee):
            person.client.close()


def test_a_refusal_says_whom_the_request_waits_for(live: LiveServer) -> None:
    """Lee, a member of Ann's conversation, leaves the group after her app drew the request's
    controls: her answer is refused with the server's 403, which the block says (whom it
    waits for), and nothing is taken."""
    tag = secrets.token_hex(3)
    lee = User(live.url, live.token(f"lee-{tag}"))
    ann = User(live.url, live.token(f"ann-{tag}"))
    ann.client.share_conversation(ann.conversation, f"lee-{tag}", "write")
    lee.client.accept_invitation(ann.conversation)
    group = f"leads-{tag}"
    with live.store.unit() as u:
        u.groups.add_members(group, [f"lee-{tag}"])
    theirs = ann.ask("confirm", "Deploy?", assignees=[f"group:{group}"])

    async def scenario() -> None:
        app = ChatApp(lee.client)
        async with running(app) as pilot:
            await until(pilot, lambda: app.hydrations > 0)
            await pilot.press("ctrl+p")
            await until(pilot, lambda: app.inbox() and block_of(app, theirs.id))
            with live.store.unit() as u:
                u.groups.remove_members(group, [f"lee-{tag}"])
            block = block_of(app, theirs.id)
            block.focus_answer()
            await pilot.press("y")
            error = await until(pilot, lambda: block.query_one(".block-error").said)
            assert error == (
                f"✕ Not yours to answer: this request waits for group:{group}. Nothing was sent."
            )

    try:
        asyncio.run(scenario())
    finally:
        for person in (ann, lee):
            person.client.close()
    assert live.store.get_interaction(theirs.id, user=f"ann-{tag}").status == "pending"
