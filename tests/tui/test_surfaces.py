"""Rich surfaces in the terminal, each type on its three paths: drawn natively, the declared
fallback kind, or an explicit hand-off to the web chat. Never a silent accept."""

from __future__ import annotations

import asyncio
import io
import json
from typing import Any

from rich.console import Console
from tests.tui.conftest import SIZE, User, answered_in_store, make_app, ready_block, running, until
from textual.widgets import Static

from pawflow.records import Interaction
from pawflow.server.testing import LiveServer
from pawflow.store.engine.database import sql
from pawflow.tui.inputs import ChoiceInput, ConfirmInput
from pawflow.tui.surfaces import SurfaceCard, SurfaceTable, card_renderable

FLIGHTS = [
    {"value": "af1234", "cells": {"flight": "AF 1234", "price": "€142"}},
    {"value": "kl1008", "cells": {"flight": "KL 1008", "price": "€96"}},
]
TABLE = {
    "contract": "pawflow.ui-surface.v1",
    "type": "table",
    "title": "Flights",
    "columns": [{"key": "flight", "label": "Flight"}, {"key": "price", "label": "Price"}],
    "rows": FLIGHTS,
    "fallback": "choice",
}
WIDE = {
    **TABLE,
    "columns": [{"key": f"c{i}", "label": f"Column number {i}"} for i in range(8)],
    "rows": [{"value": row["value"], "cells": {}} for row in FLIGHTS],
}
CARD = {
    "contract": "pawflow.ui-surface.v1",
    "type": "card",
    "title": "Update httpx",
    "fields": [{"label": "Tests", "value": "1,204 passed"}],
    "actions": [
        {"label": "Merge", "value": True, "style": "primary"},
        {"label": "Not now", "value": False},
    ],
    "fallback": "confirm",
}


def flights(user: User, surface: dict[str, Any]) -> Interaction:
    return user.ask("choice", "Which flight?", options=["af1234", "kl1008"], ui_surface=surface)


def rewrite_surface(live: LiveServer, request_id: str, surface: dict[str, Any]) -> None:
    """Store a surface as a newer server version would have published it."""
    with live.store.transaction() as tx:
        sql(tx).execute(
            "UPDATE interactions SET ui_surface = ? WHERE id = ?", (json.dumps(surface), request_id)
        )


def run(user: User, record: Interaction, scenario: Any, size: tuple[int, int] = SIZE) -> None:
    async def main() -> None:
        app = make_app(user)
        async with running(app, size) as pilot:
            await scenario(pilot, app)

    asyncio.run(main())


def handoff_shown(user: User, record: Interaction, keys: tuple[str, ...]) -> None:
    async def scenario(pilot: Any, app: Any) -> None:
        await until(pilot, lambda: app.hydrations > 0 and app.screen.query(f"#request-{record.id}"))
        block = app.screen.query_one(f"#request-{record.id}")
        text = str(block.query_one(".handoff", Static).render())
        assert f"{user.client.server}/?c={record.conversation_id}" in text
        assert record.id in text
        assert not block.query("FieldBox, SurfaceTable, SurfaceCard, Button")
        block.focus()
        await pilot.press(*keys)
        await pilot.pause()

    run(user, record, scenario)
    assert user.get(record.id).status == "pending"


# -- tables ---------------------------------------------------------------------------------


def test_table_native_pick_per_row(user: User) -> None:
    record = flights(user, TABLE)

    async def scenario(pilot: Any, app: Any) -> None:
        block = await ready_block(pilot, app, record.id)
        assert isinstance(app.focused, SurfaceTable)
        assert not block.query(ChoiceInput)  # the table itself answers
        await pilot.press("down", "enter")
        assert (await answered_in_store(user, record.id)).answer == "kl1008"

    run(user, record, scenario)


def test_table_native_multi_ticks_rows(user: User) -> None:
    surface = {**TABLE, "fallback": "multi"}
    record = user.ask("multi", "Which?", options=["af1234", "kl1008"], ui_surface=surface)

    async def scenario(pilot: Any, app: Any) -> None:
        await ready_block(pilot, app, record.id)
        assert isinstance(app.focused, SurfaceTable)
        await pilot.press("down", "space", "enter")
        assert (await answered_in_store(user, record.id)).answer == ["kl1008"]

    run(user, record, scenario)


def test_table_too_wide_falls_back_to_the_choice(user: User) -> None:
    record = flights(user, WIDE)

    async def scenario(pilot: Any, app: Any) -> None:
        block = await ready_block(pilot, app, record.id)
        assert not block.query(SurfaceTable)
        note = str(block.query_one(".note", Static).render())
        assert "not shown here" in note and "columns" in note
        assert isinstance(app.focused, ChoiceInput)
        await pilot.press("1")
        assert (await answered_in_store(user, record.id)).answer == "af1234"

    run(user, record, scenario)


def test_table_of_a_newer_contract_hands_off(user: User, live: LiveServer) -> None:
    record = flights(user, TABLE)
    rewrite_surface(live, record.id, {**TABLE, "contract": "pawflow.ui-surface.v2"})
    handoff_shown(user, record, ("1", "enter"))


# -- cards ----------------------------------------------------------------------------------


def test_card_native_action_buttons(user: User) -> None:
    record = user.ask("confirm", "Merge?", ui_surface=CARD)

    async def scenario(pilot: Any, app: Any) -> None:
        block = await ready_block(pilot, app, record.id)
        assert block.query(SurfaceCard) and not block.query(ConfirmInput)
        card = block.query_one(SurfaceCard)
        console = Console(width=80, record=True, file=io.StringIO())
        console.print(card_renderable(card.surface))
        assert "1,204 passed" in console.export_text()
        await pilot.press("tab", "enter")  # "Not now"
        assert (await answered_in_store(user, record.id)).answer is False

    run(user, record, scenario)


def test_card_in_a_narrow_terminal_falls_back_to_the_confirm(user: User) -> None:
    record = user.ask("confirm", "Merge?", ui_surface=CARD)

    async def scenario(pilot: Any, app: Any) -> None:
        block = await ready_block(pilot, app, record.id)
        assert not block.query(SurfaceCard)
        assert "not shown here" in str(block.query_one(".note", Static).render())
        await pilot.press("y")
        assert (await answered_in_store(user, record.id)).answer is True

    run(user, record, scenario, size=(60, 50))


def test_card_without_a_usable_fallback_hands_off(user: User, live: LiveServer) -> None:
    record = user.ask("confirm", "Merge?", ui_surface=CARD)
    rewrite_surface(live, record.id, {**CARD, "type": "gauge", "fallback": "choice"})
    handoff_shown(user, record, ("y",))


def test_unknown_surface_type_falls_back(user: User) -> None:
    chart = {"contract": "pawflow.ui-surface.v1", "type": "chart", "fallback": "confirm"}
    record = user.ask("confirm", "Scale up?", ui_surface=chart)

    async def scenario(pilot: Any, app: Any) -> None:
        block = await ready_block(pilot, app, record.id)
        assert "'chart'" in str(block.query_one(".note", Static).render())
        await pilot.press("y")
        assert (await answered_in_store(user, record.id)).answer is True

    run(user, record, scenario)
