"""Tools an agent can call: plain Python functions with a JSON Schema derived from them.

``@tool`` (or :meth:`Tool.from_function`) reads the signature's type hints for the schema and
the docstring for the descriptions (the summary, and an ``Args:`` section or ``:param x:``
lines). A parameter annotated :class:`ToolContext` is filled in by the loop, never by the
model. A tool marked ``consequential`` does not run when the model calls it: the user is asked
in the chat first (a ``confirm`` interaction), and it runs only once they approve.
"""

from __future__ import annotations

import enum
import inspect
import json
import re
import types
import typing
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import TYPE_CHECKING, Any, Literal, Protocol, Union, overload

import jsonschema

from pawflow.agent.models.base import ToolCall, ToolSpec
from pawflow.errors import InvalidInput, PawFlowError

if TYPE_CHECKING:
    from pawflow.store import Store

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]{0,63}$")

AWAITING_CONFIRMATION = "awaiting_confirmation"
AWAITING_USER_INPUT = "awaiting_user_input"
AWAITING_APPROVAL = "awaiting_approval"


@dataclass
class ToolContext:
    """Where a tool runs: the store, the conversation, the user it acts for, the run."""

    store: Store
    agent: str
    conversation_id: str
    user: str
    run_id: str
    session_id: str | None = None
    step: int = 0
    # Set when the run continues a wakeup: guards approved calls against running twice.
    wakeup_id: str | None = None


@dataclass(frozen=True)
class ToolOutcome:
    """What a tool call gave back to the model, and whether the turn ends on it."""

    content: str
    end_turn: bool = False
    halt_reason: str | None = None
    reply: str | None = None  # what the agent says when the turn ends here
    error: bool = False
    data: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def failure(cls, message: str) -> ToolOutcome:
        return cls(content=f"Error: {message}", error=True)


class Approver(Protocol):
    """Asks the user to approve a consequential call; the outcome ends the turn."""

    def __call__(self, call: ToolCall, tool: Tool, ctx: ToolContext) -> ToolOutcome: ...


# --- schemas from signatures ----------------------------------------------------------


def _schema_for(hint: Any) -> dict[str, Any]:
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if hint is Any or hint is inspect.Parameter.empty:
        return {}
    if origin in (Union, types.UnionType):
        rest = [a for a in args if a is not type(None)]
        if len(rest) == 1:
            return _schema_for(rest[0])
        return {"anyOf": [_schema_for(a) for a in rest]}
    if origin is Literal:
        values = list(args)
        schema: dict[str, Any] = {"enum": values}
        kinds = {type(v) for v in values}
        if kinds == {str}:
            schema["type"] = "string"
        elif kinds <= {int} and bool not in kinds:
            schema["type"] = "integer"
        return schema
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return {"enum": [member.value for member in hint]}
    simple: dict[Any, dict[str, Any]] = {
        str: {"type": "string"},
        bool: {"type": "boolean"},
        int: {"type": "integer"},
        float: {"type": "number"},
        datetime: {"type": "string", "format": "date-time"},
        date: {"type": "string", "format": "date"},
        dict: {"type": "object"},
        list: {"type": "array"},
    }
    if hint in simple:
        return dict(simple[hint])
    if origin in (list, tuple, set, frozenset, Sequence, Iterable):
        items = args[0] if args else Any
        return {"type": "array", "items": _schema_for(items)}
    if origin in (dict, Mapping):
        return {"type": "object"}
    raise InvalidInput(f"cannot describe parameter type {hint!r} to a model")


