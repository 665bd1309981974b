"""Chat turns: the staged pipeline every message and wakeup runs through, and the session
continuations that make an answer reach whoever asked it in its conversation."""

from __future__ import annotations

from pawflow.chat.claims import Claim
from pawflow.chat.intercepts import Intercept, InterceptChain, InterceptRow, InterceptSpec
from pawflow.chat.pipeline import STAGES, Pipeline, Stage, default_pipeline
from pawflow.chat.service import ChatService
from pawflow.chat.services import ChatServices
from pawflow.chat.sessions import SessionContinuation, SessionRegistry
from pawflow.chat.turn import AgentRuntime, Task, Turn

__all__ = [
    "STAGES",
    "AgentRuntime",
    "ChatService",
    "ChatServices",
    "Claim",
    "Intercept",
    "InterceptChain",
    "InterceptRow",
    "InterceptSpec",
    "Pipeline",
    "SessionContinuation",
    "SessionRegistry",
    "Stage",
    "Task",
    "Turn",
    "default_pipeline",
]
