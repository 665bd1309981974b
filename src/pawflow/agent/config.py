"""Agents described in a YAML file (``pawflow serve --agents agents.yaml``), no Python needed.

Each agent names an OpenAI-compatible model (URL and model name; the API key is read from
the environment variable the file names, never from the file), a system prompt, the tools
it may use — built-in tools and tools installed as entry points in the group
``pawflow.tools`` — and its limits. The file is validated as a whole; an error names the
agent and the key that is wrong.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
from collections.abc import Mapping
from contextlib import ExitStack
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from pawflow.agent.approval import Approval, When
from pawflow.agent.builtin_tools import builtin_tools
from pawflow.agent.governance import Limits
from pawflow.agent.mcp_tools import McpServerConfig, mcp_tools
from pawflow.agent.models.openai import OpenAIChatModel
from pawflow.agent.spec import AgentSpec
from pawflow.agent.tools import Tool
from pawflow.errors import InvalidInput
from pawflow.interactions.tool_approval import DECISIONS
from pawflow.store import read_policy

TOOL_GROUP = "pawflow.tools"
"""The entry-point group tools are installed in (``name = "module:function_or_tool"``)."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ModelConfig(_Strict):
    url: str = Field(min_length=1, description="The endpoint, e.g. http://127.0.0.1:11434/v1")
    name: str = Field(min_length=1, description="The model name the endpoint knows")
    api_key_env: str | None = Field(
        None, min_length=1, description="The environment variable holding the API key"
    )
    timeout: float = Field(60.0, gt=0, description="Seconds to wait for a reply to begin")
    max_retries: int = Field(2, ge=0, le=10)


class LimitsConfig(_Strict):
    max_steps: int = Field(8, ge=1)
    max_tokens: int | None = Field(64_000, ge=1)
    max_output_tokens: int | None = Field(2_048, ge=1)


class ApprovalConfig(_Strict):
    model_config = ConfigDict(extra="allow", frozen=True)  # the rest: a request policy

    decisions: list[Literal["approve", "edit", "reject", "respond"]] = Field(
        default_factory=lambda: list(DECISIONS),
        description="The decisions offered (approve and reject always)",
    )
    when: str | None = Field(None, description="Ask only when this holds, e.g. args.env == 'prod'")

    @field_validator("decisions")
    @classmethod
    def _checked_decisions(cls, value: list[str]) -> list[str]:
        try:
            Approval.of({"decisions": value})
        except InvalidInput as exc:
            raise ValueError(exc.message) from None
        return value

    @field_validator("when")
    @classmethod
    def _checked_when(cls, value: str | None) -> str | None:
        try:
            if value is not None:
                When.parse(value)
        except InvalidInput as exc:
            raise ValueError(exc.message) from None
        return value


class ToolConfig(_Strict):
    name: str = Field(min_length=1)
    # true: the user approves each call in the chat first; a mapping says how and when
    # (decisions, when) and, with a request policy's keys (assignees, on_expire, expires_in,
    # …; docs/governance.md), who approves it and what happens when nobody does
    approval: bool | ApprovalConfig = False

    def policy(self) -> Approval | None:
        if isinstance(self.approval, ApprovalConfig):
            return Approval.of(
                self.approval.model_dump(include={"decisions", "when"}, exclude_none=True)
            )
        return Approval.of(self.approval)

    def approval_policy(self) -> dict[str, Any] | None:
        """The approval's request policy, checked now (a bad one fails the agent's load)."""
        if not isinstance(self.approval, ApprovalConfig) or not self.approval.model_extra:
            return None
        given = dict(self.approval.model_extra)
        read_policy({k: v for k, v in given.items() if k != "expires_in"})
        return given


class AgentConfig(_Strict):
    name: str = Field(min_length=1)
    model: ModelConfig
    system_prompt: str = Field(min_length=1)
    tools: list[str | ToolConfig] = Field(default_factory=list)
    limits: LimitsConfig = Field(default_factory=lambda: LimitsConfig.model_validate({}))
    history_limit: int = Field(40, ge=1)
    mcp_servers: list[McpServerConfig] = Field(
        default_factory=list, description="External MCP servers whose tools the agent may call"
    )

    @field_validator("model", mode="before")
    @classmethod
    def _no_literal_key(cls, value: Any) -> Any:
        if isinstance(value, Mapping) and "api_key" in value:
            raise ValueError(
                "api_key is not read from the file: put the key in an environment variable"
                " and name it with api_key_env"
            )
        return value

    def tool_configs(self) -> list[ToolConfig]:
        return [ToolConfig(name=t) if isinstance(t, str) else t for t in self.tools]


class AgentsFile(_Strict):
    agents: list[AgentConfig] = Field(min_length=1)


def _yaml_type(data: Any) -> str:
    return "list" if isinstance(data, list) else "text" if isinstance(data, str) else "value"


def _where(loc: tuple[int | str, ...], data: Any) -> str:
    """``agent 'helper': model.url`` for a pydantic error location."""
    parts = list(loc)
    prefix = ""
    if len(parts) >= 2 and parts[0] == "agents" and isinstance(parts[1], int):
        index = parts[1]
        name = None
        with contextlib.suppress(KeyError, IndexError, TypeError, AttributeError):
            name = data["agents"][index].get("name")
        prefix = f"agent {name!r}" if isinstance(name, str) else f"agents[{index}]"
        parts = parts[2:]
    path = ""
    for part in parts:
        path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
    return f"{prefix}: {path}" if prefix and path else prefix or path or "(the file)"


