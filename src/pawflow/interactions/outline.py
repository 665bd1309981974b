"""The contract's response-schema subset, as far as JSON Schema itself can say it.

For documents that describe requests, such as the API's OpenAPI document: which keywords a
kind takes, what each holds, its type, marker and format, a form's fields. The rest (bounds
that agree, valid patterns, one label per value, required fields that exist) only
:func:`~pawflow.interactions.kinds.prepare_request` checks.
"""

from __future__ import annotations

from typing import Any, Final

from pawflow.interactions.kinds import (
    _FORMAT_OF,
    _ITEM_KEYWORDS,
    _KEYWORDS,
    _MARKED,
    _TEXT_FORMATS,
    _TYPE_OF,
    FIELD_NAME,
    MAX_FORM_FIELDS,
    MAX_OPTIONS,
    MAX_VALUE_CHARS,
    SCALAR_KINDS,
    SCHEMA_DIALECT,
    Kind,
)
from pawflow.interactions.problems import NO_NUL, NOT_BLANK

_A_COUNT = {"type": "integer", "minimum": 0}
_A_NUMBER = {"type": "number"}
_WORDS = {"type": "string", "pattern": NO_NUL}
KEYWORD_VALUES: Final[dict[str, Any]] = {
    "$schema": {"enum": [SCHEMA_DIALECT, SCHEMA_DIALECT + "#"]},
    "type": {"enum": ["boolean", "string", "integer", "number", "array", "object"]},
    "x-pawflow-kind": {"enum": sorted(k.value for k in SCALAR_KINDS)},
    "title": _WORDS,
    "description": _WORDS,
    "x-pawflow-hint": _WORDS,
    "x-pawflow-currency": {"type": "string", "pattern": "^[A-Z]{3}$"},
    "minLength": _A_COUNT,
    "maxLength": _A_COUNT,
    "minItems": _A_COUNT,
    "maxItems": _A_COUNT,
    "minimum": _A_NUMBER,
    "maximum": _A_NUMBER,
    "exclusiveMinimum": _A_NUMBER,
    "exclusiveMaximum": _A_NUMBER,
    "multipleOf": {"type": "number", "exclusiveMinimum": 0},
    "pattern": {"type": "string", "maxLength": 1000, "pattern": NO_NUL},
    "format": {"enum": ["email", "uri", "date", "date-time"]},
    "enum": {"type": "array", "minItems": 1},
    "enumNames": {"type": "array", "items": _WORDS},
    "items": {"type": "object"},
    "uniqueItems": {"const": True},
    "properties": {"type": "object", "minProperties": 1, "maxProperties": MAX_FORM_FIELDS},
    "required": {"type": "array", "items": _WORDS, "uniqueItems": True},
    "additionalProperties": {"const": False},
    "maxBytes": {"type": "integer", "minimum": 1},
    "mediaTypes": {"type": "array", "minItems": 1, "items": _WORDS},
}
"""What each keyword of a response schema holds, as JSON Schema."""
OPTION_VALUES: Final = {
    "type": "array",
    "minItems": 1,
    "maxItems": MAX_OPTIONS,
    "uniqueItems": True,
    "items": {"type": "string", "maxLength": MAX_VALUE_CHARS, "pattern": NOT_BLANK},
}
"""The values of options, as JSON Schema: distinct, not blank, not too long."""


def response_schema_outline(kind: Kind, *, top: bool = True) -> dict[str, Any]:
    """What JSON Schema itself can say of a response schema for ``kind`` (the keywords it
    takes, its type, marker and format; a form's fields), for documents such as the API's.
    The rest (bounds that agree, valid patterns, required fields that exist) is checked
    here, by the contract. ``top``: the schema itself, not one of a form's fields."""
    properties: dict[str, Any] = {
        name: value for name, value in KEYWORD_VALUES.items() if name in _KEYWORDS[kind]
    }
    properties["type"] = {"const": _TYPE_OF[kind]}
    properties["x-pawflow-kind"] = {"const": kind.value}
    if kind in _FORMAT_OF:
        properties["format"] = {"const": _FORMAT_OF[kind]}
    elif kind in (Kind.TEXT, Kind.MULTILINE):
        properties["format"] = {"enum": list(_TEXT_FORMATS)}
    elif kind is Kind.CHOICE:
        properties["enum"] = OPTION_VALUES
    elif kind is Kind.MULTI:
        item_words = {
            "title": _WORDS,
            "description": _WORDS,
            "enumNames": KEYWORD_VALUES["enumNames"],
        }
        properties["items"] = {
            "type": "object",
            "propertyNames": {"enum": sorted(_ITEM_KEYWORDS)},
            "properties": {**item_words, "type": {"const": "string"}, "enum": OPTION_VALUES},
        }
    outline: dict[str, Any] = {
        "type": "object",
        "propertyNames": {"enum": sorted(_KEYWORDS[kind] | ({"$schema"} if top else set()))},
        "properties": properties,
    }
    if kind is Kind.FORM:
        fields = [response_schema_outline(k, top=False) for k in Kind if k is not Kind.FORM]
        properties["properties"] = {
            "type": "object",
            "minProperties": 1,
            "maxProperties": MAX_FORM_FIELDS,
            "propertyNames": {"pattern": f"^{FIELD_NAME.pattern}$"},
            "additionalProperties": {"anyOf": fields},
        }
        outline["required"] = ["properties"]
    elif not top:  # a field says what it is: by its type, or by its marker
        outline["anyOf"] = [{"required": ["type"]}, {"required": ["x-pawflow-kind"]}]
        if kind is Kind.CHOICE:
            outline["required"] = ["enum"]
        elif kind is Kind.MULTI:
            outline["required"] = ["items"]
            properties["items"] = {**properties["items"], "required": ["enum"]}
        elif kind in _MARKED:
            outline["required"] = ["x-pawflow-kind"]
    return outline
