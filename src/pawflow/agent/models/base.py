"""What a model is to the agent loop: messages and tool specs in, a stream of output out.

A model streams :class:`TextDelta` pieces and always ends with exactly one
:class:`ModelResponse` holding the whole reply (text, tool calls, usage). Models that cannot
stream yield their text as one delta. The loop only ever calls ``stream``; a blocking caller
consumes the stream.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal, Protocol

from pawflow.errors import ModelError

Role = Literal["system", "user", "assistant", "tool"]


@dataclass(frozen=True)
class ToolCall:
    """A call the model asked for; ``arguments`` is the JSON text exactly as the model wrote it."""

    id: str
    name: str
    arguments: str = "{}"

    def parsed_arguments(self) -> dict[str, Any]:
        """The arguments as an object; ``ValueError`` when they are not a JSON object."""
        value = json.loads(self.arguments or "{}")
        if not isinstance(value, dict):
            raise ValueError("tool arguments must be a JSON object")
        return value

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "arguments": self.arguments}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ToolCall:
        return cls(id=str(data["id"]), name=str(data["name"]), arguments=str(data["arguments"]))


@dataclass(frozen=True)
class ChatMessage:
    role: Role
    content: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.tool_calls:
            data["tool_calls"] = [call.to_dict() for call in self.tool_calls]
        if self.tool_call_id is not None:
            data["tool_call_id"] = self.tool_call_id
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ChatMessage:
        return cls(
            role=data["role"],
            content=data.get("content"),
            tool_calls=tuple(ToolCall.from_dict(c) for c in data.get("tool_calls") or ()),
            tool_call_id=data.get("tool_call_id"),
        )


@dataclass(frozen=True)
class ToolSpec:
    """A tool as the model sees it: a name, what it does, and a JSON Schema of its arguments."""

    name: str
    description: str
    parameters: dict[str, Any]


@dataclass(frozen=True)
class ModelRequest:
    messages: tuple[ChatMessage, ...]
    tools: tuple[ToolSpec, ...] = ()
    max_tokens: int | None = None
    temperature: float | None = None

    def with_changes(self, **changes: Any) -> ModelRequest:
        return replace(self, **changes)


@dataclass(frozen=True)
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def total(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass(frozen=True)
class TextDelta:
    """A piece of the reply's text, as it arrives."""

    text: str


@dataclass(frozen=True)
class ModelResponse:
    """The whole reply; the last item of every stream."""

    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    usage: Usage | None = None
    finish_reason: str | None = None
    raw: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)


ModelOutput = TextDelta | ModelResponse


class Model(Protocol):
    """A chat model with tool calling. ``stream`` must end with one :class:`ModelResponse`."""

    name: str

    def stream(self, request: ModelRequest) -> Iterator[ModelOutput]: ...


def collect(outputs: Iterator[ModelOutput]) -> ModelResponse:
    """The final response of a stream (for callers outside the loop, such as tests)."""
    final: ModelResponse | None = None
    for output in outputs:
        if isinstance(output, ModelResponse):
            final = output
    if final is None:
        raise ModelError("the model ended its reply without a final response")
    return final


def estimate_tokens(messages: Sequence[ChatMessage], text: str = "") -> Usage:
    """A rough count (four characters a token) for providers that report no usage."""
    prompt = sum(
        len(m.content or "") + sum(len(c.arguments) for c in m.tool_calls) for m in messages
    )
    return Usage(prompt_tokens=prompt // 4 + 1, completion_tokens=len(text) // 4 + 1)
