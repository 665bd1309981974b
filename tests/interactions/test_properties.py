"""Properties of answer normalization and schema preparation, checked with hypothesis."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone
from decimal import Decimal
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from pawflow.errors import InvalidAnswer, InvalidInput
from pawflow.interactions import Kind, normalize_answer, normalize_options, prepare_request

SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])

UPLOADS = {
    f"f{i}": {
        "id": f"f{i}",
        "name": f"file{i}.bin",
        "size": 1000 * i,
        "media_type": media,
        "sha256": "0" * 64,
    }
    for i, media in enumerate(["image/png", "application/pdf", "text/plain"], start=1)
}


def resolve(file_id: str) -> dict[str, Any] | None:
    return UPLOADS.get(file_id)


VALUES = ["alpha", "beta", "gamma delta", "ü-ñ"]

# A request of every kind, some with constraints, as the store would hold them.
REQUESTS: list[tuple[Kind, dict[str, Any]]] = [
    (kind, prepare_request(kind, options, schema)[1])
    for kind, options, schema in [
        (Kind.CONFIRM, None, None),
        (Kind.CHOICE, VALUES, None),
        (Kind.MULTI, VALUES, None),
        (Kind.MULTI, VALUES, {"minItems": 1, "maxItems": 2}),
        (Kind.TEXT, None, None),
        (Kind.TEXT, None, {"minLength": 1, "maxLength": 8, "pattern": "^[a-z ]*$"}),
        (Kind.TEXT, None, {"format": "email"}),
        (Kind.TEXT, None, {"format": "uri"}),
        (Kind.MULTILINE, None, None),
        (Kind.INTEGER, None, None),
        (Kind.INTEGER, None, {"minimum": -5, "exclusiveMaximum": 100, "multipleOf": 3}),
        (Kind.DECIMAL, None, None),
        (Kind.DECIMAL, None, {"minimum": 0.1, "maximum": 1e6, "multipleOf": 0.05}),
        (Kind.DATE, None, None),
        (Kind.DATETIME, None, None),
        (Kind.FILE, None, None),
        (Kind.FILE, None, {"maxBytes": 2500, "mediaTypes": ["image/*", "application/pdf"]}),
        (
            Kind.FORM,
            None,
            {
                "properties": {
                    "ok": {"type": "boolean"},
                    "pick": {"type": "string", "enum": VALUES},
                    "tags": {"type": "array", "items": {"type": "string", "enum": VALUES}},
                    "name": {"type": "string"},
                    "notes": {"type": "string", "x-pawflow-kind": "multiline"},
                    "count": {"type": "integer"},
                    "amount": {"type": "number", "multipleOf": 0.01},
                    "day": {"type": "string", "format": "date"},
                    "at": {"type": "string", "format": "date-time"},
                    "doc": {"type": "object", "x-pawflow-kind": "file"},
                },
                "required": ["ok", "count"],
            },
        ),
    ]
]

# --- arbitrary JSON, with the awkward corners included ----------------------------------

awkward_strings = st.sampled_from(
    [
        "",
        " ",
        "\x00",
        "\ud800",
        "\u2028",
        "yes",
        "NO",
        "1e999999999",
        "-0",
        "NaN",
        "Infinity",
        "1_000",
        "٣",
        "2026-02-30",
        "2026-11-29T10:00:00",
        "2026-11-29T10:00:00Z",
        "0001-01-01T00:00:00+01:00",
        "f1",
        "alpha",
        "a@b",
        "https://x",
    ]
)
scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    # Built lazily: ints past 4300 digits cannot even be repr()ed in a strategy's description.
    | st.integers(4290, 5000).map(lambda e: 10**e)
    | st.integers(4290, 5000).map(lambda e: -(10**e) + 1)
    | st.just(2**64)
    | st.integers(4290, 5000).map(lambda n: "9" * n)
    | st.floats()
    | st.text()
    | st.text(st.characters(codec="utf-8", categories=["Zs", "Cc", "So", "Nd"]))
    | awkward_strings
)
json_values = st.recursive(
    scalars,
    lambda children: (
        st.lists(children, max_size=5)
        | st.dictionaries(st.text(max_size=8) | st.sampled_from(["id", "ok", "count"]), children)
    ),
    max_leaves=20,
)


# --- accepted inputs per kind: idempotent and JSON-stable -------------------------------


def padded(text: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    space = st.sampled_from(["", " ", "\t"])
    return st.builds(lambda a, t, b: a + t + b, space, text, space)


offsets = st.integers(-23 * 60, 23 * 60).map(lambda m: timezone(timedelta(minutes=m)))
moments = st.datetimes(
    min_value=datetime(2, 1, 1), max_value=datetime(9998, 12, 31), timezones=offsets
)
decimals = st.decimals(allow_nan=False, allow_infinity=False, places=None).filter(
    lambda d: abs(d.adjusted()) < 1000
)
one_line = st.text().filter(lambda t: len(t.splitlines()) <= 1 and t == "".join(t.splitlines()))

ACCEPTED: dict[Kind, st.SearchStrategy[Any]] = {
    Kind.CONFIRM: st.booleans() | padded(st.sampled_from(["yes", "No", "TRUE", "false", "y", "N"])),
    Kind.CHOICE: padded(st.sampled_from(VALUES)),
    Kind.MULTI: st.lists(st.sampled_from(VALUES), unique=True),
    Kind.TEXT: one_line.filter(lambda t: "\x00" not in t),
    Kind.MULTILINE: st.text().filter(lambda t: "\x00" not in t),
    Kind.INTEGER: st.integers()
    | padded(st.integers().map(str))
    | st.integers(-(2**52), 2**52).map(float),
    Kind.DECIMAL: decimals.map(str)
    | decimals.map(lambda d: f"{d:e}")
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.integers(),
    Kind.DATE: st.dates().map(lambda d: d.isoformat()),
    Kind.DATETIME: moments.map(lambda m: m.isoformat()),
    Kind.FILE: st.sampled_from(sorted(UPLOADS))
    | st.builds(lambda i, x: {"id": i, "name": x}, st.sampled_from(sorted(UPLOADS)), st.text()),
}
PLAIN = {
    kind: prepare_request(kind, VALUES if kind in (Kind.CHOICE, Kind.MULTI) else None, None)[1]
    for kind in ACCEPTED
}


@pytest.mark.parametrize("kind", sorted(ACCEPTED))
@settings(SETTINGS, max_examples=60)
@given(data=st.data())
def test_accepted_answers_are_idempotent_and_json_stable(data: st.DataObject, kind: Kind) -> None:
    raw = data.draw(ACCEPTED[kind], label="raw")
    schema = PLAIN[kind]
    value = normalize_answer(kind, schema, raw, resolve_file=resolve)
    assert normalize_answer(kind, schema, value, resolve_file=resolve) == value
    assert json.loads(json.dumps(value)) == value


# Arbitrary JSON, plus values some kind accepts (so a kind also meets other kinds' answers).
answers = (
    json_values
    | st.one_of(*ACCEPTED.values())
    | st.dictionaries(
        st.sampled_from(["ok", "pick", "tags", "count", "amount", "at", "doc", "x"]),
        json_values | st.one_of(*ACCEPTED.values()),
    )
)


@SETTINGS
@given(request=st.sampled_from(REQUESTS), raw=answers)
def test_any_answer_is_normalized_or_rejected_as_invalid_answer(
    request: tuple[Kind, dict[str, Any]], raw: object
) -> None:
    kind, schema = request
    try:
        value = normalize_answer(kind, schema, raw, resolve_file=resolve)
    except InvalidAnswer as error:
        assert error.errors
        assert all(isinstance(e.path, str) and e.message for e in error.errors)
        event("rejected")
        return
    event(f"accepted {kind}")
    assert json.loads(json.dumps(value)) == value
    assert normalize_answer(kind, schema, value, resolve_file=resolve) == value


FORM_KIND, FORM_SCHEMA = REQUESTS[-1]
form_answers = st.fixed_dictionaries(
    {"ok": ACCEPTED[Kind.CONFIRM], "count": ACCEPTED[Kind.INTEGER]},
    optional={
        "pick": ACCEPTED[Kind.CHOICE],
        "tags": ACCEPTED[Kind.MULTI],
        "name": ACCEPTED[Kind.TEXT],
        "notes": ACCEPTED[Kind.MULTILINE],
        "amount": st.integers(-(10**6), 10**6).map(lambda cents: str(Decimal(cents) / 100)),
        "day": ACCEPTED[Kind.DATE],
        "at": ACCEPTED[Kind.DATETIME],
        "doc": ACCEPTED[Kind.FILE],
    },
)


@SETTINGS
@given(raw=form_answers)
def test_accepted_forms_are_idempotent_and_json_stable(raw: dict[str, Any]) -> None:
    value = normalize_answer(FORM_KIND, FORM_SCHEMA, raw, resolve_file=resolve)
    assert set(value) == set(raw)
    assert normalize_answer(FORM_KIND, FORM_SCHEMA, value, resolve_file=resolve) == value
    assert json.loads(json.dumps(value)) == value


@SETTINGS
@given(d=decimals)
def test_decimal_normal_form_is_exact_and_plain(d: Decimal) -> None:
    value = normalize_answer(Kind.DECIMAL, PLAIN[Kind.DECIMAL], str(d), resolve_file=resolve)
    assert Decimal(value) == d
    assert "e" not in value.lower()
    assert value != "-0"
    assert "." not in value or not value.endswith(("0", "."))


@SETTINGS
@given(moment=moments)
def test_datetime_normal_form_is_the_same_instant_in_utc(moment: datetime) -> None:
    value = normalize_answer(
        Kind.DATETIME, PLAIN[Kind.DATETIME], moment.isoformat(), resolve_file=resolve
    )
    assert value.endswith("Z")
    assert datetime.fromisoformat(value) == moment
    assert datetime.fromisoformat(value).utcoffset() == UTC.utcoffset(None)


# --- preparing requests -----------------------------------------------------------------

KEYWORDS = [
    "type",
    "title",
    "description",
    "default",
    "enum",
    "enumNames",
    "minLength",
    "maxLength",
    "pattern",
    "format",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "items",
    "minItems",
    "maxItems",
    "uniqueItems",
    "properties",
    "required",
    "additionalProperties",
    "maxBytes",
    "mediaTypes",
    "x-pawflow-kind",
    "$schema",
    "$ref",
    "oneOf",
]
keyword_values = (
    json_values
    | st.sampled_from(["string", "integer", "number", "boolean", "array", "object"])
    | st.sampled_from([k.value for k in Kind] + ["date", "date-time", "email", "uri"])
    | st.lists(st.sampled_from(VALUES), max_size=4)
    | st.integers(-3, 10)
)
schemas = st.recursive(
    st.dictionaries(st.sampled_from(KEYWORDS), keyword_values, max_size=6),
    lambda children: st.dictionaries(
        st.sampled_from(KEYWORDS) | st.text(max_size=6),
        children | keyword_values,
        max_size=5,
    ),
    max_leaves=12,
)


enums = st.lists(st.sampled_from([*VALUES, "", "alpha"]), min_size=1, max_size=4)
field_schemas = st.fixed_dictionaries(
    {},
    optional={
        "type": st.sampled_from(["string", "integer", "number", "boolean", "array", "object"]),
        "x-pawflow-kind": st.sampled_from([k.value for k in Kind]),
        "format": st.sampled_from(["date", "date-time", "email", "uri", "ipv4"]),
        "enum": enums,
        "enumNames": enums,
        "items": st.fixed_dictionaries({"enum": enums}, optional={"type": st.just("string")}),
        "minimum": st.integers(-5, 5) | st.floats(-5, 5),
        "maximum": st.integers(-5, 5),
        "multipleOf": st.sampled_from([0.01, 0.1, 0.5, 2, 0, -1]),
        "minLength": st.integers(-1, 4),
        "maxLength": st.integers(0, 4),
        "pattern": st.sampled_from(["^[a-z]*$", "(", "\\d+"]),
        "minItems": st.integers(0, 5),
        "maxItems": st.integers(0, 5),
        "maxBytes": st.integers(-1, 5000),
        "mediaTypes": st.lists(st.sampled_from(["image/*", "application/pdf", "x"]), max_size=2),
        "title": st.text(max_size=5) | st.integers(),
    },
)
names = st.sampled_from(["ok", "pick", "count", "a.b", "x"])
form_schemas = st.fixed_dictionaries(
    {"properties": st.dictionaries(names, field_schemas, max_size=4)},
    optional={
        "type": st.just("object"),
        "required": st.lists(names, max_size=3),
        "additionalProperties": st.booleans(),
    },
)


def mutate(
    request: tuple[Kind, dict[str, Any]], key: str, value: object, drop: bool
) -> tuple[Kind, Any, dict[str, Any]]:
    """A stored request's schema with one keyword changed, at the top or in a form field."""
    kind, schema = request
    schema = json.loads(json.dumps(schema))
    target = schema
    if kind is Kind.FORM:
        fields = schema["properties"]
        target = fields[sorted(fields)[len(key) % len(fields)]]
    if drop:
        target.pop(key, None)
    else:
        target[key] = value
    return kind, VALUES if kind in (Kind.CHOICE, Kind.MULTI) else None, schema


