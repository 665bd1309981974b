"""Kinds, options and response schemas: what a request may ask for and how it is stored."""

from __future__ import annotations

from typing import Any

import pytest

from pawflow.errors import FieldError, InvalidInput
from pawflow.interactions import (
    CONFIRMATION_KINDS,
    CONTRACT,
    Kind,
    Option,
    kind_of_property,
    normalize_options,
    parse_kind,
    prepare_request,
)


def paths(error: InvalidInput) -> list[str]:
    return [e.path for e in error.errors]


def rejected(kind: Kind, options: Any, schema: Any) -> InvalidInput:
    with pytest.raises(InvalidInput) as caught:
        prepare_request(kind, options, schema)
    return caught.value


# --- kinds --------------------------------------------------------------------------------


def test_contract_and_kind_names() -> None:
    assert CONTRACT == "pawflow.user-interaction.v1"
    assert [k.value for k in Kind] == [
        "confirm",
        "choice",
        "multi",
        "text",
        "multiline",
        "integer",
        "decimal",
        "date",
        "datetime",
        "file",
        "form",
    ]
    assert {Kind.CONFIRM, Kind.CHOICE, Kind.MULTI} == CONFIRMATION_KINDS


@pytest.mark.parametrize("raw", ["choice", " Choice ", Kind.CHOICE])
def test_parse_kind_accepts_names(raw: object) -> None:
    assert parse_kind(raw) is Kind.CHOICE


@pytest.mark.parametrize("raw", ["pick", "", None, 3, ["confirm"]])
def test_parse_kind_rejects_and_names_all_kinds(raw: object) -> None:
    with pytest.raises(InvalidInput) as caught:
        parse_kind(raw)
    assert caught.value.errors[0].path == "kind"
    for kind in Kind:
        assert kind.value in caught.value.message


# --- options ------------------------------------------------------------------------------


def test_bare_strings_expand_to_value_and_label() -> None:
    assert normalize_options(["a", "b"]) == [
        Option(value="a", label="a"),
        Option(value="b", label="b"),
    ]


def test_objects_keep_labels_and_default_missing_ones() -> None:
    options = normalize_options([{"value": "y", "label": "Yes"}, {"value": "n"}, "m"])
    assert options == [
        Option(value="y", label="Yes"),
        Option(value="n", label="n"),
        Option(value="m", label="m"),
    ]


def test_option_is_frozen() -> None:
    option = Option(value="a", label="A")
    with pytest.raises(ValueError):
        option.value = "b"


