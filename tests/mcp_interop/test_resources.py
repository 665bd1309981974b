"""The pending list as a resource, with updates pushed to subscribers."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import anyio
import mcp_types as types
import pytest

from pawflow.mcp import PENDING_URI
from pawflow.server.testing import LiveServer
from tests.mcp_interop.conftest import http_client, stdio_client
from tests.server.conftest import Api

# Handshake-era clients (the MCP clients in use today) subscribe with resources/subscribe,
# which the SDK's client marks as superseded by the 2026 protocol's subscriptions/listen.
pytestmark = pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")

UserApi = Callable[[str], tuple[Api, str]]


def _pending_ids(result: types.ReadResourceResult) -> list[str]:
    [contents] = result.contents
    assert isinstance(contents, types.TextResourceContents)
    return [item["id"] for item in json.loads(contents.text)["interactions"]]


def _scenario(api: Api, connect: Any) -> tuple[list[str], list[str], list[str], int]:
    conversation = api.conversation()
    first = api.ask(conversation)["id"]
    updates: list[str] = []
    changed = anyio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            updates.append(str(message.params.uri))
            changed.set()

    async def scenario() -> tuple[list[str], list[str], list[str], int]:
        nonlocal changed
        async with connect(message_handler=on_message, mode="legacy") as client:
            listed = [str(r.uri) for r in (await client.list_resources()).resources]
            before = _pending_ids(await client.read_resource(PENDING_URI))
            await client.subscribe_resource(PENDING_URI)
            second = await anyio.to_thread.run_sync(lambda: api.ask(conversation)["id"])
            with anyio.fail_after(20):
                await changed.wait()
            after = _pending_ids(await client.read_resource(PENDING_URI))
            assert after == [first, second]
            changed = anyio.Event()
            await anyio.to_thread.run_sync(
                lambda: api.ok("respond_interaction", request_id=first, answer=False)
            )
            with anyio.fail_after(20):
                await changed.wait()
            final = _pending_ids(await client.read_resource(PENDING_URI))
            return listed, before, final, len(updates)

    listed, before, final, count = anyio.run(scenario)
    assert listed == [PENDING_URI]
    assert before == [first]
    assert len(final) == 1 and final[0] != first
    assert count == 2
    return listed, before, final, count


def test_pending_resource_over_http(live: LiveServer, user_api: UserApi) -> None:
    api, token = user_api("ned")
    _scenario(api, lambda **options: http_client(live, token, **options))


def test_pending_resource_over_stdio(live: LiveServer, user_api: UserApi) -> None:
    api, token = user_api("ola")
    _scenario(api, lambda **options: stdio_client(live, token, **options))


def _changes_right_after_subscribing(api: Api, connect: Any, rounds: int) -> int:
    """Subscribe, change the pending list at once, unsubscribe; the rounds notified."""
    conversation = api.conversation()
    changed = anyio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            changed.set()

    async def scenario() -> int:
        nonlocal changed
        notified = 0
        async with connect(message_handler=on_message, mode="legacy") as client:
            for _ in range(rounds):
                changed = anyio.Event()
                await client.subscribe_resource(PENDING_URI)
                await anyio.to_thread.run_sync(lambda: api.ask(conversation))
                with anyio.move_on_after(10):
                    await changed.wait()
                    notified += 1
                await client.unsubscribe_resource(PENDING_URI)
        return notified

    return anyio.run(scenario)


@pytest.mark.parametrize("transport", ["http", "stdio"])
def test_a_change_right_after_subscribing_is_notified(
    live: LiveServer, user_api: UserApi, transport: str
) -> None:
    api, token = user_api("pia")
    client = http_client if transport == "http" else stdio_client
    rounds = 20
    notified = _changes_right_after_subscribing(
        api, lambda **options: client(live, token, **options), rounds
    )
    assert notified == rounds


def test_the_pending_resource_lists_only_what_waits_for_the_caller(
    live: LiveServer, user_api: UserApi
) -> None:
    ann, ann_token = user_api("ann-mcp")
    lee, lee_token = user_api("lee-mcp")
    conversation = ann.conversation()
    mine = ann.ask(conversation)["id"]
    theirs = ann.ask(conversation, assignees=[lee.user])["id"]

    async def read(token: str) -> list[str]:
        async with http_client(live, token) as client:
            return _pending_ids(await client.read_resource(PENDING_URI))

    # The asker is not shown what waits for lee; lee is shown it, though not her conversation.
    assert anyio.run(read, ann_token) == [mine]
    assert anyio.run(read, lee_token) == [theirs]
