"""The one gate every model call passes before it is made.

:meth:`Governance.before_model_call` sees the request and the run's budget; it may deny the
call (raising :class:`Halt`, which the loop turns into a checkpointed halt), or limit it
(cap ``max_tokens``, withhold tools). The loop has exactly one model call site and it sits
behind this hook; ``tests/agent/test_governance.py`` parses the loop to keep it that way.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from pawflow.agent.models.base import ModelRequest, ModelResponse, Usage, estimate_tokens
from pawflow.errors import Halt as Halt
from pawflow.errors import InvalidInput

# Why a run stopped before the model finished on its own.
MAX_STEPS = "max_steps"
MAX_TOKENS = "max_tokens"
DENIED = "denied"


@dataclass(frozen=True)
class Limits:
    """Per-run bounds: model calls, tokens in all, and tokens per reply."""

    max_steps: int = 8
    max_tokens: int | None = 64_000
    max_output_tokens: int | None = 2_048

    def __post_init__(self) -> None:
        if self.max_steps < 1:
            raise InvalidInput("max_steps must be at least 1")
        for name in ("max_tokens", "max_output_tokens"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise InvalidInput(f"{name} must be positive")


@dataclass
class Budget:
    """What one run has spent so far."""

    steps: int = 0
    tokens: int = 0
    calls: list[Usage] = field(default_factory=list)


# A policy reads a request and returns why it must not be sent, or None to let it pass.
Policy = Callable[[ModelRequest], str | None]


def deny_pattern(pattern: str, reason: str | None = None) -> Policy:
    """A policy refusing requests whose latest user or system message matches ``pattern``."""
    compiled = re.compile(pattern)

    def policy(request: ModelRequest) -> str | None:
        for message in reversed(request.messages):
            if message.role in ("user", "system") and message.content:
                if compiled.search(message.content):
                    return reason or f"the request matches a denied pattern ({pattern})"
                return None
        return None

    return policy


class Governance:
    """Limits and deny policies, applied to every model call of a run."""

    def __init__(
        self,
        limits: Limits | None = None,
        policies: Sequence[Policy] = (),
        *,
        allowed_tools: Sequence[str] | None = None,
    ) -> None:
        self.limits = limits or Limits()
        self.policies = list(policies)
        self.allowed_tools = None if allowed_tools is None else frozenset(allowed_tools)

    def before_model_call(self, request: ModelRequest, budget: Budget) -> ModelRequest:
        """The request as it may be sent; raises :class:`Halt` when it may not be sent."""
        limits = self.limits
        if budget.steps >= limits.max_steps:
            raise Halt(MAX_STEPS, f"the run reached its limit of {limits.max_steps} model calls")
        if limits.max_tokens is not None and budget.tokens >= limits.max_tokens:
            raise Halt(MAX_TOKENS, f"the run used its budget of {limits.max_tokens} tokens")
        for policy in self.policies:
            reason = policy(request)
            if reason:
                raise Halt(DENIED, reason)
        governed = request
        if self.allowed_tools is not None:
            governed = governed.with_changes(
                tools=tuple(t for t in governed.tools if t.name in self.allowed_tools)
            )
        cap = limits.max_output_tokens
        if limits.max_tokens is not None:
            left = limits.max_tokens - budget.tokens
            cap = left if cap is None else min(cap, left)
        if cap is not None and (governed.max_tokens is None or governed.max_tokens > cap):
            governed = governed.with_changes(max_tokens=cap)
        budget.steps += 1
        return governed

    def after_model_call(
        self, request: ModelRequest, response: ModelResponse, budget: Budget
    ) -> None:
        """Book what the call cost (estimated when the provider reports nothing)."""
        usage = response.usage or estimate_tokens(request.messages, response.text)
        budget.calls.append(usage)
        budget.tokens += usage.total