@pytest.mark.parametrize(
    ("raw", "path"),
    [
        ("a,b", "options"),
        ([], "options"),
        (["a", "a"], "options[1]"),
        (["a", {"value": "a"}], "options[1].value"),
        (["a", "b", {"value": ""}], "options[2].value"),
        (["a", "b", {"value": "  "}], "options[2].value"),
        ([{"label": "x"}], "options[0].value"),
        ([{"value": 3}], "options[0].value"),
        ([{"value": "a", "label": ""}], "options[0].label"),
        ([{"value": "a", "color": "red"}], "options[0].color"),
        ([None], "options[0]"),
        (["a\x00"], "options[0]"),
        (["x" * 300], "options[0]"),
    ],
)
def test_bad_options_name_the_place(raw: object, path: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        normalize_options(raw)
    assert path in paths(caught.value)


def test_option_keys_that_are_not_text_are_reported() -> None:
    with pytest.raises(InvalidInput) as caught:
        normalize_options([{"value": "a", 10**5000: 1}])
    assert paths(caught.value) == ["options[0].<key>"]


def test_all_option_problems_are_reported() -> None:
    with pytest.raises(InvalidInput) as caught:
        normalize_options(["a", "a", {"value": ""}, 7])
    assert paths(caught.value) == ["options[1]", "options[2].value", "options[3]"]
    assert caught.value.errors[0] == FieldError("options[1]", "duplicate of options[0]")


# --- derived schemas ----------------------------------------------------------------------

OPTS = [Option(value="a", label="A"), Option(value="b", label="B")]


@pytest.mark.parametrize(
    ("kind", "schema"),
    [
        (Kind.CONFIRM, {"type": "boolean"}),
        (Kind.TEXT, {"type": "string"}),
        (Kind.MULTILINE, {"type": "string", "x-pawflow-kind": "multiline"}),
        (Kind.INTEGER, {"type": "integer"}),
        (Kind.DECIMAL, {"type": "number", "x-pawflow-kind": "decimal"}),
        (Kind.DATE, {"type": "string", "format": "date"}),
        (Kind.DATETIME, {"type": "string", "format": "date-time"}),
        (Kind.FILE, {"type": "object", "x-pawflow-kind": "file"}),
    ],
)
def test_derived_schema_of_plain_kinds(kind: Kind, schema: dict[str, Any]) -> None:
    assert prepare_request(kind, None, None) == (None, schema)


def test_derived_choice_and_multi_schemas() -> None:
    enum = {"type": "string", "enum": ["a", "b"], "enumNames": ["A", "B"]}
    assert prepare_request(Kind.CHOICE, OPTS, None) == (OPTS, enum)
    assert prepare_request(Kind.MULTI, OPTS, None) == (
        OPTS,
        {"type": "array", "items": enum, "uniqueItems": True},
    )


def test_raw_options_are_normalized_too() -> None:
    options, _ = prepare_request(Kind.CHOICE, ["a", "b"], None)
    assert options == [Option(value="a", label="a"), Option(value="b", label="b")]


def test_choice_needs_options_and_other_kinds_refuse_them() -> None:
    assert paths(rejected(Kind.CHOICE, None, None)) == ["options"]
    assert paths(rejected(Kind.MULTI, None, {"type": "array"})) == ["options"]
    assert paths(rejected(Kind.TEXT, OPTS, None)) == ["options"]
    assert prepare_request(Kind.TEXT, [], None) == (None, {"type": "string"})


def test_form_needs_a_schema() -> None:
    assert paths(rejected(Kind.FORM, None, None)) == ["response_schema"]


# --- given schemas ------------------------------------------------------------------------


def test_options_built_from_enum_and_enum_names() -> None:
    schema = {"type": "string", "enum": ["s", "m"], "enumNames": ["Small", "Medium"]}
    options, effective = prepare_request(Kind.CHOICE, None, schema)
    assert options == [Option(value="s", label="Small"), Option(value="m", label="Medium")]
    assert effective == schema


def test_multi_options_from_items_enum_and_enum_added_from_options() -> None:
    options, effective = prepare_request(
        Kind.MULTI, None, {"items": {"enum": ["x", "y"]}, "minItems": 1}
    )
    assert options == [Option(value="x", label="x"), Option(value="y", label="y")]
    assert effective == {
        "type": "array",
        "items": {"type": "string", "enum": ["x", "y"], "enumNames": ["x", "y"]},
        "minItems": 1,
        "uniqueItems": True,
    }
    _, effective = prepare_request(Kind.CHOICE, OPTS, {"title": "Pick"})
    assert effective == {
        "type": "string",
        "title": "Pick",
        "enum": ["a", "b"],
        "enumNames": ["A", "B"],
    }


def test_enum_must_agree_with_options() -> None:
    error = rejected(Kind.CHOICE, OPTS, {"enum": ["a", "c"]})
    assert paths(error) == ["response_schema.enum"]


def test_enum_names_must_pair_with_enum() -> None:
    error = rejected(Kind.CHOICE, None, {"enum": ["a", "b"], "enumNames": ["A"]})
    assert paths(error) == ["response_schema.enumNames"]


def test_given_schema_gets_defaults_and_is_not_mutated() -> None:
    given = {"minimum": 0, "multipleOf": 0.01}
    _, effective = prepare_request(Kind.DECIMAL, None, given)
    assert effective == {
        "type": "number",
        "x-pawflow-kind": "decimal",
        "minimum": 0,
        "multipleOf": 0.01,
    }
    assert given == {"minimum": 0, "multipleOf": 0.01}
    _, effective = prepare_request(Kind.DATE, None, {"title": "When"})
    assert effective == {"type": "string", "format": "date", "title": "When"}


def test_dialect_is_accepted() -> None:
    schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "boolean"}
    assert prepare_request(Kind.CONFIRM, None, schema)[1] == schema
    error = rejected(Kind.CONFIRM, None, {"$schema": "http://json-schema.org/draft-07/schema#"})
    assert paths(error) == ["response_schema.$schema"]


