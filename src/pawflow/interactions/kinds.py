"""Kinds, options and response schemas of the ``pawflow.user-interaction.v1`` contract.

A request names a ``kind``; its ``response_schema`` is a small subset of JSON Schema 2020-12
(R-1.3) that form renderers and MCP elicitation clients understand. ``prepare_request`` checks
that a given schema stays inside the subset and agrees with the kind, or derives one, and
returns the *effective* schema every answer is later validated against.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from enum import StrEnum
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Final

from pydantic import BaseModel, ConfigDict

from pawflow.errors import FieldError, InvalidInput, InvalidPattern
from pawflow.interactions.patterns import compile_pattern

if TYPE_CHECKING:
    import jsonschema.protocols
from pawflow.interactions.problems import (
    clip,
    invalid,
    is_clean_text,
    join_path,
    name_of,
)

CONTRACT: Final = "pawflow.user-interaction.v1"

JsonValue = Any
"""Any value that ``json.dumps`` can write: None, bool, int, float, str, list, dict."""


class Kind(StrEnum):
    CONFIRM = "confirm"
    CHOICE = "choice"
    MULTI = "multi"
    TEXT = "text"
    MULTILINE = "multiline"
    INTEGER = "integer"
    DECIMAL = "decimal"
    DATE = "date"
    DATETIME = "datetime"
    FILE = "file"
    FORM = "form"


CONFIRMATION_KINDS: frozenset[Kind] = frozenset({Kind.CONFIRM, Kind.CHOICE, Kind.MULTI})
SCALAR_KINDS: frozenset[Kind] = frozenset(Kind) - {Kind.FORM}
OPTION_KINDS: frozenset[Kind] = frozenset({Kind.CHOICE, Kind.MULTI})
_KIND_NAMES = frozenset(k.value for k in Kind)

SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"
MAX_OPTIONS = 1000
MAX_VALUE_CHARS = 256
MAX_LABEL_CHARS = 1000
MAX_FORM_FIELDS = 100
MAX_SCHEMA_CHARS = 100_000
FIELD_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]{0,63}")
MEDIA_TYPE = re.compile(r"(\*|[a-z0-9][a-z0-9!#$&^_.+-]*)/(\*|[a-z0-9][a-z0-9!#$&^_.+-]*)", re.I)


class Option(BaseModel):
    """One answer a ``choice``/``multi`` request offers: the stored ``value`` and its label."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    value: str
    label: str


# --- kinds and options --------------------------------------------------------------------


def parse_kind(raw: object) -> Kind:
    """Read a kind name; anything else names the eleven kinds."""
    if isinstance(raw, Kind):
        return raw
    if isinstance(raw, str):
        name = raw.strip().lower()
        if name in _KIND_NAMES:
            return Kind(name)
        shown = f"unknown kind {clip(raw)!r}"
    else:
        shown = "kind must be a string"
    message = f"{shown}: expected one of {', '.join(k.value for k in Kind)}"
    raise InvalidInput(message, [FieldError("kind", message)])


def normalize_options(raw: object) -> list[Option]:
    """Accept ``["a", "b"]`` or ``[{"value": "a", "label": "A"}, …]`` and expand it."""
    return _options(raw, "options")


