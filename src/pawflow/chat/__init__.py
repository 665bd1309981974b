"""Chat turns: the staged pipeline every message and wakeup runs through, and the session
continuations that make an answer reach whoever asked it in its conversation."""

from __future__ import annotations

from pawflow.chat.intercepts import Intercept, InterceptChain, InterceptRow, InterceptSpec
from pawflow.chat.matching import Match
from pawflow.chat.pipeline import STAGES, Pipeline, Stage, default_pipeline
from pawflow.chat.plugins import PluginAPI
from pawflow.chat.service import ChatService
from pawflow.chat.sessions import SessionContinuation, SessionRegistry
from pawflow.chat.turn import AgentRuntime, Task, Turn

__all__ = [
    "STAGES",
    "AgentRuntime",
    "ChatService",
    "Intercept",
    "InterceptChain",
    "InterceptRow",
    "InterceptSpec",
    "Match",
    "Pipeline",
    "PluginAPI",
    "SessionContinuation",
    "SessionRegistry",
    "Stage",
    "Task",
    "Turn",
    "default_pipeline",
]
