"""Agents: one governed loop, model providers, tools, durable wakeups and checkpoints."""

from __future__ import annotations

from pawflow.agent.approval import Approval, When
from pawflow.agent.checkpoints import Checkpoint, CheckpointStore
from pawflow.agent.governance import Budget, Governance, Halt, Limits, deny_pattern
from pawflow.agent.loop import (
    AgentLoop,
    ApprovedCall,
    LoopEvent,
    RunFinished,
    RunRequest,
    RunResult,
)
from pawflow.agent.models import (
    ChatMessage,
    Model,
    ModelRequest,
    ModelResponse,
    ModelSettings,
    OpenAIChatModel,
    ScriptedModel,
    TextDelta,
    ToolCall,
    ToolSpec,
)
from pawflow.agent.spec import AgentSpec
from pawflow.agent.tools import Tool, Toolbox, ToolContext, ToolOutcome, tool

__all__ = [
    "AgentLoop",
    "AgentSpec",
    "Approval",
    "ApprovedCall",
    "Budget",
    "ChatMessage",
    "Checkpoint",
    "CheckpointStore",
    "Governance",
    "Halt",
    "Limits",
    "LoopEvent",
    "Model",
    "ModelRequest",
    "ModelResponse",
    "ModelSettings",
    "OpenAIChatModel",
    "RunFinished",
    "RunRequest",
    "RunResult",
    "ScriptedModel",
    "TextDelta",
    "Tool",
    "ToolCall",
    "ToolContext",
    "ToolOutcome",
    "ToolSpec",
    "Toolbox",
    "When",
    "deny_pattern",
    "tool",
]