def _options(raw: object, path: str, labels: object = None) -> list[Option]:
    errors: list[FieldError] = []
    if not isinstance(raw, list | tuple):
        raise invalid("invalid options", [FieldError(path, "expected a list of options")])
    if not raw:
        raise invalid("invalid options", [FieldError(path, "needs at least one option")])
    if len(raw) > MAX_OPTIONS:
        raise invalid("invalid options", [FieldError(path, f"at most {MAX_OPTIONS} options")])
    options: list[Option] = []
    seen: dict[str, int] = {}
    for index, item in enumerate(raw):
        at = f"{path}[{index}]"
        value: object
        label: object = None
        if isinstance(item, Option):
            value, label, value_at = item.value, item.label, f"{at}.value"
        elif isinstance(item, str):
            value, value_at = item, at
        elif isinstance(item, Mapping):
            for key in item:
                if key not in ("value", "label"):
                    errors.append(FieldError(f"{at}.{name_of(key)}", "unknown key"))
            value, label, value_at = item.get("value"), item.get("label"), f"{at}.value"
            if label is not None and (not isinstance(label, str) or not label.strip()):
                errors.append(FieldError(f"{at}.label", "must be a non-empty string"))
                label = None
        else:
            errors.append(FieldError(at, "expected a string or {value, label}"))
            continue
        problem = _value_problem(value)
        if problem:
            errors.append(FieldError(value_at, problem))
            continue
        assert isinstance(value, str)
        if value in seen:
            errors.append(FieldError(value_at, f"duplicate of {path}[{seen[value]}]"))
            continue
        seen[value] = index
        if isinstance(label, str) and (len(label) > MAX_LABEL_CHARS or not is_clean_text(label)):
            errors.append(FieldError(f"{at}.label", "label is too long or has invalid characters"))
            continue
        options.append(Option(value=value, label=label if isinstance(label, str) else value))
    if errors:
        raise invalid("invalid options", errors)
    if labels is not None:
        return _apply_labels(options, labels, path)
    return options


def _value_problem(value: object) -> str | None:
    if not isinstance(value, str):
        return "value must be a string"
    if not value.strip():
        return "value must not be empty"
    if len(value) > MAX_VALUE_CHARS:
        return f"value must be at most {MAX_VALUE_CHARS} characters"
    if not is_clean_text(value):
        return "value contains characters that are not allowed"
    return None


def _apply_labels(options: list[Option], labels: object, enum_path: str) -> list[Option]:
    """Labels from an ``enumNames`` list, which must pair one-to-one with ``enum``."""
    path = enum_path.rsplit(".", 1)[0] + ".enumNames"
    ok = isinstance(labels, list) and len(labels) == len(options)
    if not ok:
        raise invalid("invalid options", [FieldError(path, "needs one label per enum value")])
    assert isinstance(labels, list)
    errors = [
        FieldError(f"{path}[{i}]", "must be a non-empty string")
        for i, label in enumerate(labels)
        if not isinstance(label, str) or not label.strip() or not is_clean_text(label)
    ]
    if errors:
        raise invalid("invalid options", errors)
    return [
        Option(value=o.value, label=str(label)) for o, label in zip(options, labels, strict=True)
    ]


# --- which kind a field schema is ---------------------------------------------------------

_TYPE_OF: dict[Kind, str] = {
    Kind.CONFIRM: "boolean",
    Kind.CHOICE: "string",
    Kind.MULTI: "array",
    Kind.TEXT: "string",
    Kind.MULTILINE: "string",
    Kind.INTEGER: "integer",
    Kind.DECIMAL: "number",
    Kind.DATE: "string",
    Kind.DATETIME: "string",
    Kind.FILE: "object",
    Kind.FORM: "object",
}
_FORMAT_OF: dict[Kind, str] = {Kind.DATE: "date", Kind.DATETIME: "date-time"}
# Kinds whose JSON Schema type alone is ambiguous carry an explicit marker.
_MARKED = frozenset({Kind.MULTILINE, Kind.DECIMAL, Kind.FILE})


def kind_of_property(schema: dict[str, Any]) -> Kind:
    """Which scalar kind a form field schema describes."""
    if not isinstance(schema, Mapping):
        raise InvalidInput("a field schema must be an object")
    marker = schema.get("x-pawflow-kind")
    if marker is not None:
        if isinstance(marker, str) and marker in _KIND_NAMES and marker != "form":
            return Kind(marker)
        names = ", ".join(sorted(k.value for k in SCALAR_KINDS))
        raise InvalidInput(f"x-pawflow-kind must be one of: {names}")
    kind_type = schema.get("type")
    if kind_type == "boolean":
        return Kind.CONFIRM
    if kind_type == "integer":
        return Kind.INTEGER
    if kind_type == "number":
        return Kind.DECIMAL
    if kind_type == "string":
        if "enum" in schema:
            return Kind.CHOICE
        if schema.get("format") == "date":
            return Kind.DATE
        return Kind.DATETIME if schema.get("format") == "date-time" else Kind.TEXT
    if kind_type == "array":
        items = schema.get("items")
        if isinstance(items, Mapping) and "enum" in items:
            return Kind.MULTI
        raise InvalidInput("a list field needs items with an enum (kind multi)")
    if kind_type == "object":
        raise InvalidInput('nested objects are not supported (files use "x-pawflow-kind": "file")')
    raise InvalidInput("a field needs a type: boolean, string, integer, number or array")


