"""``${…}`` expressions in task properties.

A property value is text in which ``${name}`` stands for the FlowFile attribute ``name``
(empty when absent) and ``$${`` for a literal ``${``. Functions chain after a colon::

    ${amount}                                   the attribute
    ${durable.wait.value:jsonPath('$.answer')}  a field of the JSON the attribute holds
    ${reason:default('none'):toUpper()}         a fallback, then upper case
    ${'odd name!'}                              a quoted attribute name

Functions: ``jsonPath(path)``, ``default(text)``, ``toUpper()``, ``toLower()``, ``trim()``,
``append(text)``, ``prepend(text)``, ``money(currency)`` (a number as an amount in that ISO
4217 currency, ``€42.50``, as the web chat and the terminal write it). JSON paths are the
subset ``$``, ``.field``, ``['field']`` and ``[index]``; a JSON result that is not a string
is written as JSON (``true``, ``12.5``, ``{"a":1}``) and a missing one as empty text.

Templates are parsed once, when the flow is loaded, so a syntax error names its task and
property before anything runs.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pawflow.errors import ExpressionError as ExpressionError
from pawflow.interactions.money import money

Lookup = Callable[[str], str | None]

_NAME = re.compile(r"[A-Za-z0-9_.\-]+")
_FUNC = re.compile(r"[A-Za-z][A-Za-z0-9]*")
_NUMBER = re.compile(r"-?\d+(\.\d+)?")
_PATH_FIELD = re.compile(r"\.([A-Za-z0-9_\-]+)")
_PATH_INDEX = re.compile(r"\[(\d+)\]")
_PATH_QUOTED = re.compile(r"\[\s*(?:'([^']*)'|\"([^\"]*)\")\s*\]")

FUNCTIONS: dict[str, int] = {
    "jsonPath": 1,
    "default": 1,
    "toUpper": 0,
    "toLower": 0,
    "trim": 0,
    "append": 1,
    "prepend": 1,
    "money": 1,
}


# -- JSON paths -------------------------------------------------------------------------


@dataclass(frozen=True)
class JsonPath:
    """A compiled JSON path of the supported subset."""

    text: str
    steps: tuple[str | int, ...]

    def find(self, value: Any) -> Any:
        """The value at this path, or ``None`` when any step is missing."""
        for step in self.steps:
            if isinstance(step, int):
                if not isinstance(value, list) or step >= len(value):
                    return None
            elif not isinstance(value, dict) or step not in value:
                return None
            value = value[step]
        return value


def compile_path(text: str) -> JsonPath:
    source = text.strip()
    if not source.startswith("$"):
        raise ExpressionError(f"invalid JSON path {text!r}: it must start with $")
    steps: list[str | int] = []
    at = 1
    while at < len(source):
        for pattern in (_PATH_FIELD, _PATH_INDEX, _PATH_QUOTED):
            match = pattern.match(source, at)
            if match is None:
                continue
            if pattern is _PATH_INDEX:
                steps.append(int(match.group(1)))
            elif pattern is _PATH_QUOTED:
                steps.append(match.group(1) if match.group(1) is not None else match.group(2))
            else:
                steps.append(match.group(1))
            at = match.end()
            break
        else:
            raise ExpressionError(
                f"invalid JSON path {text!r} at {source[at:]!r}:"
                " use $, .field, ['field'] or [index]"
            )
    return JsonPath(source, tuple(steps))


def parse_json_value(text: str | None) -> Any:
    """The JSON an attribute holds; absent or unreadable JSON reads as ``None``."""
    if text is None:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None


def render_value(value: Any) -> str:
    """How a JSON value becomes attribute text."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


# -- templates --------------------------------------------------------------------------


@dataclass(frozen=True)
class _Call:
    name: str
    args: tuple[str, ...]
    path: JsonPath | None = None


@dataclass(frozen=True)
class _Expression:
    subject: str
    calls: tuple[_Call, ...]

    def evaluate(self, lookup: Lookup) -> str:
        value: Any = lookup(self.subject)
        for call in self.calls:
            value = _apply(call, value)
        return render_value(value)


def _apply(call: _Call, value: Any) -> Any:
    if call.name == "jsonPath":
        assert call.path is not None
        document = parse_json_value(value) if isinstance(value, str) else value
        return call.path.find(document)
    if call.name == "default":
        return call.args[0] if value is None or value == "" else value
    if call.name == "money":
        return "" if value is None or value == "" else money(value, call.args[0])
    text = render_value(value)
    if call.name == "toUpper":
        return text.upper()
    if call.name == "toLower":
        return text.lower()
    if call.name == "trim":
        return text.strip()
    if call.name == "append":
        return text + call.args[0]
    if call.name == "prepend":
        return call.args[0] + text
    raise AssertionError(call.name)  # pragma: no cover - names are checked when parsing


