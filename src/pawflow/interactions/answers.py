"""Answers: coerce what a client sent, validate it against the schema, return the normal form.

Each kind first *coerces* the raw answer into a Python value (``"yes"`` → ``True``, ``"1e3"``
→ ``Decimal``), then that value is validated with ``jsonschema`` against the effective
response schema, and finally serialized into its JSON normal form (R-1.2). Every failure is
an ``InvalidAnswer`` carrying field-level errors; nothing else escapes for any input.
"""

from __future__ import annotations

import json
import operator
import re
import sys
from collections.abc import Callable, Iterator, Mapping
from datetime import UTC, date, datetime
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from functools import lru_cache
from typing import Any

import jsonschema
import jsonschema.protocols
from jsonschema import FormatChecker, ValidationError

from pawflow.errors import FieldError, InvalidAnswer
from pawflow.interactions.kinds import JsonValue, Kind, kind_of_property, parse_kind
from pawflow.interactions.patterns import pattern_keyword
from pawflow.interactions.problems import clip, is_clean_text, join_path, name_of, summarize

FileResolver = Callable[[str], dict[str, Any] | None]
FILE_REF_KEYS = ("id", "name", "size", "media_type", "sha256")

# Python's own int/str conversion limit; a longer number is refused, not a ValueError.
MAX_DIGITS = sys.get_int_max_str_digits() or 4300
_INT_LIMIT = 10**MAX_DIGITS
MAX_FILE_ID_CHARS = 200

_YES = frozenset({"yes", "y", "true"})
_NO = frozenset({"no", "n", "false"})
_INTEGER = re.compile(r"[+-]?[0-9]+")
_DECIMAL = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_FRACTION = re.compile(r"[.,]([0-9]+)")
MAX_FRACTION_DIGITS = 6
_OFFSET = re.compile(r"(?:Z|[+-][0-9]{2}(?::?[0-9]{2})?)$")
_EMAIL = re.compile(r"[^@\s]+@[^@\s.][^@\s]*")
_URI = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:[^\s<>\"{}|\\^`]+")
# Every character str.splitlines() breaks on: a "single line" must contain none of them.
_LINE_BREAKS = frozenset("\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")


class _Reject(Exception):
    """A coercion failure: human messages at paths relative to the field (``""`` is itself)."""

    def __init__(self, message: str, path: str = "", more: list[FieldError] | None = None) -> None:
        super().__init__(message)
        self.problems = [FieldError(path, message), *(more or [])]


# --- the validator ------------------------------------------------------------------------

_FORMATS = FormatChecker(formats=())


@_FORMATS.checks("email")
def _is_email(value: object) -> bool:
    return not isinstance(value, str) or (len(value) <= 254 and bool(_EMAIL.fullmatch(value)))


@_FORMATS.checks("uri")
def _is_uri(value: object) -> bool:
    return not isinstance(value, str) or bool(_URI.fullmatch(value))


@_FORMATS.checks("date")
def _is_date(value: object) -> bool:
    if not isinstance(value, str):
        return True
    try:
        return bool(_DATE.fullmatch(value)) and date.fromisoformat(value) is not None
    except ValueError:
        return False


@_FORMATS.checks("date-time")
def _is_datetime(value: object) -> bool:
    if not isinstance(value, str):
        return True
    try:
        return datetime.fromisoformat(value).tzinfo is not None
    except ValueError:
        return False


def _fraction(value: Any) -> Fraction:
    # Floats go through their shortest repr, so 0.1 means one tenth, as the schema author meant.
    return Fraction(Decimal(repr(value))) if isinstance(value, float) else Fraction(value)


def _multiple_of(
    validator: jsonschema.protocols.Validator, step: Any, instance: Any, schema: Any
) -> Iterator[ValidationError]:
    """Exact multipleOf: 0.3 is a multiple of 0.1 (floats say it is not)."""
    if not validator.is_type(instance, "number"):
        return
    if (_fraction(instance) / _fraction(step)).denominator != 1:
        yield ValidationError(f"not a multiple of {step}")


_Keyword = Callable[[jsonschema.protocols.Validator, Any, Any, Any], Iterator[ValidationError]]


