"""``${…}`` expressions and JSON paths."""

from __future__ import annotations

import json

import pytest

from pawflow.flow import ExpressionError, FlowFile, compile_path, parse_template

VALUE = json.dumps(
    {"status": "answered", "answer": {"amount": "12.5", "ok": True, "tags": ["a", "b"]}}
)
FLOWFILE = FlowFile.create(attributes={"durable.wait.value": VALUE, "name": " Ada ", "n": "3"})


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("plain text", "plain text"),
        ("${n} items", "3 items"),
        ("${missing}", ""),
        ("${missing:default('none')}", "none"),
        ("${name:trim():toUpper()}", "ADA"),
        ("${name:trim():toLower():append('!'):prepend('hi ')}", "hi ada!"),
        ("${durable.wait.value:jsonPath('$.status')}", "answered"),
        ("${durable.wait.value:jsonPath('$.answer.amount')}", "12.5"),
        ("${durable.wait.value:jsonPath('$.answer.ok')}", "true"),
        ("${durable.wait.value:jsonPath('$.answer.tags[1]')}", "b"),
        ("${durable.wait.value:jsonPath(\"$['answer']['tags']\")}", '["a","b"]'),
        ("${durable.wait.value:jsonPath('$.nope'):default('-')}", "-"),
        ("${durable.wait.value:jsonPath('$.answer.amount'):money('EUR')}", "€12.50"),
        ("${n:money('JPY')}", "¥3"),
        ("${name:money('EUR')}", " Ada "),  # not a number: as it is
        ("${missing:money('EUR')}", ""),
        ("${name:jsonPath('$.x')}", ""),
        ("${ 'n' }", "3"),
        ("cost: $${n}", "cost: ${n}"),
        ("${uuid}", None),  # the FlowFile's id (random: not in the test's name)
    ],
)
def test_templates_render_against_the_flowfile(source: str, expected: str | None) -> None:
    wanted = FLOWFILE.id if expected is None else expected
    assert parse_template(source).render(FLOWFILE.lookup) == wanted


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("${n", "expected '}'"),
        ("${}", "expected an attribute name"),
        ("${n:shout()}", "unknown function 'shout'"),
        ("${n:default()}", "takes 1 argument"),
        ("${n:jsonPath('answer')}", "must start with $"),
        ("${n:jsonPath('$..x')}", "invalid JSON path"),
        ("${n:default('x)}", "unterminated string"),
    ],
)
def test_bad_expressions_say_what_and_where(source: str, message: str) -> None:
    with pytest.raises(ExpressionError, match=r"position|JSON path") as caught:
        parse_template(source)
    assert message in str(caught.value)


def test_static_templates_know_it() -> None:
    assert parse_template("abc").static_value == "abc"
    assert parse_template("a${b}").static_value is None
    assert compile_path("$.a[2]['b c']").steps == ("a", 2, "b c")