# --- the schema subset --------------------------------------------------------------------

# x-pawflow-hint: what a person should enter, in words (shown under the field, and in the
# error when a pattern refuses the answer); x-pawflow-currency: an ISO 4217 code for amounts.
_COMMON = frozenset({"type", "title", "description", "default", "x-pawflow-kind", "x-pawflow-hint"})
_STRING = frozenset({"minLength", "maxLength", "pattern", "format"})
_NUMBER = frozenset(
    {
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "x-pawflow-currency",
    }
)
_KEYWORDS: dict[Kind, frozenset[str]] = {
    Kind.CONFIRM: _COMMON,
    Kind.CHOICE: _COMMON | {"enum", "enumNames"},
    Kind.MULTI: _COMMON | {"items", "minItems", "maxItems", "uniqueItems"},
    Kind.TEXT: _COMMON | _STRING,
    Kind.MULTILINE: _COMMON | _STRING,
    Kind.INTEGER: _COMMON | _NUMBER,
    Kind.DECIMAL: _COMMON | _NUMBER,
    Kind.DATE: _COMMON | {"format"},
    Kind.DATETIME: _COMMON | {"format"},
    Kind.FILE: _COMMON | {"maxBytes", "mediaTypes"},
    Kind.FORM: _COMMON | {"properties", "required", "additionalProperties"},
}
_ITEM_KEYWORDS = frozenset({"type", "title", "description", "enum", "enumNames"})
_ALL_KEYWORDS = frozenset().union(*_KEYWORDS.values()) | {"$schema", "enum", "enumNames"}
SCHEMA_KEYWORDS: Final = tuple(sorted(_ALL_KEYWORDS))
"""Every keyword a response schema may use (which ones, depends on the kind)."""
_TEXT_FORMATS = ("email", "uri")
_CURRENCY = re.compile(r"^[A-Z]{3}$")


def _check_keywords(
    schema: Mapping[str, Any], allowed: frozenset[str], kind: Kind, path: str
) -> list[FieldError]:
    errors = []
    for key in schema:
        name = name_of(key)
        if key in allowed:
            continue
        if key in _ALL_KEYWORDS:
            errors.append(FieldError(f"{path}.{name}", f"{name} is not allowed for kind {kind}"))
        else:
            errors.append(FieldError(f"{path}.{name}", f"unknown keyword {name!r}"))
    return errors


def _is_number(value: object) -> bool:
    return (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and value == value
        and (not isinstance(value, float) or abs(value) != float("inf"))
    )


def _is_count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _check_bounds(
    schema: Mapping[str, Any], low: str, high: str, test: Any, expected: str, path: str
) -> list[FieldError]:
    errors = [
        FieldError(f"{path}.{key}", f"must be {expected}")
        for key in (low, high)
        if key in schema and not test(schema[key])
    ]
    if not errors and low in schema and high in schema and schema[low] > schema[high]:
        errors.append(FieldError(f"{path}.{low}", f"must not be greater than {high}"))
    return errors


