"""``pawflow mcp`` over stdio, launched by the SDK's client against a real server."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters
from typer.testing import CliRunner

from pawflow.cli import app
from pawflow.server.testing import LiveServer, live_server
from pawflow.testing import eventually, temporary_store
from tests.mcp_interop.conftest import error_text, stdio_client, structured
from tests.server.conftest import QUIET, Api, unique

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def sqlite_live(tmp_path_factory: pytest.TempPathFactory) -> Any:
    with (
        temporary_store("sqlite", tmp_path_factory.mktemp("stdio")) as store,
        live_server(store, settings=QUIET) as server,
    ):
        yield server


def _user(server: LiveServer) -> tuple[Api, str]:
    api = Api(server, unique("gus"))
    return api, server.token(api.user)


def test_a_refused_token_ends_pawflow_mcp_at_start(sqlite_live: LiveServer) -> None:
    # The MCP client's stdin stays open: a server that started would wait on it for ever.
    started = subprocess.Popen(
        [sys.executable, "-m", "pawflow", "mcp", "--server", sqlite_live.url],
        env={**os.environ, "PAWFLOW_TOKEN": "pf_no"},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        stdout, stderr = started.communicate(timeout=60)
    finally:
        started.kill()
    assert started.returncode == 1
    assert stdout == ""  # nothing said on the protocol's channel
    assert f"{sqlite_live.url} does not accept the token in PAWFLOW_TOKEN" in " ".join(
        stderr.split()
    )
    assert "pawflow users add NAME" in stderr


def test_ask_over_stdio_answer_through_the_api(sqlite_live: LiveServer) -> None:
    api, token = _user(sqlite_live)

    async def scenario() -> tuple[set[str], dict[str, Any], dict[str, Any], str]:
        async with stdio_client(sqlite_live, token) as client:
            names = {tool.name for tool in (await client.list_tools()).tools}
            asked = structured(
                await client.call_tool(
                    "request_user_input", {"kind": "date", "message": "When do we ship?"}
                )
            )
            request_id = asked["interaction"]["id"]
            await anyio.to_thread.run_sync(
                lambda: api.ok("respond_interaction", request_id=request_id, answer="2030-01-02")
            )
            waited = structured(
                await client.call_tool("wait_for_answer", {"request_id": request_id, "seconds": 30})
            )
            unknown = error_text(await client.call_tool("get_interaction", {"request_id": "nope"}))
            return names, asked, waited, unknown

    names, asked, waited, unknown = anyio.run(scenario)
    assert "request_confirmation" in names
    assert asked["interaction"]["status"] == "pending"
    assert asked["answer_url"].startswith(sqlite_live.url + "/?c=")
    assert waited["interaction"]["status"] == "answered"
    assert waited["interaction"]["answer"] == "2030-01-02"
    assert unknown == "interaction not found"
    api.close()


def test_an_idempotency_key_over_stdio_asks_once(sqlite_live: LiveServer) -> None:
    api, token = _user(sqlite_live)
    ask = {"message": "Restart the build?", "idempotency_key": "restart-3"}

    async def scenario() -> list[dict[str, Any]]:
        async with stdio_client(sqlite_live, token) as client:
            return [structured(await client.call_tool("request_confirmation", ask)) for _ in "12"]

    first, again = anyio.run(scenario)
    assert first == again
    listed = api.ok("list_interactions")["interactions"]
    api.close()
    assert [i["id"] for i in listed] == [first["interaction"]["id"]]


def test_a_wait_over_stdio_ends_with_an_answer_given_meanwhile(sqlite_live: LiveServer) -> None:
    api, token = _user(sqlite_live)

    def answer_when_asked() -> None:
        found = eventually(
            lambda: api.ok("list_interactions")["interactions"], timeout=20, interval=0.1
        )
        api.ok("respond_interaction", request_id=found[0]["id"], answer=True)

    async def scenario() -> dict[str, Any]:
        async with stdio_client(sqlite_live, token) as client, anyio.create_task_group() as tg:
            tg.start_soon(anyio.to_thread.run_sync, answer_when_asked)
            result = structured(
                await client.call_tool(
                    "request_confirmation", {"message": "Go?", "wait_seconds": 60}
                )
            )
        return result

    result = anyio.run(scenario)
    assert result["interaction"]["status"] == "answered"
    assert result["interaction"]["answer"] is True
    api.close()


def test_the_token_can_come_from_a_file(sqlite_live: LiveServer, tmp_path: Path) -> None:
    api, token = _user(sqlite_live)
    token_file = tmp_path / "token"
    token_file.write_text(token + "\n")
    token_file.chmod(0o600)
    asked = api.ask(api.conversation())
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "pawflow", "mcp", "--server", sqlite_live.url, "--token-file", str(token_file)],
        env={k: v for k, v in os.environ.items() if k != "PAWFLOW_TOKEN"},
    )

    async def scenario() -> dict[str, Any]:
        async with Client(params) as client:
            return structured(
                await client.call_tool("get_interaction", {"request_id": asked["id"]})
            )

    assert anyio.run(scenario)["interaction"]["owner"] == api.user
    api.close()


def test_pawflow_mcp_without_a_token_says_so(sqlite_live: LiveServer) -> None:

    result = CliRunner().invoke(
        app, ["mcp", "--server", sqlite_live.url], env={"PAWFLOW_TOKEN": ""}
    )
    assert result.exit_code == 2
    assert "No token" in result.output
