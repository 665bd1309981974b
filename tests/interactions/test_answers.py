"""Answers per kind: what is accepted, its normal form, and how a rejection reads."""

from __future__ import annotations

from typing import Any

import pytest

from pawflow.errors import FieldError, InvalidAnswer, InvalidInput
from pawflow.interactions import Kind, Option, normalize_answer, prepare_request
from pawflow.interactions.answers import validator_for

PNG = {"id": "f-png", "name": "cat.png", "size": 2048, "media_type": "image/png", "sha256": "ab"}
PDF = {
    "id": "f-pdf",
    "name": "form.pdf",
    "size": 10_000,
    "media_type": "application/pdf",
    "sha256": "cd",
}
UPLOADS = {f["id"]: {**f, "owner": "alice"} for f in (PNG, PDF)}


def resolve(file_id: str) -> dict[str, Any] | None:
    return UPLOADS.get(file_id)


def answer(kind: Kind, raw: object, schema: Any = None, options: Any = None) -> Any:
    _, effective = prepare_request(kind, options, schema)
    return normalize_answer(kind, effective, raw, resolve_file=resolve)


def errors(kind: Kind, raw: object, schema: Any = None, options: Any = None) -> list[FieldError]:
    with pytest.raises(InvalidAnswer) as caught:
        answer(kind, raw, schema, options)
    return caught.value.errors


OPTS = [
    Option(value="red", label="Red"),
    Option(value="green", label="Green"),
    Option(value="blue", label="Blue"),
]


# --- confirm ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "value"),
    [(True, True), (False, False), ("yes", True), (" NO ", False), ("Y", True), ("false", False)],
)
def test_confirm_accepts(raw: object, value: bool) -> None:
    assert answer(Kind.CONFIRM, raw) is value


@pytest.mark.parametrize("raw", [1, 0, 1.0, "maybe", "", None, [True], {"value": True}])
def test_confirm_rejects(raw: object) -> None:
    assert errors(Kind.CONFIRM, raw) == [FieldError("", "expected yes or no")]


# --- choice and multi ---------------------------------------------------------------------


def test_choice_returns_the_option_value() -> None:
    assert answer(Kind.CHOICE, "green", options=OPTS) == "green"
    assert answer(Kind.CHOICE, " blue ", options=OPTS) == "blue"


@pytest.mark.parametrize("raw", ["Green", "purple", ""])
def test_choice_rejects_other_values(raw: object) -> None:
    assert errors(Kind.CHOICE, raw, options=OPTS) == [
        FieldError("", "must be one of: red, green, blue")
    ]


@pytest.mark.parametrize("raw", [1, None, ["red"]])
def test_choice_rejects_non_strings(raw: object) -> None:
    assert errors(Kind.CHOICE, raw, options=OPTS) == [FieldError("", "expected a string")]


def test_choice_message_is_short_for_huge_enums() -> None:
    options = [f"option-{i}-" + "x" * 100 for i in range(200)]
    (error,) = errors(Kind.CHOICE, "nope", options=options)
    assert error.message.startswith("must be one of: option-0-")
    assert error.message.endswith(", …")
    assert len(error.message) < 600


def test_multi_returns_distinct_values_in_option_order() -> None:
    assert answer(Kind.MULTI, ["blue", "red"], options=OPTS) == ["red", "blue"]
    assert answer(Kind.MULTI, [], options=OPTS) == []


def test_multi_rejects_duplicates_and_unknowns_with_item_paths() -> None:
    assert errors(Kind.MULTI, ["red", " red", 3, "blue"], options=OPTS) == [
        FieldError("[1]", "duplicate of [0]"),
        FieldError("[2]", "expected a string"),
    ]
    assert errors(Kind.MULTI, ["red", "pink", "teal"], options=OPTS) == [
        FieldError("[1]", "must be one of: red, green, blue"),
        FieldError("[2]", "must be one of: red, green, blue"),
    ]