def _docstring_parts(doc: str | None) -> tuple[str, dict[str, str]]:
    """The summary of a docstring and the description of each parameter it names."""
    if not doc:
        return "", {}
    text = inspect.cleandoc(doc)
    params: dict[str, str] = {}
    summary_lines: list[str] = []
    section: str | None = None
    current: str | None = None
    for line in text.splitlines():
        stripped = line.strip()
        sphinx = re.match(r"^:param\s+(?:\S+\s+)?(\w+):\s*(.*)$", stripped)
        if sphinx:
            current = sphinx.group(1)
            params[current] = sphinx.group(2).strip()
            section = "sphinx"
            continue
        if re.match(r"^(Args|Arguments|Parameters):\s*$", stripped):
            section, current = "args", None
            continue
        if re.match(r"^(Returns|Raises|Yields|Examples?|Notes?):\s*$", stripped) or (
            stripped.startswith(":") and section == "sphinx"
        ):
            section, current = "other", None
            continue
        if section == "args":
            entry = re.match(r"^(\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$", stripped)
            if entry and not line.startswith(" " * 8):
                current = entry.group(1)
                params[current] = entry.group(2).strip()
            elif current and stripped:
                params[current] = f"{params[current]} {stripped}".strip()
        elif section == "sphinx" and current and stripped:
            params[current] = f"{params[current]} {stripped}".strip()
        elif section is None:
            summary_lines.append(line)
    summary = "\n".join(summary_lines).strip()
    return summary, params


def schema_from_function(func: Callable[..., Any]) -> tuple[str, dict[str, Any], str | None]:
    """``(description, JSON Schema of the arguments, name of the context parameter)``."""
    signature = inspect.signature(func)
    try:
        hints = typing.get_type_hints(func)
    except NameError as exc:
        raise InvalidInput(f"cannot resolve the type hints of {func.__name__}: {exc}") from exc
    summary, described = _docstring_parts(func.__doc__)
    properties: dict[str, Any] = {}
    required: list[str] = []
    context_param: str | None = None
    for name, param in signature.parameters.items():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise InvalidInput(f"tool {func.__name__}: *args and **kwargs cannot be described")
        hint = hints.get(name, Any)
        if hint is ToolContext:
            context_param = name
            continue
        schema = _schema_for(hint)
        if name in described:
            schema["description"] = described[name]
        if param.default is inspect.Parameter.empty:
            required.append(name)
        elif param.default is not None and _jsonable(param.default):
            schema["default"] = param.default
        properties[name] = schema
    parameters: dict[str, Any] = {
        "type": "object",
        "properties": properties,
        "additionalProperties": False,
    }
    if required:
        parameters["required"] = required
    return summary, parameters, context_param