def _bound(fails: Callable[[Fraction, Fraction], bool]) -> _Keyword:
    """An exact numeric bound: Decimal("0.1") meets ``minimum: 0.1`` (the float is larger)."""

    def check(
        validator: jsonschema.protocols.Validator, limit: Any, instance: Any, schema: Any
    ) -> Iterator[ValidationError]:
        if validator.is_type(instance, "number") and fails(_fraction(instance), _fraction(limit)):
            yield ValidationError(f"out of bounds: {limit}")

    return check


_NUMERIC: dict[str, _Keyword] = {
    "multipleOf": _multiple_of,
    "minimum": _bound(operator.lt),
    "maximum": _bound(operator.gt),
    "exclusiveMinimum": _bound(operator.le),
    "exclusiveMaximum": _bound(operator.ge),
}


def _max_bytes(
    validator: jsonschema.protocols.Validator, limit: Any, instance: Any, schema: Any
) -> Iterator[ValidationError]:
    size = instance.get("size") if isinstance(instance, Mapping) else None
    if isinstance(size, int) and size > limit:
        yield ValidationError(f"file is larger than {limit} bytes")


def media_type_matches(media_type: str, accepted: list[str]) -> bool:
    """``image/png`` matches ``image/png``, ``image/*`` and ``*/*`` (parameters ignored)."""
    kind, _, sub = media_type.split(";", 1)[0].strip().lower().partition("/")
    for pattern in accepted:
        want_kind, _, want_sub = pattern.lower().partition("/")
        if want_kind in ("*", kind) and want_sub in ("*", sub):
            return True
    return False


def _media_types(
    validator: jsonschema.protocols.Validator, accepted: Any, instance: Any, schema: Any
) -> Iterator[ValidationError]:
    media = instance.get("media_type") if isinstance(instance, Mapping) else None
    if isinstance(media, str) and not media_type_matches(media, accepted):
        yield ValidationError(f"file type {media} is not accepted")


def _is_number(checker: Any, instance: object) -> bool:
    return isinstance(instance, int | float | Decimal) and not isinstance(instance, bool)


# The stubs leave extend() untyped; the class it builds is a Draft 2020-12 validator.
_extend: Callable[..., type[jsonschema.Draft202012Validator]] = jsonschema.validators.extend
_Validator = _extend(
    jsonschema.Draft202012Validator,
    validators={
        **_NUMERIC,
        "maxBytes": _max_bytes,
        "mediaTypes": _media_types,
        "pattern": pattern_keyword,
    },
    type_checker=jsonschema.Draft202012Validator.TYPE_CHECKER.redefine("number", _is_number),
)


@lru_cache(maxsize=512)
def _compiled(schema_json: str) -> jsonschema.Draft202012Validator:
    return _Validator(json.loads(schema_json), format_checker=_FORMATS)


def validator_for(schema: Mapping[str, Any]) -> jsonschema.Draft202012Validator:
    """A validator for ``schema``, built once per distinct schema."""
    return _compiled(json.dumps(schema, sort_keys=True))


# --- jsonschema errors as field errors ------------------------------------------------

_TYPE_NAMES = {
    "boolean": "true or false",
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "array": "a list",
    "object": "an object",
    "null": "null",
}
_FORMAT_NAMES = {
    "email": "an email address",
    "uri": "a URI with a scheme, such as https://…",
    "date": "a date as YYYY-MM-DD",
    "date-time": "a date and time with a timezone",
    "regex": "a regular expression",
}