def test_multi_item_counts() -> None:
    schema = {"minItems": 1, "maxItems": 2}
    assert errors(Kind.MULTI, [], schema, OPTS) == [FieldError("", "choose at least 1 option")]
    assert errors(Kind.MULTI, ["red", "green", "blue"], schema, OPTS) == [
        FieldError("", "choose at most 2 options")
    ]


@pytest.mark.parametrize("raw", ["red", None, {"red": True}])
def test_multi_needs_a_list(raw: object) -> None:
    assert errors(Kind.MULTI, raw, options=OPTS) == [FieldError("", "expected a list of options")]


# --- text and multiline -------------------------------------------------------------------


def test_text_is_kept_as_sent() -> None:
    assert answer(Kind.TEXT, "  Hello, wörld 🐾\t") == "  Hello, wörld 🐾\t"


@pytest.mark.parametrize("raw", ["a\nb", "a\r", "a\u2028b"])
def test_text_is_one_line(raw: str) -> None:
    assert errors(Kind.TEXT, raw) == [FieldError("", "must be a single line")]


@pytest.mark.parametrize("raw", [5, None, True, ["a"]])
def test_text_needs_a_string(raw: object) -> None:
    assert errors(Kind.TEXT, raw) == [FieldError("", "expected a string")]


@pytest.mark.parametrize("raw", ["a\x00b", "\ud800"])
def test_text_refuses_unstorable_characters(raw: str) -> None:
    assert errors(Kind.TEXT, raw)[0].message == "contains characters that are not allowed"


def test_multiline_normalizes_line_ends() -> None:
    assert answer(Kind.MULTILINE, "a\r\nb\rc\nd") == "a\nb\nc\nd"


def test_string_constraints() -> None:
    schema = {"minLength": 2, "maxLength": 4, "pattern": "^[a-z]+$"}
    assert answer(Kind.TEXT, "abc", schema) == "abc"
    assert errors(Kind.TEXT, "a", schema) == [FieldError("", "must be at least 2 characters long")]
    assert errors(Kind.TEXT, "abcde", schema) == [
        FieldError("", "must be at most 4 characters long")
    ]
    assert errors(Kind.TEXT, "AB", schema) == [FieldError("", "does not have the expected format")]
    hinted = {**schema, "x-pawflow-hint": "lower-case letters, like abc"}
    assert errors(Kind.TEXT, "AB", hinted) == [
        FieldError("", "does not have the expected format: lower-case letters, like abc")
    ]


def test_hints_and_currencies_are_part_of_the_schema() -> None:
    prepare_request(Kind.TEXT, None, {"type": "string", "x-pawflow-hint": "like ABC-12"})
    prepare_request(Kind.DECIMAL, None, {"type": "number", "x-pawflow-currency": "EUR"})
    wrong: list[tuple[Kind, dict[str, Any]]] = [
        (Kind.TEXT, {"type": "string", "x-pawflow-hint": 3}),
        (Kind.DECIMAL, {"type": "number", "x-pawflow-currency": "euro"}),
        (Kind.TEXT, {"type": "string", "x-pawflow-currency": "EUR"}),
    ]
    for kind, schema in wrong:
        with pytest.raises(InvalidInput):
            prepare_request(kind, None, schema)


@pytest.mark.parametrize(
    ("fmt", "good", "bad"),
    [
        ("email", "ana@example.org", "ana.example.org"),
        ("email", "ana@localhost", "ana@ example.org"),
        ("uri", "https://example.org/a?b=c", "example.org"),
        ("uri", "mailto:ana@example.org", "https://exa mple.org"),
    ],
)
def test_text_formats_are_checked(fmt: str, good: str, bad: str) -> None:
    schema = {"format": fmt}
    assert answer(Kind.TEXT, good, schema) == good
    (error,) = errors(Kind.TEXT, bad, schema)
    assert error.path == ""
    assert error.message.startswith("must be a")


