"""Tools an agent can call: plain Python functions with a JSON Schema derived from them.

``@tool`` (or :meth:`Tool.from_function`) makes a pydantic model of the signature for the
schema (and to hand the arguments over typed), with the docstring's descriptions (the
summary, and an ``Args:`` section or ``:param x:`` lines, read by ``docstring_parser``).
A parameter annotated :class:`ToolContext` is filled in by the loop, never by the model.
A tool with an ``approval`` policy (or marked ``consequential``) does not run when the model
calls it: the user is asked in the chat first (a ``tool_approval`` request, a ``confirm`` to
clients that do not know it), and it runs only once they approve — or edit the arguments
(see :mod:`pawflow.agent.approval`). A call allowed by an approval rule runs without asking;
a call identical to one rejected earlier in the run is refused without asking again.
"""

from __future__ import annotations

import inspect
import json
import re
import typing
import warnings
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Protocol, overload

import docstring_parser
import jsonschema
from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model
from pydantic.errors import (
    PydanticInvalidForJsonSchema,
    PydanticSchemaGenerationError,
    PydanticUserError,
)
from pydantic.json_schema import (
    GenerateJsonSchema,
    JsonSchemaMode,
    JsonSchemaValue,
    PydanticJsonSchemaWarning,
)
from pydantic_core import CoreSchema, core_schema

from pawflow.agent.approval import Approval
from pawflow.agent.models.base import ToolCall, ToolSpec
from pawflow.errors import InvalidInput, PawFlowError
from pawflow.interactions.tool_approval import canonical
from pawflow.redaction import redact

if TYPE_CHECKING:
    from pawflow.store import Store, Unit

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
    # Set when the run continues one that may have run before (the caller knows what, a
    # chat its wakeup turn): records, in the transaction of an approved call, that the call
    # started, and is False when it had started before. Guards approved calls against
    # running twice.
    started: Callable[[Unit], bool] | None = None
    # Set when the caller delivers parked answers as turns of its own (a chat, as wakeup
    # turns): takes the answer to a signal for the call that waits on it, in the unit
    # given, so that no later turn delivers it too; False when one already does. None: a
    # tool does not wait for an answer in the turn; it comes back however the caller
    # delivers parked answers.
    take_answer: Callable[[Unit, str], bool] | None = None
    # The call being run: a tool that ends the turn names it, so its answer comes back as
    # this call's result.
    call: ToolCall | None = None
    # Calls rejected in this run, by call_key: an identical call is refused without asking.
    rejected: dict[str, str] = field(default_factory=dict)


def call_key(name: str, arguments: Mapping[str, Any]) -> str:
    """What makes two calls the same call: the tool and its arguments."""
    return canonical({"tool": name, "arguments": dict(arguments)})


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


def _redacted(outcome: ToolOutcome) -> ToolOutcome:
    """A tool's output as it may be stored, shown and sent to the model: a secret the
    process knows (:mod:`pawflow.redaction`) is masked, whatever the tool printed."""
    content = redact(outcome.content)
    reply = None if outcome.reply is None else redact(outcome.reply)
    if content == outcome.content and reply == outcome.reply:
        return outcome
    return replace(outcome, content=content, reply=reply)


class Approver(Protocol):
    """Asks the user to approve a consequential call; the outcome ends the turn."""

    def __call__(self, call: ToolCall, tool: Tool, ctx: ToolContext) -> ToolOutcome: ...


# --- schemas from signatures ----------------------------------------------------------


class _ToolSchema(GenerateJsonSchema):
    """JSON Schema as models read it best: no titles, and an optional value is just absent
    (the toolbox drops the nulls models send for them)."""

    def field_title_should_be_set(self, schema: Any) -> bool:
        return False

    def nullable_schema(self, schema: core_schema.NullableSchema) -> JsonSchemaValue:
        return self.generate_inner(schema["schema"])

    def default_schema(self, schema: core_schema.WithDefaultSchema) -> JsonSchemaValue:
        if schema.get("default") is None:
            return self.generate_inner(schema["schema"])
        return super().default_schema(schema)

    def generate(self, schema: CoreSchema, mode: JsonSchemaMode = "validation") -> JsonSchemaValue:
        found = super().generate(schema, mode)
        for described in (found, *found.get("$defs", {}).values()):
            described.pop("title", None)
        return found


def arguments_model(func: Callable[..., Any]) -> tuple[type[BaseModel], str | None]:
    """A pydantic model of ``func``'s arguments (described by its docstring), and the name of
    its :class:`ToolContext` parameter, which the loop fills in and the model never sees."""
    try:
        hints = typing.get_type_hints(func)
    except NameError as exc:
        raise InvalidInput(f"cannot resolve the type hints of {func.__name__}: {exc}") from exc
    described = {
        param.arg_name: " ".join(param.description.split())
        for param in docstring_parser.parse(func.__doc__ or "").params
        if param.description
    }
    fields: dict[str, Any] = {}
    context_param: str | None = None
    for name, param in inspect.signature(func).parameters.items():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise InvalidInput(f"tool {func.__name__}: *args and **kwargs cannot be described")
        hint = hints.get(name, Any)
        if hint is ToolContext:
            context_param = name
            continue
        default = ... if param.default is inspect.Parameter.empty else param.default
        fields[name] = (hint, Field(default, description=described.get(name)))
    try:
        model = create_model(
            f"{func.__name__}_arguments", __config__=ConfigDict(extra="forbid"), **fields
        )
    except PydanticUserError as exc:
        raise InvalidInput(f"tool {func.__name__}: {exc}") from exc
    except PydanticSchemaGenerationError as exc:
        raise InvalidInput(f"tool {func.__name__}: cannot describe a parameter type") from exc
    return model, context_param


