"""Models the agent loop can use: an OpenAI-compatible provider and a scripted one."""

from __future__ import annotations

from pawflow.agent.models.base import (
    ChatMessage,
    Model,
    ModelOutput,
    ModelRequest,
    ModelResponse,
    TextDelta,
    ToolCall,
    ToolSpec,
    Usage,
    collect,
)
from pawflow.agent.models.openai import ModelSettings, OpenAIChatModel
from pawflow.agent.models.scripted import ScriptedModel

__all__ = [
    "ChatMessage",
    "Model",
    "ModelOutput",
    "ModelRequest",
    "ModelResponse",
    "ModelSettings",
    "OpenAIChatModel",
    "ScriptedModel",
    "TextDelta",
    "ToolCall",
    "ToolSpec",
    "Usage",
    "collect",
]
