"""An agent: a name, instructions, a model, tools and the limits it runs under."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from pawflow.agent.builtin_tools import builtin_tools, request_approval
from pawflow.agent.checkpoints import CheckpointStore
from pawflow.agent.governance import Governance, Limits, Policy
from pawflow.agent.loop import AgentLoop
from pawflow.agent.models.base import Model
from pawflow.agent.tools import Tool, Toolbox
from pawflow.errors import InvalidInput

_AGENT_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")

WAKEUP_NOTE = (
    "When request_confirmation returns pending and you end your turn, the user's answer comes"
    ' back later as the result of that call: {{"status": "answered", "answer": ...}},'
    " or a status of cancelled or expired. Act on it and continue the task; restate briefly"
    " what was asked, since the user may come back to it days later."
)


@dataclass
class AgentSpec:
    name: str
    instructions: str
    model: Model
    tools: Sequence[Tool | Callable[..., Any]] = ()
    limits: Limits = field(default_factory=Limits)
    policies: Sequence[Policy] = ()
    history_limit: int = 40
    # The built-in tools it may use, by name (None: all of them).
    builtins: Sequence[str] | None = None

    def __post_init__(self) -> None:
        if not _AGENT_NAME.match(self.name):
            raise InvalidInput(
                f"invalid agent name {self.name!r}: letters, digits, '_', '.', '-' (at most 64)"
            )
        if self.history_limit < 1:
            raise InvalidInput("history_limit must be at least 1")
        self.toolbox  # noqa: B018 - build (and so validate) the tools now, not mid-turn

    @cached_property
    def toolbox(self) -> Toolbox:
        allowed = builtin_tools()
        if self.builtins is not None:
            allowed = [tool for tool in allowed if tool.name in self.builtins]
        return Toolbox([*allowed, *self.tools], approver=request_approval)

    @property
    def system_prompt(self) -> str:
        return f"{self.instructions.strip()}\n\n{WAKEUP_NOTE.format(name=self.name)}".strip()

    def governance(self) -> Governance:
        return Governance(self.limits, self.policies)

    def loop(self, checkpoints: CheckpointStore | None = None) -> AgentLoop:
        return AgentLoop(self.model, self.toolbox, self.governance(), checkpoints)
