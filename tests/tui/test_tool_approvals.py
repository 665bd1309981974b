"""A tool approval in ``pawflow chat``: the arguments pre-filled with the proposed ones; an
edit the tool's schema refuses comes back beside its argument and the request stays open;
a reject sends its reason."""

from __future__ import annotations

import asyncio
from typing import Any

from tests.tui.conftest import User, answered_in_store, make_app, ready_block, running, until
from textual.widgets import Input, Static

from pawflow.interactions.tool_approval import make_surface
from pawflow.records import Interaction
from pawflow.tui.approvals import ToolApprovalPanel

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "environment": {"type": "string", "enum": ["staging", "production"]},
        "replicas": {"type": "integer", "maximum": 5},
    },
    "required": ["environment"],
    "additionalProperties": False,
}


def approval(user: User) -> Interaction:
    surface = make_surface(
        tool="deploy",
        agent="releaser",
        description="Deploy the service.",
        arguments={"environment": "production", "replicas": 2},
        schema=SCHEMA,
    )
    return user.ask("confirm", "Allow releaser to run deploy?", ui_surface=surface)


def run(user: User, scenario: Any) -> None:
    async def main() -> None:
        app = make_app(user)
        async with running(app) as pilot:
            await scenario(pilot, app)

    asyncio.run(main())


def test_an_edit_is_checked_and_then_sent(user: User) -> None:
    record = approval(user)

    async def scenario(pilot: Any, app: Any) -> None:
        block = await ready_block(pilot, app, record.id)
        panel = block.query_one(ToolApprovalPanel)
        environment = panel.query_one("#argument-environment", Input)
        replicas = panel.query_one("#argument-replicas", Input)
        assert (environment.value, replicas.value) == ("production", "2")

        replicas.value = "50"
        await pilot.click("#approve")
        error = panel.query_one("#arg-replicas .field-error", Static)
        await until(pilot, lambda: "at most 5" in str(error.render()))
        assert user.get(record.id).status == "pending"

        environment.value = "staging"
        replicas.value = "3"
        # A button ignores clicks while it shows its last press (Textual's "-active"); a
        # refusal that comes back sooner must not swallow the second click.
        approve = panel.query_one("#approve")
        await until(pilot, lambda: not approve.has_class("-active"))
        await pilot.click("#approve")
        answered = await answered_in_store(user, record.id)
        assert answered.answer["decision"] == "edit"
        assert answered.answer["arguments"] == {"environment": "staging", "replicas": 3}

    run(user, scenario)


def test_a_reject_sends_its_reason(user: User) -> None:
    record = approval(user)

    async def scenario(pilot: Any, app: Any) -> None:
        block = await ready_block(pilot, app, record.id)
        panel = block.query_one(ToolApprovalPanel)
        panel.query_one("#reason", Input).value = "use staging first"
        await pilot.click("#reject")
        answered = await answered_in_store(user, record.id)
        assert answered.answer["decision"] == "reject"
        assert answered.answer["reason"] == "use staging first"
        outcome = block.query_one(".outcome", Static)
        await until(pilot, lambda: "rejected: use staging first" in str(outcome.render()))

    run(user, scenario)


def test_rules_are_listed_and_revoked_from_the_composer(user: User) -> None:
    record = approval(user)
    user.client.respond_interaction(record.id, {"decision": "approve", "always": "conversation"})
    [rule] = user.client.action("list_approval_rules", conversation_id=user.conversation)["rules"]

    async def scenario(pilot: Any, app: Any) -> None:
        await until(pilot, lambda: app.hydrations > 0)
        composer = app.screen.query_one("#composer", Input)
        said: list[str] = []
        app.notify = lambda message, **_: said.append(message)
        composer.focus()
        composer.value = "/rules"
        await pilot.press("enter")
        await until(pilot, lambda: said)
        assert rule["id"] in said[0] and "releaser may run deploy" in said[0]
        composer.value = f"/revoke {rule['id']}"
        await pilot.press("enter")
        await until(pilot, lambda: len(said) > 1)
        assert said[1].startswith(f"Revoked {rule['id']}")

    run(user, scenario)
    assert user.client.action("list_approval_rules", conversation_id=user.conversation) == {
        "rules": []
    }
