"""The one row codec of the store's own records: a row's columns to a frozen dataclass.

Rows keep moments as epoch milliseconds and structured values as JSON text (or bytes); a
record's field types say how each column reads back:

- ``datetime`` (or ``datetime | None``): milliseconds to an aware UTC moment;
- ``Annotated[T, JSON]``: JSON text or bytes, decoded (NULL stays None);
- ``bytes``, ``bool``, ``int``: the column as that type;
- ``Annotated[T, Column("name")]``: read from another column name.

Every other field takes the column's value as it is.
"""

from __future__ import annotations

import dataclasses
import json
import re
import types
import typing
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any, TypeVar

from pawflow.clock import from_millis
from pawflow.errors import FieldError, InvalidInput

T = TypeVar("T")


@dataclasses.dataclass(frozen=True)
class Column:
    """Read the field from the column ``name``."""

    name: str


JSON = object()
"""Marks a field kept as JSON text (``Annotated[dict[str, Any], JSON]``)."""


def decode_json(value: Any) -> Any:
    if value is None:
        return None
    if isinstance(value, bytes | bytearray | memoryview):
        value = bytes(value).decode("utf-8")
    return json.loads(value)


def encode_json(value: Any) -> str:
    return json.dumps(value)


def _millis(value: Any) -> Any:
    return None if value is None else from_millis(int(value))


def _nullable(convert: Callable[[Any], Any]) -> Callable[[Any], Any]:
    return lambda value: None if value is None else convert(value)


def _converter(hint: Any) -> tuple[str | None, Callable[[Any], Any] | None]:
    column: str | None = None
    if typing.get_origin(hint) is typing.Annotated:
        base, *marks = typing.get_args(hint)
        for mark in marks:
            if isinstance(mark, Column):
                column = mark.name
        if any(mark is JSON for mark in marks):
            return column, decode_json
        hint = base
    options = set(typing.get_args(hint)) if isinstance(hint, types.UnionType) else {hint}
    options.discard(type(None))
    if options == {datetime}:
        return column, _millis
    if options == {bytes}:
        return column, _nullable(bytes)
    if options == {bool}:
        return column, _nullable(bool)
    if options == {int}:
        return column, _nullable(int)
    return column, None


Plan = tuple[tuple[str, str, Callable[[Any], Any] | None], ...]
_plans: dict[type[Any], Plan] = {}


def _plan(cls: type[Any]) -> Plan:
    found = _plans.get(cls)
    if found is not None:
        return found
    hints = typing.get_type_hints(cls, include_extras=True)
    plan = []
    for item in dataclasses.fields(cls):
        column, convert = _converter(hints[item.name])
        plan.append((item.name, column or item.name, convert))
    _plans[cls] = tuple(plan)
    return _plans[cls]


def decode(cls: type[T], row: Mapping[str, Any]) -> T:
    """The record ``cls`` (a dataclass) of a database row."""
    values = {}
    for name, column, convert in _plan(cls):
        value = row[column]
        values[name] = value if convert is None else convert(value)
    return cls(**values)


def decode_all(cls: type[T], rows: list[dict[str, Any]]) -> list[T]:
    return [decode(cls, row) for row in rows]


def encode_cursor(created: int, request_id: str) -> str:
    """A page's cursor: where the next page of requests starts."""
    return f"{created}.{request_id}"


_CURSOR = re.compile(r"(0|[1-9][0-9]{0,17})\.([^\x00]{1,200})", re.DOTALL)
"""What :func:`encode_cursor` writes: a time that fits a 64-bit column, then an id. Every
text of this form is a cursor (the API's document says so with the same pattern): one
that names no request still says where a page starts."""


def decode_cursor(cursor: str) -> tuple[int, str]:
    found = _CURSOR.fullmatch(cursor) if isinstance(cursor, str) else None
    if found is None:
        raise InvalidInput("invalid cursor", [FieldError("cursor", "not a cursor")])
    return int(found.group(1)), found.group(2)