def _field(kind: Kind, schema: object, path: str, top: bool) -> tuple[dict[str, Any], list[Option]]:
    """Check one schema for ``kind``; return it with defaults merged and its options.

    Raises ``InvalidInput`` with every problem found at this level.
    """
    if not isinstance(schema, Mapping):
        raise invalid(
            "invalid response_schema", [FieldError(path, "expected a JSON Schema object")]
        )
    allowed = _KEYWORDS[kind] | ({"$schema"} if top else set())
    errors = _check_keywords(schema, allowed, kind, path)
    if "type" in schema and schema["type"] != _TYPE_OF[kind]:
        message = f'must be "{_TYPE_OF[kind]}" for kind {kind}'
        errors.append(FieldError(f"{path}.type", message))
    if "x-pawflow-kind" in schema and schema["x-pawflow-kind"] != kind.value:
        errors.append(FieldError(f"{path}.x-pawflow-kind", f'must be "{kind}" here'))
    for key in ("title", "description", "x-pawflow-hint"):
        if key in schema and not isinstance(schema[key], str):
            errors.append(FieldError(f"{path}.{key}", "expected a string"))
    currency = schema.get("x-pawflow-currency")
    if currency is not None and not (isinstance(currency, str) and _CURRENCY.match(currency)):
        errors.append(FieldError(f"{path}.x-pawflow-currency", "expected a code such as EUR"))
    if "$schema" in schema and str(schema["$schema"]).rstrip("#") != SCHEMA_DIALECT:
        errors.append(FieldError(f"{path}.$schema", f"only {SCHEMA_DIALECT} is supported"))
    if errors:
        raise invalid("invalid response_schema", errors)
    effective: dict[str, Any] = {"type": _TYPE_OF[kind], **schema}
    if kind in _MARKED:
        effective["x-pawflow-kind"] = kind.value
    options: list[Option] = []
    if kind is Kind.CHOICE and "enum" in schema:
        options = _options(schema["enum"], f"{path}.enum", schema.get("enumNames"))
    elif kind is Kind.MULTI:
        options = _check_multi(schema, effective, path)
    elif kind in (Kind.TEXT, Kind.MULTILINE):
        _check_text(schema, path)
    elif kind in (Kind.INTEGER, Kind.DECIMAL):
        _check_number(schema, path)
    elif kind in _FORMAT_OF:
        if schema.get("format", _FORMAT_OF[kind]) != _FORMAT_OF[kind]:
            message = f'must be "{_FORMAT_OF[kind]}" for kind {kind}'
            raise invalid("invalid response_schema", [FieldError(f"{path}.format", message)])
        effective["format"] = _FORMAT_OF[kind]
    elif kind is Kind.FILE:
        _check_file(schema, path)
    return effective, options


def _check_multi(schema: Mapping[str, Any], effective: dict[str, Any], path: str) -> list[Option]:
    errors = _check_bounds(schema, "minItems", "maxItems", _is_count, "a count", path)
    if schema.get("uniqueItems", True) is not True:
        errors.append(FieldError(f"{path}.uniqueItems", "must be true: choices do not repeat"))
    items = schema.get("items", {})
    if not isinstance(items, Mapping):
        errors.append(FieldError(f"{path}.items", "expected a JSON Schema object"))
    else:
        errors += _check_keywords(items, _ITEM_KEYWORDS, Kind.MULTI, f"{path}.items")
        if items.get("type", "string") != "string":
            errors.append(FieldError(f"{path}.items.type", 'must be "string" for kind multi'))
    if errors:
        raise invalid("invalid response_schema", errors)
    effective["uniqueItems"] = True
    effective["items"] = {"type": "string", **items}
    if "enum" not in items:
        return []
    options = _options(items["enum"], f"{path}.items.enum", items.get("enumNames"))
    if "minItems" in schema and schema["minItems"] > len(options):
        message = f"must not be more than the {len(options)} options"
        raise invalid("invalid response_schema", [FieldError(f"{path}.minItems", message)])
    return options


def _check_text(schema: Mapping[str, Any], path: str) -> None:
    errors = _check_bounds(schema, "minLength", "maxLength", _is_count, "a count", path)
    if "format" in schema and schema["format"] not in _TEXT_FORMATS:
        message = "must be email or uri (dates have their own kinds)"
        errors.append(FieldError(f"{path}.format", message))
    pattern = schema.get("pattern")
    if pattern is not None:
        try:
            compile_pattern(pattern)
        except InvalidPattern as exc:
            errors.append(FieldError(f"{path}.pattern", str(exc)))
    if errors:
        raise invalid("invalid response_schema", errors)