random_requests = st.tuples(
    st.sampled_from(list(Kind)),
    st.none() | json_values | st.lists(st.sampled_from(VALUES), max_size=4),
    st.none() | schemas | json_values | field_schemas | form_schemas,
)
near_requests = st.builds(
    mutate,
    st.sampled_from(REQUESTS),
    st.sampled_from(KEYWORDS),
    keyword_values | field_schemas,
    st.booleans(),
)


@SETTINGS
@given(request=random_requests | near_requests, raw=answers)
def test_any_request_is_prepared_or_rejected_as_invalid_input(
    request: tuple[Kind, Any, Any], raw: object
) -> None:
    kind, options, schema = request
    try:
        prepared, effective = prepare_request(kind, options, schema)
    except InvalidInput as error:
        assert not isinstance(error, InvalidAnswer)
        assert error.errors
        event("rejected")
        return
    event(f"prepared {kind}")
    jsonschema.Draft202012Validator.check_schema(effective)
    assert json.loads(json.dumps(effective)) == effective
    assert prepare_request(kind, prepared, effective) == (prepared, effective)
    try:
        value = normalize_answer(kind, effective, raw, resolve_file=resolve)
    except InvalidAnswer:
        return
    assert json.loads(json.dumps(value)) == value
    assert normalize_answer(kind, effective, value, resolve_file=resolve) == value


@SETTINGS
@given(raw=json_values)
def test_any_options_are_normalized_or_rejected(raw: object) -> None:
    try:
        options = normalize_options(raw)
    except InvalidInput as error:
        assert error.errors
        return
    assert options
    assert len({o.value for o in options}) == len(options)
