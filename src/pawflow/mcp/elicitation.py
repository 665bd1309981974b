"""Which requests MCP elicitation can ask, and how: a flat form and back.

An elicitation form is an object of primitive fields (boolean, string with an optional
format, integer/number, single or multiple choice of strings). A request fits when its
kind is one of those, or a form whose every field is; files, anything nested and rich
surfaces do not: they are asked in URL mode (the request's answer page) where the client
takes it, else they stay durable requests with a link. Decimals are strings with a pattern.
Only constraints the form can carry are copied: the server still validates every answer
(R-1.3).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pawflow.errors import FieldError, InvalidInput
from pawflow.interactions import Kind, kind_of_property
from pawflow.records import Interaction

ANSWER_FIELD = "answer"
"""The one field of the form that asks a scalar question."""

DECIMAL_PATTERN = r"^[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)$"
"""What a decimal answer looks like: it travels as a string, exact."""
_STRING_KEEP = ("minLength", "maxLength")
_NUMBER_KEEP = ("minimum", "maximum")
_FORMATS = frozenset({"date", "date-time", "email", "uri"})


@dataclass(frozen=True)
class ElicitationForm:
    schema: dict[str, Any]
    """The ``requestedSchema`` of ``elicitation/create``."""
    scalar: bool
    """Whether the answer is the form's one ``answer`` field rather than the whole form."""

    def answer(self, content: dict[str, Any] | None) -> Any:
        """The answer to send to ``respond_interaction`` for the accepted ``content``."""
        content = dict(content or {})
        if self.scalar:
            return content.get(ANSWER_FIELD)
        return content


def _enum(schema: dict[str, Any]) -> dict[str, Any] | None:
    values = schema.get("enum")
    if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
        return None
    labels = schema.get("enumNames")
    if isinstance(labels, list) and len(labels) == len(values):
        return {
            "oneOf": [{"const": v, "title": str(t)} for v, t in zip(values, labels, strict=True)]
        }
    return {"enum": list(values)}


def _field(kind: Kind, schema: dict[str, Any]) -> dict[str, Any] | None:
    """The primitive field for one scalar kind, or None when elicitation cannot carry it."""
    out: dict[str, Any] = {}
    for key in ("title", "description"):
        if isinstance(schema.get(key), str):
            out[key] = schema[key]
    if kind is Kind.CONFIRM:
        return {**out, "type": "boolean"}
    if kind is Kind.CHOICE:
        choices = _enum(schema)
        return None if choices is None else {**out, "type": "string", **choices}
    if kind is Kind.MULTI:
        items = schema.get("items")
        choices = _enum(items) if isinstance(items, dict) else None
        if choices is None:
            return None
        item = {"anyOf": choices["oneOf"]} if "oneOf" in choices else {"type": "string", **choices}
        bounds = {k: schema[k] for k in ("minItems", "maxItems") if isinstance(schema.get(k), int)}
        return {**out, "type": "array", "items": item, **bounds}
    if kind in (Kind.TEXT, Kind.MULTILINE, Kind.DATE, Kind.DATETIME):
        field = {**out, "type": "string"}
        field.update({k: schema[k] for k in _STRING_KEEP if isinstance(schema.get(k), int)})
        if schema.get("format") in _FORMATS:
            field["format"] = schema["format"]
        return field
    if kind is Kind.DECIMAL:
        # A string, not a JSON number: a number would lose the decimal's exactness.
        return {**out, "type": "string", "pattern": DECIMAL_PATTERN}
    if kind is Kind.INTEGER:
        field = {**out, "type": "integer"}
        field.update(
            {
                k: schema[k]
                for k in _NUMBER_KEEP
                if isinstance(schema.get(k), int | float) and not isinstance(schema.get(k), bool)
            }
        )
        return field
    return None  # files, nested forms


def form_for(record: Interaction) -> ElicitationForm | None:
    """The elicitation form that asks ``record``, or None when it does not fit one."""
    if record.ui_surface is not None:
        return None
    kind = Kind(record.kind)
    schema = record.response_schema
    if kind is Kind.FORM:
        properties = schema.get("properties")
        if not isinstance(properties, dict) or not properties:
            return None
        fields: dict[str, Any] = {}
        for name, prop in properties.items():
            try:
                field_kind = kind_of_property(prop)
            except InvalidInput:
                return None
            field = _field(field_kind, prop)
            if field is None:
                return None
            fields[name] = field
        required = [n for n in schema.get("required", []) if n in fields]
        form = {"type": "object", "properties": fields, "required": required}
        return ElicitationForm(form, scalar=False)
    field = _field(kind, schema)
    if field is None:
        return None
    field.setdefault("title", record.title or "Answer")
    form = {"type": "object", "properties": {ANSWER_FIELD: field}, "required": [ANSWER_FIELD]}
    return ElicitationForm(form, scalar=True)


def retry_message(record: Interaction, errors: list[FieldError]) -> str:
    """The question again, with the server's reasons for refusing the last answer."""
    lines = [record.message, "", "That answer was refused:"]
    lines += [f"- {error.path or ANSWER_FIELD}: {error.message}" for error in errors]
    return "\n".join(lines)
