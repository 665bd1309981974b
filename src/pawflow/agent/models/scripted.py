"""A deterministic model that follows a script: for tests and the offline demo.

A script is a list of turns. Each turn names a regular expression (``match``) tried against
the latest message (a user message, a system line, or the results of the model's last tool
calls, one of which may be the answer a wakeup brought to a question it asked), optionally
only for one ``role``; the first turn that matches gives the
reply: some ``reply`` text and/or ``tool_calls``. Named groups of the match fill ``{name}``
placeholders in the reply and in tool-call arguments. ``default`` answers when nothing
matches. The opening system prompt is never matched::

    turns:
      - match: '(?i)\\bdeploy\\b'
        role: user
        reply: Let me ask where to.
        tool_calls:
          - name: request_confirmation
            arguments: {message: Which environment?, mode: choice, options: [staging, production]}
      - match: '"status": "answered", "answer": "(?P<env>[^"]+)"'
        role: tool
        tool_calls:
          - name: deploy
            arguments: {environment: '{env}'}
    default:
      reply: Say "deploy" and I will deploy the app.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from pawflow.agent.models.base import (
    ChatMessage,
    ModelOutput,
    ModelRequest,
    ModelResponse,
    TextDelta,
    ToolCall,
    estimate_tokens,
)
from pawflow.errors import InvalidInput

ROLES = ("user", "system", "tool", "any")
_PLACEHOLDER = re.compile(r"\{(\w+)\}")


@dataclass(frozen=True)
class ScriptTurn:
    pattern: re.Pattern[str] | None
    role: str
    reply: str
    tool_calls: tuple[tuple[str, Any], ...]

    def matches(self, message: ChatMessage) -> re.Match[str] | None:
        if self.role != "any" and message.role != self.role:
            return None
        if self.pattern is None:
            return re.match("", "")
        return self.pattern.search(message.content or "")


def _fill(value: Any, groups: Mapping[str, str]) -> Any:
    if isinstance(value, str):
        return _PLACEHOLDER.sub(lambda m: groups.get(m.group(1), m.group(0)), value)
    if isinstance(value, list):
        return [_fill(item, groups) for item in value]
    if isinstance(value, dict):
        return {key: _fill(item, groups) for key, item in value.items()}
    return value


def _turn(raw: Any, where: str) -> ScriptTurn:
    if not isinstance(raw, dict):
        raise InvalidInput(f"{where}: a script turn must be a mapping")
    unknown = set(raw) - {"match", "role", "reply", "tool_calls"}
    if unknown:
        raise InvalidInput(f"{where}: unknown keys {sorted(unknown)}")
    role = raw.get("role", "any")
    if role not in ROLES:
        raise InvalidInput(f"{where}: role must be one of {', '.join(ROLES)}")
    try:
        pattern = re.compile(str(raw["match"])) if raw.get("match") is not None else None
    except re.error as exc:
        raise InvalidInput(f"{where}: invalid match pattern: {exc}") from exc
    calls = []
    for position, call in enumerate(raw.get("tool_calls") or ()):
        if not isinstance(call, dict) or not isinstance(call.get("name"), str):
            raise InvalidInput(f"{where}.tool_calls[{position}]: needs a name")
        arguments = call.get("arguments") or {}
        if not isinstance(arguments, dict):
            raise InvalidInput(f"{where}.tool_calls[{position}]: arguments must be a mapping")
        calls.append((call["name"], arguments))
    reply = raw.get("reply", "")
    if not isinstance(reply, str):
        raise InvalidInput(f"{where}: reply must be text")
    if not reply and not calls:
        raise InvalidInput(f"{where}: a turn needs a reply or tool calls")
    return ScriptTurn(pattern, role, reply, tuple(calls))


class ScriptedModel:
    """Replies by script; stateless, so one instance serves any number of conversations."""

    def __init__(self, script: Mapping[str, Any], *, name: str | None = None) -> None:
        if not isinstance(script, Mapping):
            raise InvalidInput("a script must be a mapping with 'turns'")
        unknown = set(script) - {"name", "turns", "default"}
        if unknown:
            raise InvalidInput(f"unknown script keys {sorted(unknown)}")
        turns = script.get("turns") or []
        if not isinstance(turns, list):
            raise InvalidInput("script 'turns' must be a list")
        self.turns = [_turn(raw, f"turns[{i}]") for i, raw in enumerate(turns)]
        default = script.get("default")
        self.default = None if default is None else _turn(default, "default")
        self.name = name or str(script.get("name") or "scripted")

    @classmethod
    def from_text(cls, text: str, *, name: str | None = None) -> ScriptedModel:
        """A script in YAML (or JSON, which is YAML too)."""
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise InvalidInput(f"the script is not valid YAML: {exc}") from exc
        return cls(data or {}, name=name)

    @classmethod
    def from_file(cls, path: str | Path) -> ScriptedModel:
        return cls.from_text(Path(path).read_text("utf-8"))

    @classmethod
    def from_package(cls, package: str, resource: str) -> ScriptedModel:
        """A script shipped as package data of ``package``."""
        return cls.from_text(resources.files(package).joinpath(resource).read_text("utf-8"))

    def respond(self, request: ModelRequest) -> ModelResponse:
        # What the model answers now: the latest message — a user message, a system line,
        # or the results of its last tool calls (all of them, the most recent first). Older
        # messages, such as the results of an earlier turn's calls, are never matched.
        # The opening system prompt is instructions, never something to answer.
        opening = next(
            (i for i, m in enumerate(request.messages) if m.role != "system"),
            len(request.messages),
        )
        latest: list[ChatMessage] = []
        for message in reversed(request.messages[opening:]):
            if message.role == "assistant" or (latest and message.role != latest[0].role):
                break
            latest.append(message)
        calls_so_far = sum(len(m.tool_calls) for m in request.messages)
        for turn in [*self.turns, *([self.default] if self.default else [])]:
            found = next((m for m in map(turn.matches, latest) if m is not None), None)
            if found is None:
                continue
            groups = {k: v for k, v in found.groupdict().items() if v is not None}
            text = _fill(turn.reply, groups)
            calls = tuple(
                ToolCall(
                    id=f"call_{calls_so_far + position + 1}",
                    name=name,
                    arguments=json.dumps(_fill(arguments, groups)),
                )
                for position, (name, arguments) in enumerate(turn.tool_calls)
            )
            return ModelResponse(
                text=text,
                tool_calls=calls,
                usage=estimate_tokens(request.messages, text),
                finish_reason="tool_calls" if calls else "stop",
            )
        return ModelResponse(
            text="(the script has no reply for this)",
            usage=estimate_tokens(request.messages),
            finish_reason="stop",
        )

    def stream(self, request: ModelRequest) -> Iterator[ModelOutput]:
        response = self.respond(request)
        # Word by word, so streaming consumers see the same shape a real model gives them.
        for piece in re.findall(r"\S+\s*|\s+", response.text):
            yield TextDelta(piece)
        yield response