def show(value: object) -> str:
    """A schema value as it reads in a message: numbers plainly, text clipped."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e16:
        return str(int(value))
    return clip(value if isinstance(value, str) else json.dumps(value, default=str))


def schema_error(error: jsonschema.ValidationError, prefix: str) -> FieldError:
    """A short, human FieldError for one jsonschema error (its own messages quote inputs)."""
    path = join_path(prefix, error.absolute_path)
    keyword = str(error.validator)
    expected = error.validator_value
    if keyword == "type":
        names = expected if isinstance(expected, list) else [expected]
        message = "expected " + " or ".join(_TYPE_NAMES.get(str(n), str(n)) for n in names)
    elif keyword == "enum" and isinstance(expected, list):
        shown = ", ".join(show(v) for v in expected[:10]) + (", …" if len(expected) > 10 else "")
        message = f"must be one of: {shown}"
    elif keyword == "format":
        message = f"must be {_FORMAT_NAMES.get(str(expected), 'a valid ' + show(expected))}"
    elif keyword in _COUNTED and isinstance(expected, int):
        template, unit = _COUNTED[keyword]
        message = template.format(expected, unit + ("" if expected == 1 else "s"))
    elif keyword == "pattern":
        # A regular expression means nothing to most people: the requester's hint does.
        hint = error.schema.get("x-pawflow-hint") if isinstance(error.schema, dict) else None
        message = "does not have the expected format" + (f": {clip(hint)}" if hint else "")
    elif keyword == "mediaTypes" and isinstance(expected, list):
        message = "the file type must be one of: " + ", ".join(show(v) for v in expected[:10])
    else:
        message = _MESSAGES.get(keyword, "is not valid ({})").format(show(expected))
    return FieldError(path, message)


_MESSAGES = {
    "minimum": "must be at least {}",
    "maximum": "must be at most {}",
    "exclusiveMinimum": "must be greater than {}",
    "exclusiveMaximum": "must be less than {}",
    "multipleOf": "must be a multiple of {}",
    "uniqueItems": "must not repeat values",
    "maxBytes": "the file must be at most {} bytes",
    "required": "is missing a required field",
    "additionalProperties": "has an unknown field",
}
_COUNTED = {
    "minLength": ("must be at least {} {} long", "character"),
    "maxLength": ("must be at most {} {} long", "character"),
    "minItems": ("choose at least {} {}", "option"),
    "maxItems": ("choose at most {} {}", "option"),
}


# --- coercion, one function per kind ------------------------------------------------------


def _confirm(raw: object) -> bool:
    if isinstance(raw, bool):
        return raw
    if isinstance(raw, str):
        word = raw.strip().lower()
        if word in _YES:
            return True
        if word in _NO:
            return False
    raise _Reject("expected yes or no")


def _string(raw: object) -> str:
    if not isinstance(raw, str):
        raise _Reject("expected a string")
    if not is_clean_text(raw):
        raise _Reject("contains characters that are not allowed")
    return raw


def _choice_value(raw: object, enum: list[Any]) -> str:
    value = _string(raw)
    # A value with stray whitespace still names its option unambiguously.
    if value not in enum and value.strip() in enum:
        return value.strip()
    return value


def _choice(raw: object, schema: Mapping[str, Any]) -> str:
    return _choice_value(raw, list(schema.get("enum", [])))


def _multi(raw: object, schema: Mapping[str, Any]) -> list[str]:
    if not isinstance(raw, list | tuple):
        raise _Reject("expected a list of options")
    enum = list(schema.get("items", {}).get("enum", []))
    values: dict[str, int] = {}
    problems: list[FieldError] = []
    for index, item in enumerate(raw):
        try:
            value = _choice_value(item, enum)
        except _Reject as error:
            problems += [FieldError(f"[{index}]{p.path}", p.message) for p in error.problems]
            continue
        if value in values:
            problems.append(FieldError(f"[{index}]", f"duplicate of [{values[value]}]"))
            continue
        values[value] = index
    if problems:
        raise _Reject(problems[0].message, problems[0].path, problems[1:])
    return list(values)


def _text(raw: object) -> str:
    value = _string(raw)
    if any(char in _LINE_BREAKS for char in value):
        raise _Reject("must be a single line")
    return value


def _multiline(raw: object) -> str:
    return _string(raw).replace("\r\n", "\n").replace("\r", "\n")


def _integer(raw: object) -> int:
    if isinstance(raw, bool):
        raise _Reject("expected an integer")
    if isinstance(raw, int):
        value = raw
    elif isinstance(raw, float):
        if raw != raw or raw in (float("inf"), float("-inf")) or not raw.is_integer():
            raise _Reject("expected an integer")
        value = int(raw)
    elif isinstance(raw, Decimal):  # a JSON number read exactly
        value = _whole(raw)
    elif isinstance(raw, str):
        text = raw.strip()
        if not _INTEGER.fullmatch(text):
            raise _Reject("expected an integer")
        if len(text.lstrip("+-")) > MAX_DIGITS:
            raise _Reject("number is too long")
        value = int(text)
    else:
        raise _Reject("expected an integer")
    if abs(value) >= _INT_LIMIT:
        raise _Reject("number is too long")
    return value


def _whole(raw: Decimal) -> int:
    """A Decimal that is a whole number, as an int; sized from its digits before any work."""
    if not raw.is_finite():
        raise _Reject("expected an integer")
    _sign, digits, exponent = raw.as_tuple()
    assert isinstance(exponent, int)
    if exponent > 0 and len(digits) + exponent > MAX_DIGITS:
        raise _Reject("number is too long")
    if exponent < 0 and any(digits[exponent:]):
        raise _Reject("expected an integer")
    return int(raw)


def _decimal(raw: object) -> Decimal:
    """The exact value, trailing fractional zeros dropped; rendered by ``canonical_decimal``."""
    if isinstance(raw, bool):
        raise _Reject("expected a number")
    if isinstance(raw, int):
        if abs(raw) >= _INT_LIMIT:
            raise _Reject("number is too long")
        value = Decimal(raw)
    elif isinstance(raw, float):
        # repr is the shortest text that reads back as the same float: 0.1 stays "0.1".
        value = Decimal(repr(raw))
    elif isinstance(raw, Decimal):  # a JSON number read exactly: never through a float
        value = raw
    elif isinstance(raw, str):
        text = raw.strip()
        if len(text) > MAX_DIGITS + 20 or not _DECIMAL.fullmatch(text):
            raise _Reject("expected a number")
        try:
            value = Decimal(text)
        except (InvalidOperation, ValueError):
            raise _Reject("number is out of range") from None
    else:
        raise _Reject("expected a number")
    if not value.is_finite():
        raise _Reject("expected a finite number")
    sign, digits, exponent = value.as_tuple()
    assert isinstance(exponent, int)
    while exponent < 0 and len(digits) > 1 and digits[-1] == 0:
        digits, exponent = digits[:-1], exponent + 1
    if digits == (0,):
        return Decimal(0)
    # Checked on the tuple, before any arithmetic: "1e999999999" must not build a huge string.
    if len(digits) + abs(exponent) > MAX_DIGITS:
        raise _Reject("number is too long")
    return Decimal((sign, digits, exponent))


def canonical_decimal(value: Decimal) -> str:
    """Plain notation, no exponent, no trailing fractional zeros, no negative zero."""
    sign, digit_tuple, exponent = value.as_tuple()
    assert isinstance(exponent, int)
    digits = "".join(map(str, digit_tuple)).lstrip("0")
    if not digits:
        return "0"
    if exponent >= 0:
        text = digits + "0" * exponent
    elif len(digits) > -exponent:
        text = f"{digits[:exponent]}.{digits[exponent:]}"
    else:
        text = "0." + digits.rjust(-exponent, "0")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "-" + text if sign else text


def _date(raw: object) -> str:
    if not isinstance(raw, str) or not _DATE.fullmatch(raw.strip()):
        raise _Reject("expected a date as YYYY-MM-DD")
    try:
        return date.fromisoformat(raw.strip()).isoformat()
    except ValueError:
        raise _Reject("not a real date") from None


def _datetime(raw: object) -> str:
    if not isinstance(raw, str) or not 0 < len(raw.strip()) <= 64:
        raise _Reject("expected a date and time such as 2026-11-29T10:00:00Z")
    try:
        moment = datetime.fromisoformat(raw.strip().upper())
    except ValueError:
        raise _Reject("expected a date and time such as 2026-11-29T10:00:00Z") from None
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise _Reject("needs a timezone")
    # Python reads any number of fraction digits and drops those past the microsecond: an
    # answer is never changed silently, so a finer one is refused.
    fraction = _FRACTION.search(raw)
    if fraction is not None and len(fraction.group(1)) > MAX_FRACTION_DIGITS:
        raise _Reject(
            f"at most {MAX_FRACTION_DIGITS} digits after the seconds:"
            " microseconds are the finest kept"
        )
    # Python also reads offsets with seconds (and silently drops their fractions); ISO 8601
    # offsets are whole minutes.
    if not _OFFSET.search(raw.strip().upper()):
        raise _Reject("the timezone must be Z or an offset such as +02:00")
    try:
        moment = moment.astimezone(UTC)
    except (OverflowError, ValueError):
        raise _Reject("date is out of range") from None
    return moment.isoformat().replace("+00:00", "Z")


def _file(raw: object, resolve_file: FileResolver) -> dict[str, Any]:
    file_id = raw.get("id") if isinstance(raw, Mapping) else raw
    if not isinstance(file_id, str) or not file_id.strip() or len(file_id) > MAX_FILE_ID_CHARS:
        raise _Reject("expected the id of an uploaded file")
    record = resolve_file(file_id.strip())
    if record is None:
        raise _Reject("not a file you uploaded")
    if any(key not in record for key in FILE_REF_KEYS):
        raise _Reject("the uploaded file's record is incomplete")
    return {key: record[key] for key in FILE_REF_KEYS}


def _coerce(kind: Kind, schema: Mapping[str, Any], raw: object, resolve_file: FileResolver) -> Any:
    if kind is Kind.CONFIRM:
        return _confirm(raw)
    if kind is Kind.CHOICE:
        return _choice(raw, schema)
    if kind is Kind.MULTI:
        return _multi(raw, schema)
    if kind is Kind.TEXT:
        return _text(raw)
    if kind is Kind.MULTILINE:
        return _multiline(raw)
    if kind is Kind.INTEGER:
        return _integer(raw)
    if kind is Kind.DECIMAL:
        return _decimal(raw)
    if kind is Kind.DATE:
        return _date(raw)
    if kind is Kind.DATETIME:
        return _datetime(raw)
    if kind is Kind.FILE:
        return _file(raw, resolve_file)
    raise _Reject(f"kind {kind} is not a field kind")


# --- normalization ------------------------------------------------------------------------


def _field(
    kind: Kind,
    schema: Mapping[str, Any],
    raw: object,
    path: str,
    resolve_file: FileResolver,
    errors: list[FieldError],
) -> JsonValue:
    """Normalize one scalar-kind value; on failure add errors and return None."""
    try:
        value = _coerce(kind, schema, raw, resolve_file)
    except _Reject as error:
        errors += [FieldError(path + p.path, p.message) for p in error.problems]
        return None
    problems = [schema_error(e, path) for e in validator_for(schema).iter_errors(value)]
    if problems:
        errors.extend(dict.fromkeys(problems))
        return None
    if kind is Kind.DECIMAL:
        return canonical_decimal(value)
    if kind is Kind.MULTI:
        order = {v: i for i, v in enumerate(schema.get("items", {}).get("enum", []))}
        return sorted(value, key=lambda v: order.get(v, len(order)))
    return value


def _form(
    schema: Mapping[str, Any], raw: object, resolve_file: FileResolver, errors: list[FieldError]
) -> JsonValue:
    if not isinstance(raw, Mapping):
        errors.append(FieldError("", "expected an object of named fields"))
        return None
    properties: Mapping[str, Any] = schema.get("properties", {})
    required = set(schema.get("required", []))
    for name in raw:
        if name not in properties:
            errors.append(FieldError(name_of(name), "unknown field"))
    result: dict[str, Any] = {}
    for name, field_schema in properties.items():
        # null stands for "left empty", which is fine unless the field is required.
        if raw.get(name) is None:
            if name in required:
                errors.append(FieldError(name, "required"))
            continue
        value = _field(
            kind_of_property(field_schema), field_schema, raw[name], name, resolve_file, errors
        )
        if value is not None:
            result[name] = value
    return result


def normalize_answer(
    kind: Kind,
    response_schema: dict[str, Any],
    answer: object,
    *,
    resolve_file: FileResolver,
) -> JsonValue:
    """The normal form of ``answer`` to a request of ``kind`` with this effective schema.

    ``resolve_file(id)`` returns the server's record of an upload the answerer made, or None.
    Raises ``InvalidAnswer`` listing every field error found.
    """
    kind = parse_kind(kind)
    errors: list[FieldError] = []
    if kind is Kind.FORM:
        value = _form(response_schema, answer, resolve_file, errors)
    else:
        value = _field(kind, response_schema, answer, "", resolve_file, errors)
    if errors:
        raise InvalidAnswer(summarize("invalid answer", errors), errors)
    return value