def schema_from_function(func: Callable[..., Any]) -> tuple[str, dict[str, Any], str | None]:
    """``(description, JSON Schema of the arguments, name of the context parameter)``."""
    model, context_param = arguments_model(func)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PydanticJsonSchemaWarning)  # odd defaults: left out
            parameters = model.model_json_schema(schema_generator=_ToolSchema)
    except PydanticInvalidForJsonSchema as exc:
        raise InvalidInput(f"tool {func.__name__}: {exc}") from exc
    doc = docstring_parser.parse(func.__doc__ or "")
    summary = "\n\n".join(part for part in (doc.short_description, doc.long_description) if part)
    return summary, parameters, context_param


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    parameters: dict[str, Any]
    function: Callable[..., Any]
    consequential: bool = False
    context_param: str | None = None
    arguments: type[BaseModel] | None = field(default=None, compare=False, repr=False)
    """The model of the function's arguments: it hands them over typed (an Enum's member)."""
    approval: Approval | Mapping[str, Any] | bool | None = None
    """How calls are approved (:class:`Approval`, a mapping of it, or True); implies
    ``consequential``. A consequential tool without one offers every decision, always."""
    approval_policy: Mapping[str, Any] | None = field(default=None, compare=False)
    """Who approves a consequential call and what happens when nobody does (the request's
    policy, docs/governance.md); None: the user in the chat, as always."""

    def __post_init__(self) -> None:
        if not _NAME.match(self.name):
            raise InvalidInput(f"invalid tool name {self.name!r}")
        jsonschema.Draft202012Validator.check_schema(self.parameters)
        policy = Approval.of(self.approval)
        if policy is None and self.consequential:
            policy = Approval()
        object.__setattr__(self, "approval", policy)
        object.__setattr__(self, "consequential", policy is not None)

    @property
    def policy(self) -> Approval | None:
        """The approval policy (None: calls run when the model makes them)."""
        return self.approval if isinstance(self.approval, Approval) else None

    @classmethod
    def from_function(
        cls,
        func: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        consequential: bool = False,
        approval: Approval | Mapping[str, Any] | bool | None = None,
    ) -> Tool:
        summary, parameters, context_param = schema_from_function(func)
        return cls(
            name=name or func.__name__,
            description=description or summary or func.__name__,
            parameters=parameters,
            function=func,
            consequential=consequential,
            context_param=context_param,
            arguments=arguments_model(func)[0],
            approval=approval,
        )

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
        if self.arguments is not None:
            try:
                typed = self.arguments.model_validate(arguments)
            except ValidationError as exc:
                return ToolOutcome.failure(f"invalid arguments: {exc}")
            kwargs = {key: getattr(typed, key) for key in typed.model_fields_set}
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
    approval: Approval | Mapping[str, Any] | bool | None = None,
) -> Tool: ...


@overload
def tool(
    func: None = None,
    *,
    name: str | None = None,
    description: str | None = None,
    consequential: bool = False,
    approval: Approval | Mapping[str, Any] | bool | None = None,
) -> Callable[[Callable[..., Any]], Tool]: ...


def tool(
    func: Callable[..., Any] | None = None,
    *,
    name: str | None = None,
    description: str | None = None,
    consequential: bool = False,
    approval: Approval | Mapping[str, Any] | bool | None = None,
) -> Tool | Callable[[Callable[..., Any]], Tool]:
    """Make a :class:`Tool` of a function: ``@tool`` or ``@tool(consequential=True)``."""

    def wrap(inner: Callable[..., Any]) -> Tool:
        return Tool.from_function(
            inner,
            name=name,
            description=description,
            consequential=consequential,
            approval=approval,
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
        ctx.call = call
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
        if not approved and call_key(call.name, arguments) in ctx.rejected:
            return ToolOutcome(
                f"Refused without asking again: this very call was rejected in this run."
                f" {ctx.rejected[call_key(call.name, arguments)]}",
                error=True,
            )
        policy = found.policy
        if policy is not None and not approved and policy.needed(arguments):
            with ctx.store.unit(write=False) as u:
                rule = u.approvals.matching_rule(
                    agent=ctx.agent,
                    tool=call.name,
                    arguments=arguments,
                    conversation_id=ctx.conversation_id,
                    user=ctx.user,
                )
            if rule is not None:
                outcome = _redacted(found.run(arguments, ctx))
                allowed = {
                    "request_id": rule.request_id,
                    "rule_id": rule.id,
                    "tool": call.name,
                    "decision": "approve",
                    "decided_by": rule.created_by,
                    "proposed": arguments,
                    "approved": arguments,
                    "executed": arguments,
                    "digest": None,
                }
                return replace(outcome, data={**outcome.data, "approval": allowed})
            if self.approver is None:
                return ToolOutcome.failure(
                    f"{call.name} needs the user's approval, which cannot be asked here"
                )
            try:
                return self.approver(call, found, ctx)
            except PawFlowError as exc:
                return ToolOutcome.failure(f"could not ask for approval: {exc}")
        return _redacted(found.run(arguments, ctx))
