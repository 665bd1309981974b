"""General tasks: make FlowFiles, set attributes, route, log, and the in-process wait pair."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from pawflow.durations import deadline_after
from pawflow.errors import FieldError, InvalidInput
from pawflow.flow.expressions import (
    ExpressionError,
    JsonPath,
    Template,
    compile_path,
    parse_json_value,
    parse_template,
    render_value,
)
from pawflow.flow.flowfile import FlowFile
from pawflow.flow.registry import register_task
from pawflow.flow.task import Emit, Property, Task, TaskContext, TaskFailed


@register_task
class GenerateFlowFile(Task):
    """Emit ``count`` new FlowFiles for each one received (descended from it)."""

    type_name = "generateFlowFile"
    properties = (
        Property("content", description="content of each new FlowFile (default: the input's)"),
        Property("count", "int", default=1, description="how many FlowFiles to make"),
        Property("attributes", "map", description="attributes to set, name → value"),
    )
    relationships = ("success", "failure")

    def check(self) -> list[FieldError]:
        if not 1 <= self.value("count") <= 1_000_000:
            return [FieldError("properties.count", "must be between 1 and 1000000")]
        return []

    def process(self, flowfile: FlowFile, ctx: TaskContext) -> Iterable[Emit]:
        content = ctx.prop("content")
        templates: Mapping[str, Template] = self.value("attributes") or {}
        count = int(self.value("count"))
        for index in range(count):
            update = {name: t.render(flowfile.lookup) for name, t in templates.items()}
            if count > 1:
                update["generate.index"] = str(index)
            yield "success", flowfile.child(content=content, update=update)


@register_task
class UpdateAttribute(Task):
    """Set attributes (every value is read from the attributes as they came in), remove some."""

    type_name = "updateAttribute"
    properties = (
        Property("set", "map", description="attributes to set, name → value"),
        Property("remove", "list", description="attribute names to remove"),
    )
    relationships = ("success", "failure")

    def process(self, flowfile: FlowFile, ctx: TaskContext) -> Iterable[Emit]:
        templates: Mapping[str, Template] = self.value("set") or {}
        update = {name: t.render(flowfile.lookup) for name, t in templates.items()}
        removed = [t.render(flowfile.lookup) for t in self.value("remove") or []]
        yield "success", flowfile.evolve(update=update, remove=removed)


# -- routeOnAttribute -----------------------------------------------------------------------

_TESTS = ("equals", "not_equals", "in", "not_in", "matches", "exists", "gt", "ge", "lt", "le")
_CONDITION_KEYS = ("attribute", "value", "path", *_TESTS)
_RESERVED_ROUTES = ("unmatched", "failure")


def _number(text: str) -> Decimal | None:
    try:
        number = Decimal(text.strip())
    except (InvalidOperation, ValueError):
        return None
    return number if number.is_finite() else None


@dataclass(frozen=True)
class Condition:
    """One test on an attribute (or an expression), optionally on a JSON field of it."""

    attribute: str | None
    value: Template | None
    path: JsonPath | None
    test: str
    operand: Any

    def holds(self, flowfile: FlowFile) -> bool:
        if self.attribute is not None:
            subject = flowfile.lookup(self.attribute)
        else:
            assert self.value is not None
            subject = self.value.render(flowfile.lookup)
        present = subject is not None
        if self.path is not None and subject is not None:
            document = parse_json_value(subject)
            found = self.path.find(document)
            present = found is not None
            subject = render_value(found) if present else None
        if self.test == "exists":
            return present is (self.operand is True)
        if subject is None:
            return self.test in ("not_equals", "not_in")
        render = flowfile.lookup
        if self.test in ("equals", "not_equals"):
            expected: Template = self.operand
            return (subject == expected.render(render)) is (self.test == "equals")
        if self.test in ("in", "not_in"):
            inside = subject in {t.render(render) for t in self.operand}
            return inside if self.test == "in" else not inside
        if self.test == "matches":
            pattern: re.Pattern[str] = self.operand
            return pattern.fullmatch(subject) is not None
        left, right = _number(subject), _number(self.operand.render(render))
        if left is None or right is None:
            return False
        return {
            "gt": left > right,
            "ge": left >= right,
            "lt": left < right,
            "le": left <= right,
        }[self.test]


def _operand_text(raw: object) -> str | None:
    if isinstance(raw, bool):
        return "true" if raw else "false"
    if isinstance(raw, str | int | float):
        return str(raw)
    return None


def compile_condition(raw: object, path: str) -> tuple[Condition | None, list[FieldError]]:
    if not isinstance(raw, Mapping):
        return None, [FieldError(path, "expected a condition: {attribute, equals|in|…}")]
    errors = [
        FieldError(f"{path}.{key}", f"unknown key; expected one of {', '.join(_CONDITION_KEYS)}")
        for key in raw
        if key not in _CONDITION_KEYS
    ]
    attribute = raw.get("attribute")
    value: Template | None = None
    if (attribute is None) == ("value" not in raw):
        errors.append(FieldError(path, "give exactly one of attribute or value"))
    elif attribute is not None and not isinstance(attribute, str):
        errors.append(FieldError(f"{path}.attribute", "expected an attribute name"))
    elif "value" in raw:
        try:
            value = parse_template(_operand_text(raw["value"]) or "")
        except ExpressionError as exc:
            errors.append(FieldError(f"{path}.value", exc.message))
    json_path = None
    if raw.get("path") is not None:
        try:
            json_path = compile_path(str(raw["path"]))
        except ExpressionError as exc:
            errors.append(FieldError(f"{path}.path", exc.message))
    tests = [key for key in _TESTS if key in raw]
    if len(tests) != 1:
        errors.append(FieldError(path, f"give exactly one test of {', '.join(_TESTS)}"))
        return None, errors
    test = tests[0]
    operand: Any = None
    raw_operand = raw[test]
    try:
        if test == "exists":
            if not isinstance(raw_operand, bool):
                raise InvalidInput("exists takes true or false")
            operand = raw_operand
        elif test == "matches":
            if not isinstance(raw_operand, str):
                raise InvalidInput("matches takes a regular expression")
            try:
                operand = re.compile(raw_operand)
            except re.error as exc:
                raise InvalidInput(f"not a valid regular expression: {exc}") from exc
        elif test in ("in", "not_in"):
            items = raw_operand.split(",") if isinstance(raw_operand, str) else raw_operand
            if not isinstance(items, list) or not items:
                raise InvalidInput(f"{test} takes a list, or comma-separated text")
            texts = [_operand_text(i) for i in items]
            if any(t is None for t in texts):
                raise InvalidInput(f"{test} takes a list of plain values")
            operand = [
                parse_template(t.strip() if isinstance(raw_operand, str) else t)
                for t in texts
                if t is not None
            ]
        else:
            text = _operand_text(raw_operand)
            if text is None:
                raise InvalidInput(f"{test} takes a plain value")
            operand = parse_template(text)
            numeric = test in ("gt", "ge", "lt", "le")
            if numeric and operand.is_static and _number(operand.static_value or "") is None:
                raise InvalidInput(f"{test} takes a number")
    except InvalidInput as exc:
        errors.append(FieldError(f"{path}.{test}", exc.message))
    if errors:
        return None, errors
    return Condition(attribute, value, json_path, test, operand), []


@register_task
class RouteOnAttribute(Task):
    """Send each FlowFile by the first route (or every route) whose conditions all hold.

    Routes become relationships of their own; a FlowFile matching none leaves by
    ``unmatched``. The chosen route is stamped as ``route.relationship``.
    """

    type_name = "routeOnAttribute"
    properties = (
        Property("routes", "object", required=True, description="route name → condition(s)"),
        Property("strategy", "choice", default="first", choices=("first", "all")),
    )
    relationships = ("unmatched", "failure")

    def __init__(self, task_id: str, values: Mapping[str, Any]) -> None:
        super().__init__(task_id, values)
        self.routes: dict[str, list[Condition]] = {}

    def all_relationships(self) -> tuple[str, ...]:
        return (*self.routes, *self.relationships)

    def check(self) -> list[FieldError]:
        raw = self.value("routes")
        if not isinstance(raw, Mapping) or not raw:
            return [FieldError("properties.routes", "expected a mapping: route name → condition")]
        errors: list[FieldError] = []
        for name, spec in raw.items():
            path = f"properties.routes.{name}"
            if isinstance(name, bool):
                errors.append(FieldError(path, "YAML reads yes/no/on/off as booleans: quote it"))
                continue
            if not isinstance(name, str) or name in _RESERVED_ROUTES:
                errors.append(
                    FieldError(path, "route names are text other than unmatched, failure")
                )
                continue
            items = spec if isinstance(spec, list) else [spec]
            conditions = []
            for index, item in enumerate(items):
                where = f"{path}[{index}]" if isinstance(spec, list) else path
                condition, problems = compile_condition(item, where)
                errors.extend(problems)
                if condition is not None:
                    conditions.append(condition)
            self.routes[name] = conditions
        return errors

    def process(self, flowfile: FlowFile, ctx: TaskContext) -> Iterable[Emit]:
        matched = [
            name
            for name, conditions in self.routes.items()
            if all(condition.holds(flowfile) for condition in conditions)
        ]
        if not matched:
            yield "unmatched", flowfile.evolve(update={"route.relationship": "unmatched"})
            return
        if self.value("strategy") == "first":
            matched = matched[:1]
        for index, name in enumerate(matched):
            routed = flowfile.evolve(update={"route.relationship": name})
            yield name, routed if index == 0 else routed.child()


# -- log ------------------------------------------------------------------------------------

_LEVELS = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "warning": logging.WARNING,
    "error": logging.ERROR,
}


@register_task
class Log(Task):
    """Write a line to the log (logger ``pawflow.flow.<flow name>``) and pass the FlowFile on."""

    type_name = "log"
    properties = (
        Property("message", default="FlowFile ${uuid}"),
        Property("level", "choice", default="info", choices=tuple(_LEVELS)),
    )
    relationships = ("success", "failure")

    def process(self, flowfile: FlowFile, ctx: TaskContext) -> Iterable[Emit]:
        text = ctx.prop("message") or ""
        ctx.log.log(_LEVELS[self.value("level")], "[%s] %s", self.id, text)
        yield "success", flowfile


# -- the in-process pair ------------------------------------------------------------------


@register_task
class WaitForSignal(Task):
    """Hold the FlowFile in memory until ``notify`` fires its signal id in this process.

    Fast and short-lived: it does not survive a restart or a stop (held FlowFiles then leave
    by ``expired``). Use ``durableWait`` for anything longer.
    """

    type_name = "waitForSignal"
    properties = (
        Property("signal_id", required=True),
        Property("timeout", "duration", default="10m"),
    )
    relationships = ("success", "expired", "failure")

    def process(self, flowfile: FlowFile, ctx: TaskContext) -> Iterable[Emit]:
        resumed = ctx.resumption
        if resumed is None:
            key = ctx.prop("signal_id") or ""
            if not key:
                raise TaskFailed("waitForSignal: the signal id is empty")
            deadline = deadline_after(ctx.now(), ctx.prop("timeout") or None)
            resumed = ctx.hold(flowfile, key, deadline)
            if resumed is None:
                return
        status = "signaled" if resumed.outcome == "signaled" else "expired"
        update = {"wait.status": status, "wait.value": render_value(resumed.value)}
        yield ("success" if status == "signaled" else "expired"), flowfile.evolve(update=update)


@register_task
class Notify(Task):
    """Release every FlowFile a ``waitForSignal`` holds on this signal id, in this process."""

    type_name = "notify"
    properties = (
        Property("signal_id", required=True),
        Property("value", default=""),
        Property(
            "retain",
            "duration",
            default="10m",
            description="how long a later wait still passes straight through",
        ),
    )
    relationships = ("success", "failure")

    def process(self, flowfile: FlowFile, ctx: TaskContext) -> Iterable[Emit]:
        board = ctx.runtime.board
        key = ctx.prop("signal_id") or ""
        if board is None or not key:
            raise TaskFailed("notify: the signal id is empty")
        now = ctx.now()
        # "0" keeps nothing: only the FlowFiles already waiting are released.
        until = deadline_after(now, ctx.prop("retain") or None) or now
        released = board.notify(
            ctx.runtime.board_key(key), ctx.prop("value") or "", now=now, until=until
        )
        yield "success", flowfile.evolve(update={"notify.released": str(released)})
