"""Fixtures for the channel tests: a real server wired to a local Slack (``slack_api``)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import httpx
import pytest

from pawflow.channels import Dispatcher, SlackChannel, SlackConfig
from pawflow.clock import FakeClock
from pawflow.server.settings import ServerSettings
from pawflow.server.testing import LiveServer, live_server
from pawflow.store import Question
from pawflow.store.reach import addresses
from pawflow.testing import temporary_store
from tests.channels.slack_api import SlackApi, sign, slack_api
from tests.conftest import require_postgres

SECRET = "8f742231b10e8888abcd99yyyzzz85a5"
TOKEN = "xoxb-17653672481-19874698323-pdFZKVeTuE8sk7oOcBrzbqgy"
ADA = "U0ADA0001"
PATH = "/integrations/slack/interactions"
QUIET = ServerSettings(sweep_interval=3600, rate_limit=100_000, rate_burst=100_000)


class Slack:
    """The test's hands: a server, the Slack it talks to, and the dispatcher."""

    def __init__(self, server: LiveServer, api: SlackApi, dispatcher: Dispatcher) -> None:
        self.server = server
        self.api = api
        self.dispatcher = dispatcher
        self.store = server.store
        self.http = httpx.Client(timeout=30)

    def post(
        self, payload: dict[str, Any], *, age: int = 0, secret: str = SECRET
    ) -> httpx.Response:
        """Post ``payload`` as Slack does: form-encoded, signed ``age`` seconds ago."""
        body = urlencode({"payload": json.dumps(payload)})
        timestamp = int(self.store.now().timestamp()) - age
        headers = sign(secret, timestamp, body)
        return self.http.post(self.server.url + PATH, content=body, headers=headers)

    def message(self, request_id: str) -> dict[str, Any]:
        (sent,) = [
            m
            for m in self.api.called("chat.postMessage")
            if m["metadata"]["event_payload"]["request_id"] == request_id
        ]
        return sent

    def ask(self, kind: str, message: str, **kwargs: Any) -> str:
        conversation = self.store.create_conversation("ada", "slack")
        return self.store.ask(
            Question("ada", conversation.id, kind, message, **kwargs)
        ).interaction.id

    def status(self, request_id: str) -> str:
        return self.store.get_interaction(request_id, user="ada").status


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def slack(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Slack]:
    if request.param == "postgres":
        require_postgres()
    with (
        temporary_store(request.param, tmp_path, clock=FakeClock()) as store,
        slack_api() as api,
    ):
        settings = QUIET.replace(
            slack_bot_token=TOKEN, slack_signing_secret=SECRET, slack_api_url=api.url
        )
        with live_server(store, settings=settings) as server:
            store.ensure_user("ada")
            with store.transaction() as tx:
                addresses.set_reach(tx, "ada", slack=ADA, now=store.now())
            channel = SlackChannel(SlackConfig(TOKEN, SECRET, api.url))
            dispatcher = Dispatcher(store, [channel], base_url=server.url, owner="test")
            hands = Slack(server, api, dispatcher)
            try:
                yield hands
            finally:
                hands.http.close()


def click(request_id: str, action: str, value: str, *, user: str = ADA) -> dict[str, Any]:
    return {
        "type": "block_actions",
        "user": {"id": user, "username": "ada"},
        "trigger_id": "13345224609.738474920.8088930838d88f008e0",
        "channel": {"id": "D" + ADA[1:]},
        "container": {"type": "message", "channel_id": "D" + ADA[1:]},
        "actions": [
            {
                "type": "button",
                "action_id": action,
                "block_id": f"pawflow:{request_id}",
                "value": value,
            }
        ],
    }