@dataclass(frozen=True)
class Template:
    """A property value with its ``${…}`` expressions parsed."""

    source: str
    parts: tuple[str | _Expression, ...]

    @property
    def is_static(self) -> bool:
        return all(isinstance(part, str) for part in self.parts)

    @property
    def static_value(self) -> str | None:
        """The text itself when the template holds no expression."""
        return "".join(p for p in self.parts if isinstance(p, str)) if self.is_static else None

    def render(self, lookup: Lookup) -> str:
        return "".join(
            part if isinstance(part, str) else part.evaluate(lookup) for part in self.parts
        )


class _Parser:
    def __init__(self, source: str) -> None:
        self.source = source
        self.at = 0

    def fail(self, message: str) -> ExpressionError:
        return ExpressionError(f"{message} at position {self.at + 1} of {self.source!r}")

    def skip_space(self) -> None:
        while self.at < len(self.source) and self.source[self.at] in " \t":
            self.at += 1

    def peek(self) -> str:
        return self.source[self.at] if self.at < len(self.source) else ""

    def expect(self, char: str) -> None:
        self.skip_space()
        if self.peek() != char:
            found = repr(self.peek()) if self.peek() else "the end"
            raise self.fail(f"expected {char!r}, found {found}")
        self.at += 1

    def quoted(self) -> str:
        quote = self.peek()
        self.at += 1
        out: list[str] = []
        while self.at < len(self.source):
            char = self.source[self.at]
            if char == "\\" and self.at + 1 < len(self.source):
                out.append(self.source[self.at + 1])
                self.at += 2
                continue
            if char == quote:
                self.at += 1
                return "".join(out)
            out.append(char)
            self.at += 1
        raise self.fail("unterminated string")

    def subject(self) -> str:
        self.skip_space()
        if self.peek() in ("'", '"'):
            return self.quoted()
        match = _NAME.match(self.source, self.at)
        if match is None:
            raise self.fail("expected an attribute name")
        self.at = match.end()
        return match.group(0)

    def argument(self) -> str:
        self.skip_space()
        if self.peek() in ("'", '"'):
            return self.quoted()
        match = _NUMBER.match(self.source, self.at)
        if match is None:
            raise self.fail("expected a quoted string or a number")
        self.at = match.end()
        return match.group(0)

    def call(self) -> _Call:
        self.skip_space()
        match = _FUNC.match(self.source, self.at)
        if match is None:
            raise self.fail("expected a function name after ':'")
        name = match.group(0)
        if name not in FUNCTIONS:
            known = ", ".join(FUNCTIONS)
            raise self.fail(f"unknown function {name!r} (known: {known})")
        self.at = match.end()
        self.expect("(")
        args: list[str] = []
        self.skip_space()
        if self.peek() != ")":
            args.append(self.argument())
            self.skip_space()
            while self.peek() == ",":
                self.at += 1
                args.append(self.argument())
                self.skip_space()
        self.expect(")")
        if len(args) != FUNCTIONS[name]:
            raise self.fail(f"{name}() takes {FUNCTIONS[name]} argument(s), got {len(args)}")
        path = compile_path(args[0]) if name == "jsonPath" else None
        return _Call(name, tuple(args), path)

    def expression(self) -> _Expression:
        subject = self.subject()
        calls: list[_Call] = []
        self.skip_space()
        while self.peek() == ":":
            self.at += 1
            calls.append(self.call())
            self.skip_space()
        self.expect("}")
        return _Expression(subject, tuple(calls))

    def template(self) -> Template:
        parts: list[str | _Expression] = []
        text: list[str] = []
        while self.at < len(self.source):
            if self.source.startswith("$${", self.at):
                text.append("${")
                self.at += 3
            elif self.source.startswith("${", self.at):
                if text:
                    parts.append("".join(text))
                    text = []
                self.at += 2
                parts.append(self.expression())
            else:
                text.append(self.source[self.at])
                self.at += 1
        if text or not parts:
            parts.append("".join(text))
        return Template(self.source, tuple(parts))


def parse_template(source: str) -> Template:
    """Parse a property value; raises ``ExpressionError`` naming the position."""
    return _Parser(source).template()