# --- integer ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "value"),
    [(3, 3), (-7, -7), (3.0, 3), ("42", 42), (" -5 ", -5), ("+8", 8), ("007", 7), (10**40, 10**40)],
)
def test_integer_accepts(raw: object, value: int) -> None:
    result = answer(Kind.INTEGER, raw)
    assert result == value
    assert type(result) is int


@pytest.mark.parametrize(
    "raw",
    [
        True,
        False,
        3.5,
        "3.5",
        "3.0",
        "1e3",
        "abc",
        "",
        "1_000",
        "٣",
        float("nan"),
        float("inf"),
        None,
        [1],
    ],
)
def test_integer_rejects(raw: object) -> None:
    assert errors(Kind.INTEGER, raw) == [FieldError("", "expected an integer")]


def test_integer_refuses_absurdly_long_numbers() -> None:
    assert errors(Kind.INTEGER, "9" * 5000) == [FieldError("", "number is too long")]
    assert errors(Kind.INTEGER, 10**5000) == [FieldError("", "number is too long")]


def test_integer_bounds() -> None:
    schema = {"minimum": 5, "maximum": 10, "multipleOf": 5}
    assert answer(Kind.INTEGER, "10", schema) == 10
    assert errors(Kind.INTEGER, 0, schema) == [FieldError("", "must be at least 5")]
    assert errors(Kind.INTEGER, 15, schema) == [FieldError("", "must be at most 10")]
    assert errors(Kind.INTEGER, 7, schema) == [FieldError("", "must be a multiple of 5")]
    exclusive = {"exclusiveMinimum": 0, "exclusiveMaximum": 3}
    assert errors(Kind.INTEGER, 0, exclusive) == [FieldError("", "must be greater than 0")]
    assert errors(Kind.INTEGER, 3, exclusive) == [FieldError("", "must be less than 3")]


# --- decimal ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "value"),
    [
        ("1.50", "1.5"),
        ("1e3", "1000"),
        ("-0.0", "0"),
        ("0.000001", "0.000001"),
        ("1E-7", "0.0000001"),
        ("  +2.5e1 ", "25"),
        (".5", "0.5"),
        ("5.", "5"),
        (0.1, "0.1"),
        (1e20, "100000000000000000000"),
        (-3, "-3"),
        ("123456789012345678901234567890.123456789", "123456789012345678901234567890.123456789"),
        ("100", "100"),
    ],
)
def test_decimal_canonical_form(raw: object, value: str) -> None:
    assert answer(Kind.DECIMAL, raw) == value


@pytest.mark.parametrize(
    "raw",
    [
        True,
        "NaN",
        "Infinity",
        "-inf",
        float("nan"),
        float("inf"),
        "1,5",
        "1_0",
        "0x10",
        "",
        "e3",
        None,
        {},
    ],
)
def test_decimal_rejects(raw: object) -> None:
    (error,) = errors(Kind.DECIMAL, raw)
    assert error.path == ""
    assert error.message in ("expected a number", "expected a finite number")


@pytest.mark.parametrize(
    "raw",
    [
        "1e999999999",
        "1e-999999999",
        "1e99999999999999999999",
        pytest.param(10**5000, id="huge-int"),
    ],
)
def test_decimal_refuses_huge_exponents(raw: object) -> None:
    (error,) = errors(Kind.DECIMAL, raw)
    assert error.message in ("number is too long", "number is out of range")