def _jsonable(value: Any) -> bool:
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return False
    return True


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    parameters: dict[str, Any]
    function: Callable[..., Any]
    consequential: bool = False
    context_param: str | None = None

    def __post_init__(self) -> None:
        if not _NAME.match(self.name):
            raise InvalidInput(f"invalid tool name {self.name!r}")
        jsonschema.Draft202012Validator.check_schema(self.parameters)

    @classmethod
    def from_function(
        cls,
        func: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        consequential: bool = False,
    ) -> Tool:
        summary, parameters, context_param = schema_from_function(func)
        return cls(
            name=name or func.__name__,
            description=description or summary or func.__name__,
            parameters=parameters,
            function=func,
            consequential=consequential,
            context_param=context_param,
        )

    def _enums(self) -> dict[str, type[enum.Enum]]:
        """Parameters annotated with an Enum: the model sends values, the function gets members."""
        try:
            hints = typing.get_type_hints(self.function)
        except NameError:
            return {}
        found = {}
        for key, hint in hints.items():
            options = [hint, *typing.get_args(hint)]
            for option in options:
                if isinstance(option, type) and issubclass(option, enum.Enum):
                    found[key] = option
        return found

    @property
    def spec(self) -> ToolSpec:
        return ToolSpec(self.name, self.description, self.parameters)

    def validate(self, arguments: dict[str, Any]) -> list[str]:
        validator = jsonschema.Draft202012Validator(self.parameters)
        return [
            f"{'/'.join(str(p) for p in error.absolute_path) or 'arguments'}: {error.message}"
            for error in sorted(validator.iter_errors(arguments), key=lambda e: list(e.path))
        ]

    def run(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolOutcome:
        """Call the function with validated arguments; its failures go back to the model."""
        kwargs = dict(arguments)
        for key, value in arguments.items():
            kind = self._enums().get(key)
            if kind is not None:
                kwargs[key] = kind(value)  # the schema admitted only its values
        if self.context_param is not None:
            kwargs[self.context_param] = ctx
        try:
            result = self.function(**kwargs)
        except PawFlowError as exc:
            return ToolOutcome.failure(str(exc))
        except Exception as exc:
            return ToolOutcome.failure(f"{type(exc).__name__}: {exc}")
        if isinstance(result, ToolOutcome):
            return result
        if isinstance(result, str):
            return ToolOutcome(result)
        try:
            return ToolOutcome(json.dumps(result, default=str))
        except (TypeError, ValueError):
            return ToolOutcome(str(result))


@overload
def tool(
    func: Callable[..., Any],
    *,
    name: str | None = None,
    description: str | None = None,
    consequential: bool = False,
) -> Tool: ...


@overload
def tool(
    func: None = None,
    *,
    name: str | None = None,
    description: str | None = None,
    consequential: bool = False,
) -> Callable[[Callable[..., Any]], Tool]: ...


def tool(
    func: Callable[..., Any] | None = None,
    *,
    name: str | None = None,
    description: str | None = None,
    consequential: bool = False,
) -> Tool | Callable[[Callable[..., Any]], Tool]:
    """Make a :class:`Tool` of a function: ``@tool`` or ``@tool(consequential=True)``."""

    def wrap(inner: Callable[..., Any]) -> Tool:
        return Tool.from_function(
            inner, name=name, description=description, consequential=consequential
        )

    return wrap if func is None else wrap(func)


class Toolbox:
    """The tools one agent may call, and the single way they are invoked."""

    def __init__(
        self, tools: Iterable[Tool | Callable[..., Any]] = (), *, approver: Approver | None = None
    ) -> None:
        self._tools: dict[str, Tool] = {}
        self.approver = approver
        for item in tools:
            self.add(item)

    def add(self, item: Tool | Callable[..., Any]) -> Tool:
        resolved = item if isinstance(item, Tool) else Tool.from_function(item)
        if resolved.name in self._tools:
            raise InvalidInput(f"a tool named {resolved.name!r} is already registered")
        self._tools[resolved.name] = resolved
        return resolved

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    @property
    def names(self) -> list[str]:
        return list(self._tools)

    def specs(self) -> tuple[ToolSpec, ...]:
        return tuple(t.spec for t in self._tools.values())

    def invoke(self, call: ToolCall, ctx: ToolContext, *, approved: bool = False) -> ToolOutcome:
        """Run one call, unless it is consequential and not yet approved: then ask first."""
        found = self._tools.get(call.name)
        if found is None:
            known = ", ".join(self._tools) or "none"
            return ToolOutcome.failure(f"there is no tool named {call.name!r} (tools: {known})")
        try:
            arguments = call.parsed_arguments()
        except ValueError as exc:
            return ToolOutcome.failure(f"the arguments are not a JSON object: {exc}")
        # Models often spell an omitted optional argument as null.
        required = set(found.parameters.get("required", ()))
        arguments = {k: v for k, v in arguments.items() if v is not None or k in required}
        problems = found.validate(arguments)
        if problems:
            return ToolOutcome.failure("invalid arguments: " + "; ".join(problems))
        if found.consequential and not approved:
            if self.approver is None:
                return ToolOutcome.failure(
                    f"{call.name} needs the user's approval, which cannot be asked here"
                )
            try:
                return self.approver(call, found, ctx)
            except PawFlowError as exc:
                return ToolOutcome.failure(f"could not ask for approval: {exc}")
        return found.run(arguments, ctx)
