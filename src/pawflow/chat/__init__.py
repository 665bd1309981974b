"""Chat turns: the staged pipeline every message and wakeup runs through, and the session
continuations that make an answer reach whoever asked it in its conversation."""

from __future__ import annotations

from pawflow.chat.claims import Claim
from pawflow.chat.handler import handle_message
from pawflow.chat.intercepts import Intercept, InterceptChain, InterceptRow, InterceptSpec
from pawflow.chat.pipeline import (
    STAGES,
    AgentRuntime,
    Pipeline,
    Stage,
    Turn,
    default_pipeline,
)
from pawflow.chat.services import ChatServices
from pawflow.chat.sessions import SessionContinuation, SessionRegistry

__all__ = [
    "STAGES",
    "AgentRuntime",
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
    "Turn",
    "default_pipeline",
    "handle_message",
]