@pytest.mark.parametrize(
    ("kind", "schema", "path", "message"),
    [
        (Kind.TEXT, {"const": "x"}, "response_schema.const", "unknown keyword 'const'"),
        (Kind.TEXT, {"$ref": "#/x"}, "response_schema.$ref", "unknown keyword '$ref'"),
        (Kind.TEXT, {"oneOf": []}, "response_schema.oneOf", "unknown keyword 'oneOf'"),
        (
            Kind.INTEGER,
            {"minLength": 2},
            "response_schema.minLength",
            "minLength is not allowed for kind integer",
        ),
        (Kind.INTEGER, {"type": "number"}, "response_schema.type", None),
        (Kind.DECIMAL, {"type": "integer"}, "response_schema.type", None),
        (Kind.TEXT, {"type": ["string", "null"]}, "response_schema.type", None),
        (Kind.TEXT, {"enum": ["a"]}, "response_schema.enum", None),
        (Kind.TEXT, {"format": "date"}, "response_schema.format", None),
        (Kind.TEXT, {"format": "ipv4"}, "response_schema.format", None),
        (Kind.TEXT, {"pattern": "("}, "response_schema.pattern", None),
        (Kind.TEXT, {"minLength": -1}, "response_schema.minLength", None),
        (Kind.TEXT, {"minLength": 5, "maxLength": 2}, "response_schema.minLength", None),
        (Kind.TEXT, {"title": 5}, "response_schema.title", "expected a string"),
        (Kind.TEXT, {"x-pawflow-kind": "multiline"}, "response_schema.x-pawflow-kind", None),
        (Kind.INTEGER, {"minimum": "5"}, "response_schema.minimum", "must be a number"),
        (Kind.INTEGER, {"multipleOf": 0}, "response_schema.multipleOf", None),
        (Kind.DATE, {"format": "date-time"}, "response_schema.format", None),
        (Kind.FILE, {"maxBytes": 0}, "response_schema.maxBytes", None),
        (Kind.FILE, {"mediaTypes": ["png"]}, "response_schema.mediaTypes[0]", None),
        (Kind.FILE, {"mediaTypes": []}, "response_schema.mediaTypes", None),
        (Kind.MULTI, {"uniqueItems": False}, "response_schema.uniqueItems", None),
        (
            Kind.MULTI,
            {"items": {"enum": ["a"]}, "minItems": 2},
            "response_schema.minItems",
            None,
        ),
        (Kind.MULTI, {"items": {"type": "integer"}}, "response_schema.items.type", None),
        (Kind.CONFIRM, [], "response_schema", None),
        (Kind.CONFIRM, {"default": float("nan")}, "response_schema", None),
    ],
)
def test_schema_subset_rejections(kind: Kind, schema: Any, path: str, message: str | None) -> None:
    options = OPTS if kind in (Kind.CHOICE, Kind.MULTI) and "items" not in schema else None
    error = rejected(kind, options, schema)
    assert path in paths(error)
    if message is not None:
        assert FieldError(path, message) in error.errors


def test_unknown_keywords_are_all_named() -> None:
    error = rejected(Kind.TEXT, None, {"if": {}, "then": {}, "minLength": 1})
    assert paths(error) == ["response_schema.if", "response_schema.then"]
    assert "if" in error.message


# --- forms --------------------------------------------------------------------------------

FORM = {
    "type": "object",
    "properties": {
        "amount": {"type": "number", "minimum": 0},
        "count": {"type": "integer"},
        "ok": {"type": "boolean"},
        "size": {"type": "string", "enum": ["s", "m"]},
        "tags": {"type": "array", "items": {"type": "string", "enum": ["x", "y"]}},
        "name": {"type": "string", "maxLength": 10},
        "notes": {"type": "string", "x-pawflow-kind": "multiline"},
        "day": {"type": "string", "format": "date"},
        "at": {"type": "string", "format": "date-time"},
        "scan": {"x-pawflow-kind": "file", "mediaTypes": ["application/pdf"]},
    },
    "required": ["amount"],
}


