"""A PawFlow agent calling tools of an external MCP server, under its approval rules."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from pawflow.agent import AgentSpec, ScriptedModel
from pawflow.agent.config import load_agents
from pawflow.agent.mcp_tools import McpServerConfig, McpToolset, mcp_tools
from pawflow.chat.service import ChatService
from pawflow.errors import InvalidInput
from pawflow.server.testing import LiveServer
from pawflow.store import Store
from tests.agent.conftest import USER, history, say, scheduled
from tests.server.conftest import Api, unique

pytestmark = pytest.mark.slow

SERVER = str(Path(__file__).with_name("files_server.py"))

SCRIPT: dict[str, Any] = {
    "name": "mcp-test",
    "turns": [
        {
            "role": "user",
            "match": r"^clean",
            "reply": "Cleaning needs your approval.",
            "tool_calls": [{"name": "files__delete_files", "arguments": {"pattern": "*.tmp"}}],
        },
        {
            "role": "user",
            "match": r"^count",
            "tool_calls": [{"name": "files__count_files", "arguments": {"folder": "abcd"}}],
        },
        {"role": "tool", "match": r"^deleted (?P<n>\d+)", "reply": "Deleted {n} files."},
        {"role": "tool", "match": r"^(?P<n>\d+)$", "reply": "There are {n} files."},
        {"role": "tool", "match": r"not run", "reply": "Nothing was deleted."},
    ],
    "default": {"reply": "Hello."},
}


def config(log: Path, **overrides: Any) -> McpServerConfig:
    settings: dict[str, Any] = {
        "name": "files",
        "command": sys.executable,
        "args": [SERVER, str(log)],
        "tools": ["delete_files", "count_files", "fail"],
        "approval": ["delete_files"],
    }
    return McpServerConfig.model_validate({**settings, **overrides})


@pytest.fixture
def log(tmp_path: Path) -> Path:
    return tmp_path / "calls.log"


@pytest.fixture
def toolset(log: Path) -> Iterator[McpToolset]:
    with McpToolset(config(log)) as opened:
        yield opened


def test_allowed_tools_carry_the_servers_schemas_and_approval_rules(
    toolset: McpToolset, log: Path
) -> None:
    tools = {tool.name: tool for tool in toolset.tools}
    assert list(tools) == ["files__delete_files", "files__count_files", "files__fail"]
    assert tools["files__delete_files"].consequential
    assert not tools["files__count_files"].consequential
    schema = tools["files__delete_files"].parameters
    assert schema["properties"]["pattern"]["type"] == "string"
    assert schema["required"] == ["pattern"]
    assert "format_disk" not in str(list(tools))
    assert toolset.call("format_disk", {}).error
    assert not log.exists()
    failed = tools["files__fail"].function(reason="no disk")
    assert failed.error and "no disk" in failed.content
    counted = tools["files__count_files"].function(folder="abc")
    assert counted.content == "3" and not counted.error


def test_an_agent_runs_an_mcp_tool_only_after_approval(store: Store, log: Path) -> None:
    stack, tools = mcp_tools([config(log)])
    with stack:
        agent = AgentSpec(
            name="janitor", instructions="You tidy.", model=ScriptedModel(SCRIPT), tools=tools
        )
        with ChatService(store, [agent], poll_interval=None) as service:
            conversation = store.create_conversation(USER, "Tidy")
            service.assign(conversation.id, "janitor")
            say(store, service, conversation.id, "count them")
            assert history(store, conversation.id)[-1][2] == "There are 4 files."

            say(store, service, conversation.id, "clean up")
            [request] = store.list_interactions(user=USER, status="pending")
            assert (
                request.message == "Allow janitor to run files__delete_files with pattern: *.tmp?"
            )
            assert not log.exists()  # asked, not run
            store.respond_interaction(request.id, True, user=USER)
            scheduled(service, conversation.id)
            assert service.run_due() == 1
            assert log.read_text() == "*.tmp\n"
            assert history(store, conversation.id)[-1][2] == "Deleted 3 files."


def test_a_missing_tool_or_a_bad_config_is_a_clear_error(log: Path) -> None:
    with pytest.raises(InvalidInput, match="has no tool 'shred'"):
        McpToolset(config(log, tools=["shred"], approval="all")).open()
    with pytest.raises(ValidationError, match="either command"):
        config(log, url="http://127.0.0.1:1/mcp")
    with pytest.raises(ValidationError, match="not in the allow-list"):
        config(log, approval=["format_disk"])
    with pytest.raises(InvalidInput, match="cannot reach MCP server"):
        McpToolset(config(log, command="/nonexistent/program")).open()


def test_a_server_over_streamable_http_with_a_bearer_token(live: LiveServer) -> None:
    api = Api(live, unique("pia"))
    asked = api.ask(api.conversation())
    settings = McpServerConfig(
        name="pawflow",
        url=f"{live.url}/mcp",
        headers={"Authorization": f"Bearer {live.token(api.user)}"},
        tools=["list_interactions"],
        approval="none",
    )
    with McpToolset(settings) as toolset:
        [listing] = toolset.tools
        assert listing.name == "pawflow__list_interactions" and not listing.consequential
        outcome = listing.function()
    assert not outcome.error
    assert [item["id"] for item in outcome.data["interactions"]] == [asked["id"]]
    api.close()


def test_an_agents_file_gives_its_agent_the_allowed_tools_of_its_mcp_servers(
    tmp_path: Path, log: Path
) -> None:
    agents_file = tmp_path / "agents.yaml"
    agents_file.write_text(
        f"""
agents:
  - name: janitor
    model: {{url: "http://127.0.0.1:9/v1", name: any}}
    system_prompt: You keep the files tidy.
    mcp_servers:
      - name: files
        command: {json.dumps(sys.executable)}
        args: [{json.dumps(SERVER)}, {json.dumps(str(log))}]
        tools: [delete_files, count_files]
        approval: [delete_files]
"""
    )
    with ExitStack() as connections:
        [janitor] = load_agents(agents_file, {}, connections=connections)
        assert {"files__delete_files", "files__count_files"} <= set(janitor.toolbox.names)
        delete = janitor.toolbox.get("files__delete_files")
        count = janitor.toolbox.get("files__count_files")
        assert delete is not None and delete.consequential
        assert count is not None and not count.consequential
        assert janitor.toolbox.get("files__fail") is None  # not on the allow-list
    with pytest.raises(InvalidInput, match="mcp_servers"):
        load_agents(agents_file, {})  # nowhere to keep the sessions open