def parse(text: str, *, source: str = "agents.yaml") -> AgentsFile:
    """The file's agents, validated; :class:`InvalidInput` names each bad key."""
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise InvalidInput(f"{source} is not valid YAML: {exc}") from exc
    expected = "expected `agents:` and a list of agents under it (docs/agents.md)"
    if data is None:  # nothing, or only comments
        raise InvalidInput(f"{source}: the file is empty: {expected}")
    if not isinstance(data, dict):
        raise InvalidInput(f"{source}: {expected}, not a {_yaml_type(data)}")
    if "agents" in data and data["agents"] is None:
        raise InvalidInput(f"{source}: agents: the list is empty: give at least one agent")
    try:
        parsed = AgentsFile.model_validate(data)
    except ValidationError as exc:
        problems = [f"{_where(e['loc'], data)}: {e['msg']}" for e in exc.errors()]
        raise InvalidInput(f"{source}: " + "; ".join(problems)) from None
    names = [agent.name for agent in parsed.agents]
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        raise InvalidInput(f"{source}: agent names must be unique: {', '.join(twice)}")
    return parsed


def entry_point_tools() -> dict[str, Any]:
    """The installed tools of the group ``pawflow.tools``, by name (loaded on use)."""
    return {point.name: point for point in entry_points(group=TOOL_GROUP)}


def _tool(config: ToolConfig, builtin: set[str], installed: dict[str, Any], agent: str) -> Tool:
    point = installed.get(config.name)
    if point is None:
        known = sorted(builtin | set(installed))
        raise InvalidInput(
            f"agent {agent!r}: tools: unknown tool {config.name!r}"
            f" (built-in and installed tools: {', '.join(known)})"
        )
    try:
        loaded = point.load()
        tool = loaded if isinstance(loaded, Tool) else Tool.from_function(loaded)
    except Exception as exc:
        raise InvalidInput(
            f"agent {agent!r}: tool {config.name!r} cannot be loaded: {exc}"
        ) from exc
    policy = config.policy() or tool.policy
    return dataclasses.replace(
        tool, name=config.name, approval=policy, approval_policy=config.approval_policy()
    )


def build(
    config: AgentConfig,
    env: Mapping[str, str] | None = None,
    *,
    source: str = "agents.yaml",
    connections: ExitStack | None = None,
) -> AgentSpec:
    """The agent ``config`` describes; its MCP servers' sessions stay open in
    ``connections`` (needed when it names any), closed when that stack closes."""
    env = os.environ if env is None else env
    api_key = None
    if config.model.api_key_env is not None:
        api_key = env.get(config.model.api_key_env)
        if not api_key:
            raise InvalidInput(
                f"{source}: agent {config.name!r}: model.api_key_env: the environment variable"
                f" {config.model.api_key_env} is not set"
            )
    builtin = {tool.name for tool in builtin_tools()}
    installed = entry_point_tools()
    chosen = config.tool_configs()
    for tool in chosen:
        if tool.name in builtin and tool.approval:
            raise InvalidInput(
                f"{source}: agent {config.name!r}: tools: {tool.name} is built in and asks"
                " the user itself: it takes no approval"
            )
    tools = [_tool(t, builtin, installed, config.name) for t in chosen if t.name not in builtin]
    if config.mcp_servers:
        if connections is None:
            raise InvalidInput(
                f"{source}: agent {config.name!r}: mcp_servers: no place to keep sessions open"
            )
        try:
            sessions, remote = mcp_tools(list(config.mcp_servers))
        except Exception as exc:
            raise InvalidInput(
                f"{source}: agent {config.name!r}: mcp_servers: cannot connect: {exc}"
            ) from exc
        connections.enter_context(sessions)
        tools += remote
    model = OpenAIChatModel(
        config.model.name,
        url=config.model.url,
        api_key=api_key,
        timeout=config.model.timeout,
        max_retries=config.model.max_retries,
    )
    try:
        return AgentSpec(
            name=config.name,
            instructions=config.system_prompt,
            model=model,
            tools=tools,
            limits=Limits(**config.limits.model_dump()),
            history_limit=config.history_limit,
            builtins=[t.name for t in chosen if t.name in builtin],
        )
    except InvalidInput as exc:
        raise InvalidInput(f"{source}: agent {config.name!r}: {exc.message}") from exc


def load_agents(
    path: str | Path,
    env: Mapping[str, str] | None = None,
    *,
    connections: ExitStack | None = None,
) -> list[AgentSpec]:
    """The agents of a YAML file, ready to run; :class:`InvalidInput` when anything is wrong.
    Sessions with the agents' MCP servers stay open in ``connections``."""
    file = Path(path)
    try:
        text = file.read_text("utf-8")
    except OSError as exc:
        raise InvalidInput(f"cannot read {file}: {exc.strerror or exc}") from exc
    parsed = parse(text, source=file.name)
    return [build(agent, env, source=file.name, connections=connections) for agent in parsed.agents]
