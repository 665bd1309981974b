"""A token the server stops accepting (revoked while the app runs) or never accepted: the
app says so with the message every command gives, and offers to quit."""

from __future__ import annotations

import asyncio

from tests.tui.conftest import User, make_app, running, until
from textual.widgets import Static

from pawflow.client import Client
from pawflow.server.credentials import revoke_tokens
from pawflow.server.testing import LiveServer
from pawflow.tui import ChatApp
from pawflow.tui.live import Connection
from pawflow.tui.views import RefusedScreen


def _offered(app: ChatApp) -> bool:
    """Whether the offer to quit is on the screen (drawn, not only pushed)."""
    return isinstance(app.screen, RefusedScreen) and bool(app.screen.query("#refused-message"))


def _said(app: ChatApp) -> str:
    return " ".join(str(app.screen.query_one("#refused-message", Static).render()).split())


def test_a_revoked_token_is_said_and_staying_keeps_the_app_open(
    live: LiveServer, user: User
) -> None:
    async def scenario() -> None:
        app = make_app(user)
        async with running(app) as pilot:
            await until(pilot, lambda: app.hydrations > 0 and app.connection is Connection.LIVE)
            name = await asyncio.to_thread(user.client.whoami)
            with live.store.transaction() as tx:
                revoke_tokens(tx, name, now=live.store.now())
            await until(pilot, lambda: _offered(app))
            said = _said(app)
            assert said.startswith(f"{live.url} does not accept the token (invalid token).")
            assert "`pawflow users add NAME`" in said and "signin-link NAME" in said
            assert app.refusal is not None
            await pilot.press("escape")  # Stay
            await until(pilot, lambda: not isinstance(app.screen, RefusedScreen))
            assert app.is_running and "refused" in str(app.status.render())

    asyncio.run(scenario())


def test_a_token_never_accepted_is_said_once_and_q_quits(live: LiveServer) -> None:
    async def scenario() -> None:
        with Client(live.url, "pf_wrong", token_source="PAWFLOW_TOKEN") as client:
            app = ChatApp(client)
            async with running(app) as pilot:
                await until(pilot, lambda: _offered(app))
                assert _said(app).startswith(
                    f"{live.url} does not accept the token in PAWFLOW_TOKEN (invalid token)."
                )
                # The read and the stream were both refused: one offer, not two.
                await until(pilot, lambda: app.connection is Connection.REFUSED)
                assert len([s for s in app.screen_stack if isinstance(s, RefusedScreen)]) == 1
                await pilot.press("q")
                await until(pilot, lambda: not app.is_running)

    asyncio.run(scenario())
