"""``agents.yaml``: agents on an OpenAI-compatible endpoint, validated with clear errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pawflow.agent import config
from pawflow.agent.models.openai import OpenAIChatModel
from pawflow.agent.tools import Tool
from pawflow.errors import InvalidInput

GOOD = """
agents:
  - name: helper
    model: {url: "http://127.0.0.1:11434/v1", name: llama3.1, api_key_env: HELPER_KEY}
    system_prompt: You help with releases.
    tools: [request_confirmation, {name: wipe, approval: true}]
    limits: {max_steps: 4}
"""


def wipe(pattern: str) -> str:
    """Wipe files.

    Args:
        pattern: A glob pattern.
    """
    return f"wiped {pattern}"


class Point:
    def __init__(self, name: str, loaded: Any) -> None:
        self.name, self.loaded = name, loaded

    def load(self) -> Any:
        return self.loaded


@pytest.fixture(autouse=True)
def installed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(config, "entry_point_tools", lambda: {"wipe": Point("wipe", wipe)})


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "agents.yaml"
    path.write_text(text)
    return path


def test_a_good_file_makes_agents_on_the_endpoint(tmp_path: Path) -> None:
    [agent] = config.load_agents(write(tmp_path, GOOD), {"HELPER_KEY": "sk-1"})
    assert agent.name == "helper" and agent.limits.max_steps == 4
    assert isinstance(agent.model, OpenAIChatModel)
    assert agent.model.url == "http://127.0.0.1:11434/v1/chat/completions"
    assert agent.model.model == "llama3.1"
    assert agent.model._client.headers["Authorization"] == "Bearer sk-1"
    assert sorted(agent.toolbox.names) == ["request_confirmation", "wipe"]  # no ask_user
    found = agent.toolbox.get("wipe")
    assert isinstance(found, Tool) and found.consequential
    assert agent.system_prompt.startswith("You help with releases.")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (GOOD.replace("url:", "uri:"), "agent 'helper': model.uri: Extra inputs"),
        (GOOD.replace("max_steps: 4", "max_steps: 0"), "agent 'helper': limits.max_steps:"),
        (
            GOOD.replace("api_key_env: HELPER_KEY", "api_key: sk-1"),
            "put the key in an environment variable and name it with api_key_env",
        ),
        (GOOD.replace("system_prompt: You help with releases.", ""), "system_prompt: Field"),
        (GOOD.replace("wipe, approval", "nuke, approval"), "unknown tool 'nuke'"),
        (GOOD + GOOD.replace("agents:\n", ""), "agent names must be unique: helper"),
        ("agents: []", "agents: List should have at least 1 item"),
        ("", "agents.yaml: the file is empty: expected `agents:` and a list of agents under it"),
        ("# agents to come\n", "the file is empty: expected `agents:`"),
        (
            "- name: helper\n",
            "expected `agents:` and a list of agents under it (docs/agents.md), not a list",
        ),
        ("agents:\n", "agents: the list is empty: give at least one agent"),
        ("agents: [", "is not valid YAML"),
    ],
)
def test_bad_files_name_what_is_wrong(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(InvalidInput) as raised:
        config.load_agents(write(tmp_path, text), {"HELPER_KEY": "sk-1"})
    assert message in raised.value.message


def test_the_api_key_variable_must_be_set(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="the environment variable HELPER_KEY is not set"):
        config.load_agents(write(tmp_path, GOOD), {})