def test_decimal_constraints_are_exact() -> None:
    assert answer(Kind.DECIMAL, "0.3", {"multipleOf": 0.1}) == "0.3"
    assert answer(Kind.DECIMAL, 0.3, {"multipleOf": 0.1}) == "0.3"
    assert answer(Kind.DECIMAL, "19.99", {"multipleOf": 0.01}) == "19.99"
    assert errors(Kind.DECIMAL, "0.35", {"multipleOf": 0.1}) == [
        FieldError("", "must be a multiple of 0.1")
    ]
    assert errors(Kind.DECIMAL, "0.10000000000000000001", {"maximum": 0.1}) == [
        FieldError("", "must be at most 0.1")
    ]
    assert answer(Kind.DECIMAL, "0.1", {"maximum": 0.1}) == "0.1"
    assert answer(Kind.DECIMAL, "0.1", {"minimum": 0.1}) == "0.1"
    assert answer(Kind.DECIMAL, 0.1, {"minimum": 0.1, "maximum": 0.1}) == "0.1"
    assert errors(Kind.DECIMAL, "0.1", {"exclusiveMaximum": 0.1}) == [
        FieldError("", "must be less than 0.1")
    ]
    assert errors(Kind.DECIMAL, "0", {"exclusiveMinimum": 0}) == [
        FieldError("", "must be greater than 0")
    ]


# --- date and datetime --------------------------------------------------------------------


def test_date() -> None:
    assert answer(Kind.DATE, " 2026-02-28 ") == "2026-02-28"
    assert errors(Kind.DATE, "2026-02-30") == [FieldError("", "not a real date")]
    for raw in ("28/02/2026", "20260228", "2026-02-28T00:00:00Z", 20260228, None):
        assert errors(Kind.DATE, raw) == [FieldError("", "expected a date as YYYY-MM-DD")]


@pytest.mark.parametrize(
    ("raw", "value"),
    [
        ("2026-11-29T10:00:00Z", "2026-11-29T10:00:00Z"),
        ("2026-11-29T11:00:00+01:00", "2026-11-29T10:00:00Z"),
        ("2026-11-29 05:30-04:30", "2026-11-29T10:00:00Z"),
        ("2026-11-29t10:00:00.250z", "2026-11-29T10:00:00.250000Z"),
        ("2026-11-29T10:00:00.000+00:00", "2026-11-29T10:00:00Z"),
        ("20261129T120000+0200", "2026-11-29T10:00:00Z"),
        ("2026-11-29T13:00+03", "2026-11-29T10:00:00Z"),
    ],
)
def test_datetime_normalizes_to_utc(raw: str, value: str) -> None:
    assert answer(Kind.DATETIME, raw) == value


def test_datetime_rejections() -> None:
    assert errors(Kind.DATETIME, "2026-11-29T10:00:00") == [FieldError("", "needs a timezone")]
    assert errors(Kind.DATETIME, "2026-11-29T10:00:00+00:00:00.5") == [
        FieldError("", "the timezone must be Z or an offset such as +02:00")
    ]
    assert errors(Kind.DATETIME, "0001-01-01T00:00:00+01:00") == [
        FieldError("", "date is out of range")
    ]
    for raw in ("tomorrow", "", 1764410400, None):
        (error,) = errors(Kind.DATETIME, raw)
        assert error.message.startswith("expected a date and time")


@pytest.mark.parametrize(
    "raw", ["2026-11-29T10:00:00.123456789Z", "2026-11-29T10:00:00,1234567+01:00"]
)
def test_datetime_finer_than_a_microsecond_is_refused_not_cut(raw: str) -> None:
    assert errors(Kind.DATETIME, raw) == [
        FieldError("", "at most 6 digits after the seconds: microseconds are the finest kept")
    ]
    assert answer(Kind.DATETIME, "2026-11-29T10:00:00.123456Z") == "2026-11-29T10:00:00.123456Z"


# --- file ---------------------------------------------------------------------------------


def test_file_reference_is_the_server_record() -> None:
    assert answer(Kind.FILE, "f-png") == PNG
    assert answer(Kind.FILE, {"id": "f-png", "name": "evil.exe", "size": 1}) == PNG


def test_file_must_be_an_upload_of_the_answerer() -> None:
    assert errors(Kind.FILE, "f-other") == [FieldError("", "not a file you uploaded")]
    for raw in (None, 3, {"name": "x"}, ""):
        assert errors(Kind.FILE, raw) == [FieldError("", "expected the id of an uploaded file")]


