"""Rich UI surfaces: the ``pawflow.ui-surface.v1`` contract carried in ``ui_surface`` (R-7.6).

A surface is a richer way to show a request (a table to pick rows from, a card with action
buttons). It never changes what the request asks: its ``fallback`` names the request's own
kind, every answer it produces goes through ``respond_interaction`` and is validated like
any other, and a client that cannot draw it renders that kind instead or hands off
explicitly. Known types (``table``, ``card``, ``tool_approval``) are checked in full; a type
this version does not know is kept as long as its envelope (contract, type, fallback) is
sound, so that newer publishers can reach older clients, which then fall back.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictFloat, StrictInt, StrictStr
from pydantic import ValidationError as PydanticError

from pawflow.errors import FieldError, InvalidInput
from pawflow.interactions.kinds import Kind, Option
from pawflow.interactions.problems import join_path
from pawflow.interactions.tool_approval import Decision
from pawflow.interactions.tool_approval import check as check_tool_approval

SURFACE_CONTRACT = "pawflow.ui-surface.v1"
SURFACE_TYPES = ("table", "card", "tool_approval")
MAX_SURFACE_CHARS = 64 * 1024

Text = Annotated[StrictStr, Field(max_length=1000)]
Key = Annotated[StrictStr, Field(min_length=1, max_length=64, pattern=r"^[A-Za-z_][\w-]*$")]
Cell = StrictStr | StrictInt | StrictFloat | StrictBool | None


class _Part(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Column(_Part):
    key: Key
    label: Text
    align: Literal["start", "end", "center"] = "start"


class Row(_Part):
    value: Annotated[StrictStr, Field(min_length=1, max_length=256)] | None = None
    """The option value this row stands for (required when the fallback is choice/multi)."""
    cells: dict[str, Cell]


class Envelope(BaseModel):
    """What every surface carries, whatever its type."""

    model_config = ConfigDict(extra="allow", frozen=True)

    contract: Literal["pawflow.ui-surface.v1"]
    type: Annotated[StrictStr, Field(min_length=1, max_length=40)]
    fallback: Kind
    title: Text | None = None


class TableSurface(Envelope):
    model_config = ConfigDict(extra="forbid", frozen=True)

    type: Literal["table"]
    columns: Annotated[list[Column], Field(min_length=1, max_length=20)]
    rows: Annotated[list[Row], Field(min_length=1, max_length=500)]


class CardField(_Part):
    label: Text
    value: Annotated[StrictStr, Field(max_length=5000)]


class CardAction(_Part):
    label: Annotated[StrictStr, Field(min_length=1, max_length=200)]
    value: StrictBool | Annotated[StrictStr, Field(min_length=1, max_length=256)]
    """The answer this action sends: true/false for confirm, an option value for choice."""
    style: Literal["primary", "default", "danger"] = "default"


class CardSurface(Envelope):
    model_config = ConfigDict(extra="forbid", frozen=True)

    type: Literal["card"]
    subtitle: Text | None = None
    body: Annotated[StrictStr, Field(max_length=10_000)] | None = None
    fields: Annotated[list[CardField], Field(max_length=50)] = []
    actions: Annotated[list[CardAction], Field(max_length=10)] = []


class ToolApprovalSurface(Envelope):
    """An agent's tool call waiting for a decision (see :mod:`~.tool_approval`)."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    type: Literal["tool_approval"]
    tool: Annotated[StrictStr, Field(min_length=1, max_length=64)]
    agent: Annotated[StrictStr, Field(max_length=200)] | None = None
    description: Annotated[StrictStr, Field(max_length=10_000)] = ""
    arguments: dict[str, Any]
    schema_: dict[str, Any] = Field(alias="schema")
    decisions: Annotated[list[Decision], Field(min_length=2, max_length=4)]


_MODELS: dict[str, type[Envelope]] = {
    "table": TableSurface,
    "card": CardSurface,
    "tool_approval": ToolApprovalSurface,
}
_ACTION_KINDS = frozenset({Kind.CONFIRM, Kind.CHOICE})


def _invalid(errors: Sequence[FieldError]) -> InvalidInput:
    shown = "; ".join(f"{e.path}: {e.message}" for e in errors[:3])
    return InvalidInput(f"invalid ui_surface: {shown}", list(errors))


_TYPE_WORDS = {
    "str": "text",
    "constrained-str": "text",
    "int": "an integer",
    "float": "a number",
    "bool": "a boolean",
}


