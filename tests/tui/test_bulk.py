"""``pawflow chat``'s pending list decides several confirms at once: ticked with Ctrl+T,
answered together with Ctrl+Y (yes) or Ctrl+B (no), each on its own, the refused ones listed
with why."""

from __future__ import annotations

import asyncio
from typing import Any

from tests.tui.conftest import User, block_of, make_app, running, until

from pawflow.tui.views import InboxScreen


def test_ticked_confirms_are_approved_together_and_a_refused_one_says_why(user: User) -> None:
    asked = [user.ask("confirm", f"Ship {name}?") for name in ("alpha", "beta", "gamma")]
    other = user.ask("text", "Why?")
    closed = asked[1]

    async def scenario() -> None:
        app = make_app(user)
        async with running(app) as pilot:
            await until(pilot, lambda: app.hydrations > 0)
            await pilot.press("ctrl+p")
            inbox: InboxScreen = await until(pilot, app.inbox)
            await until(pilot, lambda: all(block_of(app, r.id) for r in asked))
            bulk: Any = inbox.query_one("#bulk")
            assert "Ctrl+T ticks a confirm" in str(bulk.render())
            for record in asked:
                block_of(app, record.id).focus_answer()
                await pilot.press("ctrl+t")
            assert inbox.ticked == [r.id for r in asked]
            assert all(block_of(app, r.id).has_class("ticked") for r in asked)
            block_of(app, other.id).focus_answer()  # a text is answered in its own block
            await pilot.press("ctrl+t")
            assert other.id not in inbox.ticked

            # Answered elsewhere meanwhile: that one is refused, the others are answered.
            await asyncio.to_thread(user.client.respond_interaction, closed.id, False)
            await pilot.press("ctrl+y")
            said = await until(pilot, lambda: "Yes to 2 of 3." in str(bulk.render()) and bulk)
            assert "Not answered: 'Ship beta?' — already answered" in str(said.render())
            assert bulk.has_class("refused")

    asyncio.run(scenario())
    records = {r.id: user.get(r.id) for r in asked}
    assert [(records[r.id].status, records[r.id].answer) for r in asked] == [
        ("answered", True),
        ("answered", False),
        ("answered", True),
    ]
    assert {records[r.id].answered_via for r in asked if r.id != closed.id} == {"button"}
