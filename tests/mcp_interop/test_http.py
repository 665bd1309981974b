"""The tools over streamable HTTP at /mcp, answered through the action API."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import httpx

from pawflow.mcp import schemas
from pawflow.server import models as m
from pawflow.server.testing import LiveServer
from pawflow.testing import eventually
from tests.mcp_interop.conftest import error_text, http_client, structured
from tests.server.conftest import Api

UserApi = Callable[[str], tuple[Api, str]]

MCP_PAGE = Path(__file__).parents[2] / "docs" / "mcp.md"


def test_tools_are_listed_with_the_action_api_schemas(live: LiveServer, user_api: UserApi) -> None:
    _, token = user_api("ada")

    async def scenario() -> dict[str, Any]:
        async with http_client(live, token) as client:
            listed = await client.list_tools()
            return {tool.name: tool for tool in listed.tools}

    tools = anyio.run(scenario)
    assert set(tools) == {
        "request_confirmation",
        "request_user_input",
        "get_interaction",
        "list_interactions",
        "cancel_interaction",
        "wait_for_answer",
    }
    ask = tools["request_user_input"].input_schema
    base = m.RequestInteraction.model_json_schema()
    for name in ("kind", "message", "title", "options", "response_schema", "expires_in"):
        assert ask["properties"][name] == base["properties"][name]
    assert ask["$defs"]["Kind"]["enum"] == base["$defs"]["Kind"]["enum"]
    assert ask["properties"]["wait_seconds"]["maximum"] == schemas.MAX_WAIT
    assert set(ask["required"]) == {"kind", "message"}
    confirm = tools["request_confirmation"].input_schema
    assert confirm["properties"]["mode"]["enum"] == ["confirm", "choice", "multi"]
    assert confirm["properties"]["message"] == base["properties"]["message"]
    assert confirm["required"] == ["message"]
    assert confirm["additionalProperties"] is False
    assert tools["get_interaction"].input_schema == m.RequestRef.model_json_schema()
    out = tools["get_interaction"].output_schema
    assert out is not None
    assert out["properties"]["interaction"]["$ref"].endswith("/Interaction")


def test_ask_answer_through_the_api_then_read_the_answer(
    live: LiveServer, user_api: UserApi
) -> None:
    api, token = user_api("bea")

    async def scenario() -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
        async with http_client(live, token) as client:
            asked = structured(
                await client.call_tool(
                    "request_confirmation",
                    {"message": "Deploy now?", "mode": "choice", "options": ["now", "later"]},
                )
            )
            request_id = asked["interaction"]["id"]
            await anyio.to_thread.run_sync(
                lambda: api.ok("respond_interaction", request_id=request_id, answer="later")
            )
            got = structured(await client.call_tool("get_interaction", {"request_id": request_id}))
            waited = structured(
                await client.call_tool("wait_for_answer", {"request_id": request_id, "seconds": 5})
            )
            return asked, got, waited

    asked, got, waited = anyio.run(scenario)
    record = asked["interaction"]
    assert record["status"] == "pending"
    assert record["kind"] == "choice"
    assert record["owner"] == api.user
    assert asked["answer_url"] == f"{live.url}/?c={record['conversation_id']}"
    assert got["interaction"]["status"] == "answered"
    assert got["interaction"]["answer"] == "later"
    assert waited["interaction"] == got["interaction"]
    # The default conversation is the user's own "MCP" conversation.
    titles = {c["id"]: c["title"] for c in api.ok("list_conversations")["conversations"]}
    assert titles[record["conversation_id"]] == "MCP"


def test_wait_seconds_returns_an_answer_that_comes_in_time(
    live: LiveServer, user_api: UserApi
) -> None:
    api, token = user_api("cy")

    def answer_when_asked() -> None:
        def pending() -> list[Any]:
            found: list[Any] = api.ok("list_interactions", status="pending")["interactions"]
            return found

        found = eventually(pending, interval=0.1)
        api.ok("respond_interaction", request_id=found[0]["id"], answer=42)

    async def scenario() -> dict[str, Any]:
        async with http_client(live, token) as client, anyio.create_task_group() as tg:
            tg.start_soon(anyio.to_thread.run_sync, answer_when_asked)
            result = structured(
                await client.call_tool(
                    "request_user_input",
                    {"kind": "integer", "message": "How many?", "wait_seconds": 60},
                )
            )
        return result

    result = anyio.run(scenario)
    assert result["interaction"]["status"] == "answered"
    assert result["interaction"]["answer"] == 42


def test_a_foreign_request_is_exactly_as_unknown_as_a_missing_one(
    live: LiveServer, user_api: UserApi
) -> None:
    owner, _ = user_api("dan")
    _, token = user_api("eve")
    foreign = owner.ask(owner.conversation())["id"]

    async def scenario() -> list[str]:
        texts = []
        async with http_client(live, token) as client:
            for tool in ("get_interaction", "cancel_interaction", "wait_for_answer"):
                for request_id in (foreign, "no-such-request"):
                    args: dict[str, Any] = {"request_id": request_id}
                    if tool == "wait_for_answer":
                        args["seconds"] = 0
                    texts.append(error_text(await client.call_tool(tool, args)))
        return texts

    texts = anyio.run(scenario)
    assert texts == ["interaction not found"] * 6
    assert owner.ok("get_interaction", request_id=foreign)["interaction"]["status"] == "pending"


def test_list_cancel_and_bad_arguments(live: LiveServer, user_api: UserApi) -> None:
    api, token = user_api("fay")
    conversation = api.conversation()
    first = api.ask(conversation)["id"]
    second = api.ask(conversation, kind="text")["id"]

    async def scenario() -> tuple[dict[str, Any], dict[str, Any], str, str]:
        async with http_client(live, token) as client:
            cancelled = structured(
                await client.call_tool("cancel_interaction", {"request_id": first})
            )
            listed = structured(await client.call_tool("list_interactions", {}))
            bad = error_text(
                await client.call_tool("request_user_input", {"kind": "colour", "message": "?"})
            )
            again = error_text(await client.call_tool("cancel_interaction", {"request_id": first}))
            return cancelled, listed, bad, again

    cancelled, listed, bad, again = anyio.run(scenario)
    assert cancelled["interaction"]["status"] == "cancelled"
    assert [i["id"] for i in listed["interactions"]] == [second]
    assert bad.startswith("invalid arguments") and "kind" in bad
    assert again == "the request is already cancelled"


def test_the_endpoint_needs_a_valid_token(live: LiveServer) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    with httpx.Client(base_url=live.url) as http:
        missing = http.post("/mcp", json=body)
        wrong = http.post("/mcp", json=body, headers={"Authorization": "Bearer pf_nope"})
    for response in (missing, wrong):
        assert response.status_code == 401
        assert response.headers["www-authenticate"].startswith("Bearer")


def test_a_session_is_unknown_to_another_users_token(live: LiveServer, user_api: UserApi) -> None:
    _, first = user_api("ray")
    _, second = user_api("sue")
    accept = {"Accept": "application/json, text/event-stream"}
    hello = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "probe", "version": "1"},
        },
    }
    listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
    with httpx.Client(base_url=live.url, timeout=30) as http:
        opened = http.post(
            "/mcp", json=hello, headers={**accept, "Authorization": f"Bearer {first}"}
        )
        assert opened.status_code == 200
        session = {"mcp-session-id": opened.headers["mcp-session-id"], **accept}
        other = http.post(
            "/mcp", json=listing, headers={**session, "Authorization": f"Bearer {second}"}
        )
        unknown = http.post(
            "/mcp",
            json=listing,
            headers={**session, "mcp-session-id": "0" * 32, "Authorization": f"Bearer {second}"},
        )
    assert other.status_code == unknown.status_code == 404
    assert other.json() == unknown.json()


def test_the_http_example_of_the_docs_waits_as_long_as_it_asks(
    make_server: Callable[..., LiveServer],
) -> None:
    server = make_server()
    token = server.token("kim")
    [example] = re.findall(r"```text\n(import anyio, httpx2\n.*?)```", MCP_PAGE.read_text(), re.S)
    code = example.replace("pf_3q…", token).replace("http://127.0.0.1:8765", server.url)
    assert '"wait_seconds": 60' in code
    # Unanswered, the tool holds its reply for the whole wait: longer than httpx2's 5 s.
    code = code.replace('"wait_seconds": 60', '"wait_seconds": 7')
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=90, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "pending"


def test_asking_again_with_an_idempotency_key_returns_the_first_request(
    live: LiveServer, user_api: UserApi
) -> None:
    api, token = user_api("ida")
    confirm = {"message": "Deploy now?", "idempotency_key": "deploy-9"}
    text = {"kind": "text", "message": "Why?", "idempotency_key": "why-9"}

    async def scenario() -> tuple[list[dict[str, Any]], list[dict[str, Any]], str]:
        async with http_client(live, token) as client:
            confirms = [
                structured(await client.call_tool("request_confirmation", confirm))
                for _ in range(2)
            ]
            texts = [
                structured(await client.call_tool("request_user_input", text)) for _ in range(2)
            ]
            other = error_text(
                await client.call_tool("request_user_input", {**text, "message": "Why not?"})
            )
            return confirms, texts, other

    confirms, texts, other = anyio.run(scenario)
    assert confirms[0] == confirms[1]
    assert texts[0] == texts[1]
    assert other == "idempotency_key 'why-9' was used for another request (it differs in message)"
    listed = api.ok("list_interactions")["interactions"]
    assert [i["id"] for i in listed] == [
        confirms[0]["interaction"]["id"],
        texts[0]["interaction"]["id"],
    ]


def test_text_with_nul_is_refused_as_the_action_api_refuses_it(
    live: LiveServer, user_api: UserApi
) -> None:
    api, token = user_api("nul")
    conversation = api.conversation()
    through_api = api.call(
        "request_interaction", conversation_id=conversation, kind="text", message="a\x00b"
    )
    assert through_api.status_code == 400
    assert "NUL" in through_api.json()["error"]

    async def scenario() -> list[str]:
        async with http_client(live, token) as client:
            calls: list[tuple[str, dict[str, Any]]] = [
                ("request_user_input", {"kind": "text", "message": "a\x00b"}),
                ("request_user_input", {"kind": "text", "message": "ok", "title": "t\x00"}),
                (
                    "request_user_input",
                    {"kind": "text", "message": "ok", "conversation_id": conversation + "\x00"},
                ),
                ("get_interaction", {"request_id": "id\x00"}),
                ("list_interactions", {"conversation_id": "c\x00"}),
            ]
            return [error_text(await client.call_tool(name, args)) for name, args in calls]

    texts = anyio.run(scenario)
    assert all("NUL" in text for text in texts), texts
    assert not any("database error" in text for text in texts), texts
    assert api.ok("list_interactions", status=None)["interactions"] == []


def test_a_request_over_mcp_may_name_its_assignees(live: LiveServer, user_api: UserApi) -> None:
    api, token = user_api("di")
    ada, _ = user_api("ada")

    async def scenario() -> dict[str, Any]:
        async with http_client(live, token) as client:
            return structured(
                await client.call_tool(
                    "request_user_input",
                    {
                        "kind": "confirm",
                        "message": "Ship?",
                        "assignees": [ada.user],
                        "requester_may_answer": False,
                        "expires_in": "1d",
                        "on_expire": {"answer": False},
                    },
                )
            )

    asked = anyio.run(scenario)["interaction"]
    refused = api.call("respond_interaction", request_id=asked["id"], answer=True)
    assert refused.status_code == 403
    assert refused.json()["waiting_for"] == [ada.user]
    done = ada.ok("respond_interaction", request_id=asked["id"], answer=True)
    assert done["interaction"]["answered_by"] == ada.user