def _check_number(schema: Mapping[str, Any], path: str) -> None:
    errors = _check_bounds(schema, "minimum", "maximum", _is_number, "a number", path)
    errors += _check_bounds(
        schema, "exclusiveMinimum", "exclusiveMaximum", _is_number, "a number", path
    )
    step = schema.get("multipleOf", 1)
    if not _is_number(step) or step <= 0:
        errors.append(FieldError(f"{path}.multipleOf", "must be a number greater than 0"))
    if errors:
        raise invalid("invalid response_schema", errors)


def _check_file(schema: Mapping[str, Any], path: str) -> None:
    errors = []
    size = schema.get("maxBytes", 1)
    if not _is_count(size) or size < 1:
        errors.append(FieldError(f"{path}.maxBytes", "must be a whole number of bytes above 0"))
    types = schema.get("mediaTypes", ["*/*"])
    if not isinstance(types, list) or not types:
        errors.append(FieldError(f"{path}.mediaTypes", "expected a non-empty list of media types"))
    else:
        for index, media in enumerate(types):
            if not isinstance(media, str) or not MEDIA_TYPE.fullmatch(media):
                message = 'expected a media type such as "image/png" or "image/*"'
                errors.append(FieldError(f"{path}.mediaTypes[{index}]", message))
    if errors:
        raise invalid("invalid response_schema", errors)


def _check_form(schema: object, path: str) -> dict[str, Any]:
    effective, _ = _field(Kind.FORM, schema, path, top=True)
    errors: list[FieldError] = []
    if effective.get("additionalProperties", False) is not False:
        message = "only false is supported: unknown fields are always rejected"
        errors.append(FieldError(f"{path}.additionalProperties", message))
    properties = effective.get("properties")
    if not isinstance(properties, Mapping) or not properties:
        errors.append(FieldError(f"{path}.properties", "a form needs at least one field"))
        raise invalid("invalid response_schema", errors)
    if len(properties) > MAX_FORM_FIELDS:
        message = f"a form has at most {MAX_FORM_FIELDS} fields"
        raise invalid("invalid response_schema", [FieldError(f"{path}.properties", message)])
    fields: dict[str, Any] = {}
    for name, field_schema in properties.items():
        at = f"{path}.properties.{name_of(name)}"
        if not isinstance(name, str) or not FIELD_NAME.fullmatch(name):
            message = "field names start with a letter or _ and use letters, digits, _ and -"
            errors.append(FieldError(at, message))
            continue
        try:
            kind = kind_of_property(field_schema)
            fields[name], options = _field(kind, field_schema, at, top=False)
            if kind in OPTION_KINDS:
                if not options:
                    enum_at = f"{at}.enum" if kind is Kind.CHOICE else f"{at}.items.enum"
                    raise invalid("invalid response_schema", [FieldError(enum_at, "required")])
                _set_enum(kind, fields[name], options)
        except InvalidInput as error:
            errors += [e if e.path else FieldError(at, e.message) for e in error.errors]
    required = effective.get("required", [])
    if not isinstance(required, list):
        errors.append(FieldError(f"{path}.required", "expected a list of field names"))
    else:
        for index, name in enumerate(required):
            if not isinstance(name, str) or name not in properties:
                errors.append(FieldError(f"{path}.required[{index}]", "not a field of this form"))
        if len(set(map(repr, required))) != len(required):
            errors.append(FieldError(f"{path}.required", "must not repeat field names"))
    if errors:
        raise invalid("invalid response_schema", errors)
    effective["properties"] = fields
    effective["additionalProperties"] = False
    return effective


@lru_cache(maxsize=1)
def _metaschema_validator() -> jsonschema.protocols.Validator:
    # Loaded when a request first brings a schema: a client reading records never needs it.
    import jsonschema  # noqa: PLC0415

    return jsonschema.Draft202012Validator(
        jsonschema.Draft202012Validator.META_SCHEMA,
        format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER,
    )


