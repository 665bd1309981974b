"""Chat turns: the staged pipeline every message and wakeup runs through."""

from __future__ import annotations

from pawflow.chat.handler import handle_message
from pawflow.chat.pipeline import (
    STAGES,
    AgentRuntime,
    Intercept,
    Pipeline,
    Stage,
    Turn,
    default_pipeline,
)

__all__ = [
    "STAGES",
    "AgentRuntime",
    "Intercept",
    "Pipeline",
    "Stage",
    "Turn",
    "default_pipeline",
    "handle_message",
]
