"""A tool's approval policy: which decisions it offers, and when a call needs one at all.

``approval: {decisions: [approve, reject], when: 'args.environment == "production"'}`` (in
``agents.yaml``, or ``Tool(..., approval=…)``) asks before a call only when ``when`` holds
for its arguments, and offers only the decisions named (``approve`` and ``reject`` always;
``edit`` and ``respond`` if listed; all four by default).

``when`` is a small expression language over the call's arguments, read without ``eval``:
``args.name`` or ``args["name"]`` (a missing argument is ``null``), its fields and items
(``args.target.region``, ``args.hosts[0]``), literals (text in quotes, numbers, ``true``,
``false``, ``null``, lists), comparisons (``== != < <= > >=``, ``in``, ``not in``), and
``and``, ``or``, ``not`` with parentheses. Anything else is refused when the policy is made,
so a typo fails at start, not at the call. A comparison that cannot be made (a number
against text) is false; an expression that fails that way asks, to be safe.
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pawflow.errors import InvalidInput
from pawflow.interactions.tool_approval import DECISIONS

MAX_WHEN = 1000

_COMPARE: dict[type[ast.cmpop], Callable[[Any, Any], Any]] = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b,
}
_NAMES = {"true": True, "false": False, "null": None}


class _Missing:
    """An argument the call does not give: reads as null, has no fields."""


def _check(node: ast.AST, source: str) -> None:
    """Refuse every construct but the few the language has."""
    if isinstance(node, ast.Expression):
        _check(node.body, source)
    elif isinstance(node, ast.BoolOp):
        for value in node.values:
            _check(value, source)
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not | ast.USub):
        _check(node.operand, source)
    elif isinstance(node, ast.Compare):
        if not all(type(op) in _COMPARE for op in node.ops):
            raise InvalidInput(f"when: {source!r}: unsupported comparison")
        for part in (node.left, *node.comparators):
            _check(part, source)
    elif isinstance(node, ast.Attribute):
        _check(node.value, source)
    elif isinstance(node, ast.Subscript):
        _check(node.value, source)
        _check(node.slice, source)
    elif isinstance(node, ast.Name):
        if node.id != "args" and node.id not in _NAMES:
            raise InvalidInput(f"when: {source!r}: unknown name {node.id!r} (use args.<name>)")
    elif isinstance(node, ast.Constant):
        if not isinstance(node.value, str | int | float | bool) and node.value is not None:
            raise InvalidInput(f"when: {source!r}: unsupported literal")
    elif isinstance(node, ast.List | ast.Tuple):
        for item in node.elts:
            _check(item, source)
    else:
        raise InvalidInput(f"when: {source!r}: {type(node).__name__.lower()} is not supported")


def _value(node: ast.AST, args: Mapping[str, Any]) -> Any:
    if isinstance(node, ast.BoolOp):
        if isinstance(node.op, ast.And):
            return all(_truth(_value(v, args)) for v in node.values)
        return any(_truth(_value(v, args)) for v in node.values)
    if isinstance(node, ast.UnaryOp):
        operand = _value(node.operand, args)
        return (not _truth(operand)) if isinstance(node.op, ast.Not) else -operand
    if isinstance(node, ast.Compare):
        left = _value(node.left, args)
        for op, right_node in zip(node.ops, node.comparators, strict=True):
            right = _value(right_node, args)
            if not _COMPARE[type(op)](_plain(left), _plain(right)):
                return False
            left = right
        return True
    if isinstance(node, ast.Attribute):
        return _field(_value(node.value, args), node.attr)
    if isinstance(node, ast.Subscript):
        return _field(_value(node.value, args), _value(node.slice, args))
    if isinstance(node, ast.Name):
        return args if node.id == "args" else _NAMES[node.id]
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.List | ast.Tuple):
        return [_value(item, args) for item in node.elts]
    raise TypeError(type(node).__name__)


def _field(container: Any, key: Any) -> Any:
    if isinstance(container, Mapping) and isinstance(key, str):
        return container.get(key, _Missing())
    if (
        isinstance(container, list)
        and isinstance(key, int)
        and -len(container) <= key < len(container)
    ):
        return container[key]
    return _Missing()


def _plain(value: Any) -> Any:
    return None if isinstance(value, _Missing) else value


def _truth(value: Any) -> bool:
    return bool(_plain(value))


@dataclass(frozen=True)
class When:
    """A compiled ``when`` expression."""

    source: str
    tree: ast.Expression = field(compare=False, repr=False)

    @classmethod
    def parse(cls, source: str) -> When:
        if not isinstance(source, str) or not source.strip():
            raise InvalidInput("when: expected an expression over args")
        if len(source) > MAX_WHEN:
            raise InvalidInput(f"when: at most {MAX_WHEN} characters")
        text = " ".join(source.split())
        try:
            tree = ast.parse(text, mode="eval")
        except SyntaxError as exc:
            raise InvalidInput(f"when: {source!r}: {exc.msg}") from None
        _check(tree, source)
        return cls(source, tree)

    def holds(self, arguments: Mapping[str, Any]) -> bool:
        """Whether the call needs asking; an expression that cannot be worked out asks."""
        try:
            return _truth(_value(self.tree.body, arguments))
        except (TypeError, ValueError, ArithmeticError):
            return True


@dataclass(frozen=True)
class Approval:
    """How a tool's calls are approved: the decisions offered, and when to ask."""

    decisions: tuple[str, ...] = DECISIONS
    when: When | None = None

    def __post_init__(self) -> None:
        unknown = [d for d in self.decisions if d not in DECISIONS]
        if unknown:
            raise InvalidInput(
                f"approval.decisions: unknown {', '.join(unknown)}"
                f" (the decisions are {', '.join(DECISIONS)})"
            )
        if "approve" not in self.decisions or "reject" not in self.decisions:
            raise InvalidInput("approval.decisions: approve and reject are always offered")

    @classmethod
    def of(cls, raw: Approval | Mapping[str, Any] | bool | None) -> Approval | None:
        """A policy from ``True``, a mapping (``decisions``, ``when``), or a policy."""
        if raw is None or raw is False:
            return None
        if raw is True:
            return cls()
        if isinstance(raw, Approval):
            return raw
        if not isinstance(raw, Mapping):
            raise InvalidInput("approval: expected true, false or {decisions, when}")
        extra = sorted(set(raw) - {"decisions", "when"})
        if extra:
            raise InvalidInput(f"approval: unknown key {extra[0]!r} (keys: decisions, when)")
        decisions = raw.get("decisions", DECISIONS)
        if not isinstance(decisions, list | tuple) or not all(
            isinstance(d, str) for d in decisions
        ):
            raise InvalidInput("approval.decisions: expected a list of decisions")
        when = raw.get("when")
        ordered = tuple(d for d in DECISIONS if d in decisions)
        return cls(
            decisions=ordered + tuple(d for d in decisions if d not in DECISIONS),
            when=None if when is None else When.parse(when),
        )

    def needed(self, arguments: Mapping[str, Any]) -> bool:
        return self.when is None or self.when.holds(arguments)