def _from_pydantic(error: PydanticError) -> list[FieldError]:
    """One FieldError per place; a value that fits no member of a union says what would."""
    found: dict[str, list[str]] = {}
    alternatives: dict[str, list[str]] = {}
    for item in error.errors():
        parts = [p for p in item["loc"] if isinstance(p, int | str)]
        # Union members add their type's name to the location: keep it aside, not in the path.
        member = next((p for p in parts if isinstance(p, str) and p in _TYPE_WORDS), None)
        parts = [
            p for p in parts if isinstance(p, int) or (p not in _TYPE_WORDS and p[:1].islower())
        ]
        path = join_path("ui_surface", parts)
        found.setdefault(path, []).append(str(item["msg"]))
        if member is not None:
            alternatives.setdefault(path, []).append(_TYPE_WORDS[member])
    errors = []
    for path, messages in found.items():
        if len(messages) > 1 and path in alternatives:
            words = list(dict.fromkeys(alternatives[path]))
            errors.append(FieldError(path, f"expected {', '.join(words[:-1])} or {words[-1]}"))
        else:
            errors.append(FieldError(path, messages[0]))
    return errors


def check_surface(
    raw: object, kind: Kind | str, options: Sequence[Option] | None
) -> dict[str, Any]:
    """The surface as stored: checked against its contract and against the request.

    Raises ``InvalidInput`` with paths under ``ui_surface``.
    """
    kind = Kind(kind)
    if not isinstance(raw, Mapping):
        raise _invalid([FieldError("ui_surface", "expected an object")])
    try:
        text = json.dumps(raw, allow_nan=False)
    except (TypeError, ValueError, RecursionError):
        raise _invalid([FieldError("ui_surface", "must contain only JSON values")]) from None
    if len(text) > MAX_SURFACE_CHARS:
        message = f"is too large (at most {MAX_SURFACE_CHARS} characters as JSON)"
        raise _invalid([FieldError("ui_surface", message)])
    data = json.loads(text)
    model = _MODELS.get(data.get("type")) if isinstance(data.get("type"), str) else None
    try:
        surface = (model or Envelope).model_validate(data)
    except PydanticError as error:
        raise _invalid(_from_pydantic(error)) from None
    errors: list[FieldError] = []
    if surface.fallback is not kind:
        message = f'must be the request\'s kind, "{kind}"'
        errors.append(FieldError("ui_surface.fallback", message))
    values = {o.value for o in options or []}
    if isinstance(surface, TableSurface):
        errors += _check_table(surface, kind, values)
    elif isinstance(surface, CardSurface):
        errors += _check_card(surface, kind, values)
    elif isinstance(surface, ToolApprovalSurface):
        errors += check_tool_approval(data, kind)
    if errors:
        raise _invalid(errors)
    return data  # type: ignore[no-any-return]


def _check_table(table: TableSurface, kind: Kind, values: set[str]) -> list[FieldError]:
    errors = []
    keys = [column.key for column in table.columns]
    if len(set(keys)) != len(keys):
        errors.append(FieldError("ui_surface.columns", "column keys must not repeat"))
    seen: set[str] = set()
    for index, row in enumerate(table.rows):
        at = f"ui_surface.rows[{index}]"
        errors += [
            FieldError(f"{at}.cells.{key[:40]}", "not a column of this table")
            for key in row.cells
            if key not in keys
        ]
        if kind not in (Kind.CHOICE, Kind.MULTI):
            continue
        if row.value is None:
            errors.append(FieldError(f"{at}.value", f"required: each row answers the {kind}"))
        elif row.value not in values:
            errors.append(FieldError(f"{at}.value", "not one of the request's option values"))
        elif row.value in seen:
            errors.append(FieldError(f"{at}.value", "another row has this value"))
        else:
            seen.add(row.value)
    return errors


def _check_card(card: CardSurface, kind: Kind, values: set[str]) -> list[FieldError]:
    if not card.actions:
        return []
    if kind not in _ACTION_KINDS:
        message = f"actions answer confirm and choice requests only, not {kind}"
        return [FieldError("ui_surface.actions", message)]
    errors = []
    for index, action in enumerate(card.actions):
        at = f"ui_surface.actions[{index}].value"
        if kind is Kind.CONFIRM and not isinstance(action.value, bool):
            errors.append(FieldError(at, "must be true or false for a confirm"))
        if kind is Kind.CHOICE and action.value not in values:
            errors.append(FieldError(at, "not one of the request's option values"))
    return errors
