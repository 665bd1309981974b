"""URL-mode elicitation with the SDK's own client: a ``table`` or ``card`` surface is asked at
the request's answer page on both protocol generations; a client that takes only URL mode is
sent there for any question; and a handshake-era client that cannot be sent requests during
a call (the server answers each POST with one JSON body) gets the error -32042."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp.client.session import ClientSession
from mcp.shared.exceptions import MCPError, UrlElicitationRequiredError

from pawflow.mcp.mounting import mount as mount_mcp
from pawflow.server.testing import LiveServer, live_server
from pawflow.testing import temporary_store
from tests.mcp_interop.conftest import QUIET, http_client, structured
from tests.server.conftest import Api

UserApi = Callable[[str], tuple[Api, str]]

MODERN = {"mode": "2026-07-28"}
LEGACY = {"mode": "legacy"}
GENERATIONS = {"2026-07-28": MODERN, "2025-11-25": LEGACY}

TABLE = {
    "contract": "pawflow.ui-surface.v1",
    "type": "table",
    "title": "Flights to Berlin",
    "columns": [{"key": "flight", "label": "Flight"}, {"key": "price", "label": "Price"}],
    "rows": [
        {"value": "af1234", "cells": {"flight": "AF 1234", "price": "€142"}},
        {"value": "kl1008", "cells": {"flight": "KL 1008", "price": "€96"}},
    ],
    "fallback": "choice",
}
CARD = {
    "contract": "pawflow.ui-surface.v1",
    "type": "card",
    "title": "Update httpx 0.27 → 0.28",
    "body": "No breaking change for our usage.",
    "actions": [{"label": "Merge", "value": True}, {"label": "Not now", "value": False}],
    "fallback": "confirm",
}
SURFACES: dict[str, tuple[dict[str, Any], dict[str, Any], Any]] = {
    "table": (
        TABLE,
        {"kind": "choice", "options": ["af1234", "kl1008"], "message": "Which flight?"},
        "kl1008",
    ),
    "card": (CARD, {"kind": "confirm", "message": "Merge the update?"}, True),
}


def _answering_on_the_page(api: Api, answer: Any, pages: list[types.ElicitRequestURLParams]) -> Any:
    """An elicitation callback that, sent to a page, answers there (the action API)."""

    async def visit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        assert isinstance(params, types.ElicitRequestURLParams), params
        pages.append(params)

        def answer_on_the_page() -> None:
            [pending] = api.ok("list_interactions")["interactions"]
            api.ok("respond_interaction", request_id=pending["id"], answer=answer)

        await anyio.to_thread.run_sync(answer_on_the_page)
        return types.ElicitResult(action="accept")

    return visit


@pytest.mark.parametrize("generation", list(GENERATIONS))
@pytest.mark.parametrize("surface", list(SURFACES))
def test_a_table_or_card_is_asked_in_url_mode_at_its_answer_page(
    live: LiveServer, user_api: UserApi, surface: str, generation: str
) -> None:
    api, token = user_api(f"surf-{surface}-{generation}")
    ui_surface, arguments, answer = SURFACES[surface]
    pages: list[types.ElicitRequestURLParams] = []
    visit = _answering_on_the_page(api, answer, pages)

    async def scenario() -> dict[str, Any]:
        options = {"elicitation_callback": visit, **GENERATIONS[generation]}
        async with http_client(live, token, **options) as client:
            return structured(
                await client.call_tool(
                    "request_user_input",
                    {**arguments, "ui_surface": ui_surface, "wait_seconds": 30},
                )
            )

    result = anyio.run(scenario)
    [page] = pages
    assert page.url == result["answer_url"]
    assert page.message == arguments["message"]
    if generation == "2025-11-25":
        assert page.elicitation_id == result["interaction"]["id"]
    assert result["interaction"]["ui_surface"]["type"] == surface
    assert result["interaction"]["status"] == "answered"
    assert result["interaction"]["answer"] == answer


def _declare_url_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """The SDK's client declaring URL mode only (its capability ad, without form mode)."""
    built = ClientSession._build_capabilities

    def only_url(self: ClientSession, version: str) -> types.ClientCapabilities:
        capabilities = built(self, version)
        if capabilities.elicitation is not None:
            url = types.ElicitationCapability(url=types.UrlElicitationCapability())
            capabilities = capabilities.model_copy(update={"elicitation": url})
        return capabilities

    monkeypatch.setattr(ClientSession, "_build_capabilities", only_url)


@pytest.fixture
def url_only(monkeypatch: pytest.MonkeyPatch) -> None:
    _declare_url_only(monkeypatch)


@pytest.mark.parametrize("generation", list(GENERATIONS))
def test_a_client_that_takes_only_url_mode_is_sent_to_the_page_for_a_flat_question(
    live: LiveServer, user_api: UserApi, url_only: None, generation: str
) -> None:
    api, token = user_api(f"url-only-{generation}")
    pages: list[types.ElicitRequestURLParams] = []
    visit = _answering_on_the_page(api, True, pages)

    async def scenario() -> dict[str, Any]:
        options = {"elicitation_callback": visit, **GENERATIONS[generation]}
        async with http_client(live, token, **options) as client:
            return structured(
                await client.call_tool(
                    "request_confirmation",
                    {"mode": "confirm", "message": "Deploy 1.4?", "wait_seconds": 30},
                )
            )

    result = anyio.run(scenario)
    [page] = pages
    assert page.url == result["answer_url"]
    assert result["interaction"]["status"] == "answered"
    assert result["interaction"]["answer"] is True
    assert result["interaction"]["answered_via"] != "mcp"


@pytest.fixture
def json_live(tmp_path: Path) -> Iterator[LiveServer]:
    """A server whose ``/mcp`` answers every POST with one JSON body (no event stream)."""
    with (
        temporary_store("sqlite", tmp_path) as store,
        live_server(
            store, settings=QUIET.replace(mcp_json_response=True), endpoints=[mount_mcp]
        ) as server,
    ):
        yield server


async def _never(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
    raise AssertionError("no request can reach this client during a call")


@pytest.mark.parametrize("client_modes", ["form and url", "url only"])
def test_a_legacy_client_that_cannot_be_asked_during_the_call_gets_32042(
    json_live: LiveServer, monkeypatch: pytest.MonkeyPatch, client_modes: str
) -> None:
    if client_modes == "url only":
        _declare_url_only(monkeypatch)
    token = json_live.token("jo")

    async def scenario() -> MCPError:
        options = {"elicitation_callback": _never, **LEGACY}
        async with http_client(json_live, token, **options) as client:
            assert client.protocol_version == "2025-11-25"
            with pytest.raises(MCPError) as raised:
                await client.call_tool(
                    "request_user_input", {"kind": "file", "message": "Send the report"}
                )
            return raised.value

    error = anyio.run(scenario)
    assert error.error.code == types.URL_ELICITATION_REQUIRED
    [page] = UrlElicitationRequiredError.from_error(error.error).elicitations
    assert page.message == "Send the report"
    assert page.url.startswith(json_live.url)
    assert page.elicitation_id
    # The request stays pending, to be answered at that page.
    with json_live.client("jo") as http:
        listed = http.post("/api/actions/list_interactions", json={"status": "pending"}).json()
    [pending] = listed["interactions"]
    assert pending["id"] == page.elicitation_id and pending["kind"] == "file"