def test_form_schema_is_completed() -> None:
    options, effective = prepare_request(Kind.FORM, None, FORM)
    assert options is None
    assert effective["additionalProperties"] is False
    props = effective["properties"]
    assert props["amount"] == {"type": "number", "minimum": 0, "x-pawflow-kind": "decimal"}
    assert props["size"]["enumNames"] == ["s", "m"]
    assert props["tags"]["uniqueItems"] is True
    assert props["scan"] == {
        "type": "object",
        "x-pawflow-kind": "file",
        "mediaTypes": ["application/pdf"],
    }
    assert "additionalProperties" not in FORM


@pytest.mark.parametrize(
    ("schema", "path"),
    [
        ({"type": "object"}, "response_schema.properties"),
        ({"properties": {}}, "response_schema.properties"),
        ({"type": "array", "properties": {"a": {"type": "integer"}}}, "response_schema.type"),
        (
            {"properties": {"a": {"type": "integer"}}, "additionalProperties": True},
            "response_schema.additionalProperties",
        ),
        (
            {"properties": {"a": {"type": "object", "properties": {}}}},
            "response_schema.properties.a",
        ),
        (
            {"properties": {"a": {"type": "array", "items": {"type": "object"}}}},
            "response_schema.properties.a",
        ),
        ({"properties": {"a": {}}}, "response_schema.properties.a"),
        (
            {"properties": {"a": {"x-pawflow-kind": "form"}}},
            "response_schema.properties.a",
        ),
        (
            {"properties": {"a": {"type": "string", "x-pawflow-kind": "choice"}}},
            "response_schema.properties.a.enum",
        ),
        (
            {"properties": {"amount": {"type": "number", "minimum": "x"}}},
            "response_schema.properties.amount.minimum",
        ),
        (
            {"properties": {"a": {"type": "integer", "properties": {}}}},
            "response_schema.properties.a.properties",
        ),
        ({"properties": {"a.b": {"type": "integer"}}}, "response_schema.properties.a.b"),
        (
            {"properties": {"a": {"type": "integer"}}, "required": ["b"]},
            "response_schema.required[0]",
        ),
    ],
)
def test_form_schema_rejections(schema: dict[str, Any], path: str) -> None:
    assert path in paths(rejected(Kind.FORM, None, schema))


def test_form_reports_every_bad_field() -> None:
    error = rejected(
        Kind.FORM,
        None,
        {
            "properties": {
                "a": {"type": "integer", "minimum": "0"},
                "b": {"type": "object"},
                "c": {"type": "string", "foo": 1},
            }
        },
    )
    assert paths(error) == [
        "response_schema.properties.a.minimum",
        "response_schema.properties.b",
        "response_schema.properties.c.foo",
    ]


# --- which kind a field is ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("schema", "kind"),
    [
        ({"type": "boolean"}, Kind.CONFIRM),
        ({"type": "string", "enum": ["a"]}, Kind.CHOICE),
        ({"type": "array", "items": {"enum": ["a"]}}, Kind.MULTI),
        ({"type": "string"}, Kind.TEXT),
        ({"type": "string", "format": "email"}, Kind.TEXT),
        ({"type": "string", "x-pawflow-kind": "multiline"}, Kind.MULTILINE),
        ({"type": "integer"}, Kind.INTEGER),
        ({"type": "number"}, Kind.DECIMAL),
        ({"type": "string", "format": "date"}, Kind.DATE),
        ({"type": "string", "format": "date-time"}, Kind.DATETIME),
        ({"type": "object", "x-pawflow-kind": "file"}, Kind.FILE),
    ],
)
def test_kind_of_property(schema: dict[str, Any], kind: Kind) -> None:
    assert kind_of_property(schema) is kind


@pytest.mark.parametrize(
    "schema",
    [
        {},
        {"type": "object"},
        {"type": "array"},
        {"type": "array", "items": {"type": "string"}},
        {"type": "null"},
        {"x-pawflow-kind": "form"},
        {"x-pawflow-kind": "nope"},
    ],
)
def test_kind_of_property_rejects(schema: dict[str, Any]) -> None:
    with pytest.raises(InvalidInput):
        kind_of_property(schema)