def test_file_constraints() -> None:
    schema = {"mediaTypes": ["image/*", "text/plain"], "maxBytes": 4096}
    assert answer(Kind.FILE, "f-png", schema) == PNG
    assert errors(Kind.FILE, "f-pdf", schema) == [
        FieldError("", "the file must be at most 4096 bytes"),
        FieldError("", "the file type must be one of: image/*, text/plain"),
    ]


# --- form ---------------------------------------------------------------------------------

FORM = {
    "type": "object",
    "properties": {
        "amount": {"type": "number", "minimum": 5, "multipleOf": 0.01},
        "count": {"type": "integer"},
        "ok": {"type": "boolean"},
        "size": {"type": "string", "enum": ["s", "m", "l"]},
        "tags": {"type": "array", "items": {"type": "string", "enum": ["x", "y", "z"]}},
        "name": {"type": "string", "maxLength": 5},
        "notes": {"type": "string", "x-pawflow-kind": "multiline"},
        "day": {"type": "string", "format": "date"},
        "at": {"type": "string", "format": "date-time"},
        "scan": {"type": "object", "x-pawflow-kind": "file"},
    },
    "required": ["amount", "day"],
}


def test_form_normalizes_every_field() -> None:
    result = answer(
        Kind.FORM,
        {
            "amount": "12.50",
            "count": "3",
            "ok": "yes",
            "size": "m",
            "tags": ["z", "x"],
            "name": "Ana",
            "notes": "a\r\nb",
            "day": "2026-12-01",
            "at": "2026-12-01T09:00:00+01:00",
            "scan": {"id": "f-pdf"},
        },
        FORM,
    )
    assert result == {
        "amount": "12.5",
        "count": 3,
        "ok": True,
        "size": "m",
        "tags": ["x", "z"],
        "name": "Ana",
        "notes": "a\nb",
        "day": "2026-12-01",
        "at": "2026-12-01T08:00:00Z",
        "scan": PDF,
    }


def test_form_optional_fields_may_be_absent_or_null() -> None:
    assert answer(Kind.FORM, {"amount": 5, "day": "2026-01-01", "name": None}, FORM) == {
        "amount": "5",
        "day": "2026-01-01",
    }


def test_form_collects_every_field_error() -> None:
    assert errors(
        Kind.FORM,
        {
            "amount": "4.999",
            "count": 1.5,
            "tags": ["x", "q"],
            "name": "Anastasia",
            "at": "2026-12-01T09:00:00",
            "scan": "nope",
            "extra": 1,
            "day": None,
        },
        FORM,
    ) == [
        FieldError("extra", "unknown field"),
        FieldError("amount", "must be at least 5"),
        FieldError("amount", "must be a multiple of 0.01"),
        FieldError("count", "expected an integer"),
        FieldError("tags[1]", "must be one of: x, y, z"),
        FieldError("name", "must be at most 5 characters long"),
        FieldError("day", "required"),
        FieldError("at", "needs a timezone"),
        FieldError("scan", "not a file you uploaded"),
    ]


@pytest.mark.parametrize("raw", [None, [], "amount=5", 5])
def test_form_needs_an_object(raw: object) -> None:
    assert errors(Kind.FORM, raw, FORM) == [FieldError("", "expected an object of named fields")]


def test_form_keys_that_are_not_text_are_unknown_fields() -> None:
    raw = {"amount": 5, "day": "2026-01-01", 7: "x", 10**5000: "y"}
    assert errors(Kind.FORM, raw, FORM) == [
        FieldError("7", "unknown field"),
        FieldError("<key>", "unknown field"),
    ]


def test_invalid_answer_message_summarizes() -> None:
    with pytest.raises(InvalidAnswer) as caught:
        answer(Kind.FORM, {}, FORM)
    assert caught.value.message == "invalid answer: amount: required; day: required"


# --- validators are compiled once per schema ----------------------------------------------


def test_validators_are_cached() -> None:
    schema = {"type": "integer", "minimum": 3}
    assert validator_for(schema) is validator_for(dict(reversed(schema.items())))