def _check_dialect(schema: dict[str, Any], path: str) -> None:
    """The effective schema must also be valid JSON Schema 2020-12 by the metaschema."""
    errors = [
        FieldError(join_path(path, e.absolute_path), f"is not valid JSON Schema ({e.validator})")
        for e in _metaschema_validator().iter_errors(schema)
    ]
    if errors:
        raise invalid("invalid response_schema", errors)


def _as_json(value: object) -> dict[str, Any]:
    """A deep copy through JSON: rejects what JSON cannot carry, never aliases the input."""
    try:
        text = json.dumps(value, allow_nan=False)
        if len(text) > MAX_SCHEMA_CHARS:
            message = f"is too large (at most {MAX_SCHEMA_CHARS} characters as JSON)"
            raise invalid("invalid response_schema", [FieldError("response_schema", message)])
        copied = json.loads(text)
    except (TypeError, ValueError, RecursionError) as error:
        message = "must contain only JSON values"
        raise invalid(
            "invalid response_schema", [FieldError("response_schema", message)]
        ) from error
    if not isinstance(copied, dict):
        message = "expected a JSON Schema object"
        raise invalid("invalid response_schema", [FieldError("response_schema", message)])
    return copied


def derive_schema(kind: Kind, options: list[Option] | None) -> dict[str, Any]:
    """The response schema a request gets when it does not bring one."""
    enum = {
        "type": "string",
        "enum": [o.value for o in options or []],
        "enumNames": [o.label for o in options or []],
    }
    if kind is Kind.CHOICE:
        return enum
    if kind is Kind.MULTI:
        return {"type": "array", "items": enum, "uniqueItems": True}
    if kind is Kind.FORM:
        message = "a form needs a response_schema with properties"
        raise invalid("invalid request", [FieldError("response_schema", message)])
    schema: dict[str, Any] = {"type": _TYPE_OF[kind]}
    if kind in _MARKED:
        schema["x-pawflow-kind"] = kind.value
    if kind in _FORMAT_OF:
        schema["format"] = _FORMAT_OF[kind]
    return schema


def _set_enum(kind: Kind, effective: dict[str, Any], options: list[Option]) -> None:
    enum = {"enum": [o.value for o in options], "enumNames": [o.label for o in options]}
    if kind is Kind.CHOICE:
        effective.update(enum)
    else:
        effective["items"] = {**effective["items"], **enum}


def prepare_request(
    kind: Kind, options: Sequence[Option | str] | None, response_schema: dict[str, Any] | None
) -> tuple[list[Option] | None, dict[str, Any]]:
    """Check a request's kind/options/schema combination; return options and effective schema."""
    kind = parse_kind(kind)
    if kind not in OPTION_KINDS:
        if options:
            message = "only kinds choice and multi take options"
            raise invalid("invalid request", [FieldError("options", message)])
        if response_schema is None:
            return None, derive_schema(kind, None)
        schema = _as_json(response_schema)
        effective = (
            _check_form(schema, "response_schema")
            if kind is Kind.FORM
            else (_field(kind, schema, "response_schema", top=True)[0])
        )
        _check_dialect(effective, "response_schema")
        return None, effective
    given = normalize_options(options) if options is not None else None
    if response_schema is None:
        if given is None:
            message = f"kind {kind} needs options"
            raise invalid("invalid request", [FieldError("options", message)])
        return given, derive_schema(kind, given)
    schema = _as_json(response_schema)
    effective, from_schema = _field(kind, schema, "response_schema", top=True)
    if given is None and not from_schema:
        message = f"kind {kind} needs options (or an enum in response_schema)"
        raise invalid("invalid request", [FieldError("options", message)])
    if given and from_schema and {o.value for o in given} != {o.value for o in from_schema}:
        enum_at = "response_schema.enum" if kind is Kind.CHOICE else "response_schema.items.enum"
        message = "must list the same values as options"
        raise invalid("invalid request", [FieldError(enum_at, message)])
    final = given if given is not None else from_schema
    _set_enum(kind, effective, final)
    _check_dialect(effective, "response_schema")
    return final, effective
