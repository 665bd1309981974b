"""The questions bridges ask, and how their answers read.

Two shapes cover every framework's pause:

- a **tool approval** (:func:`tool_approval_request`): a ``confirm`` whose ``tool_approval``
  surface shows the tool, its proposed arguments and their JSON Schema; the answer is a
  :class:`Decision` — ``approve``, ``edit`` (other arguments, checked against the schema by
  the store), ``reject`` (with a reason the model reads) or ``respond`` (the person's text
  stands for the tool's result);
- a **human-input step** (:func:`interrupt_request`): a value the framework paused on (a
  mapping naming a kind, a message, a schema…) read as a PawFlow request of that kind.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pawflow.errors import InvalidInput
from pawflow.interactions.kinds import kind_of_property
from pawflow.interactions.tool_approval import DECISIONS, make_surface
from pawflow.interactions.tool_approval import Decision as DecisionName
from pawflow.records import Outcome

MAX_MESSAGE = 20_000
MAX_ARGUMENTS_SHOWN = 2000
UNANSWERED_REASONS = {
    "cancelled": "The request to approve this tool call was cancelled.",
    "expired": "Nobody approved this tool call in time.",
}
"""What the model is told of a call whose approval nobody gave (it is rejected)."""

_REQUEST_KEYS = ("title", "options", "expires_in", "expires_at", "ui_surface")


# -- tool approvals -------------------------------------------------------------------------


def tool_approval_request(
    tool: str,
    arguments: Mapping[str, Any],
    *,
    agent: str,
    description: str = "",
    schema: Mapping[str, Any] | None = None,
    decisions: Sequence[DecisionName] = DECISIONS,
) -> dict[str, Any]:
    """The request that asks to approve one call of ``tool``, as keyword arguments of
    ``Store.ask``: a ``confirm`` (what a client that does not know the surface shows)
    carrying a ``tool_approval`` surface that offers ``decisions``."""
    shown = _as_text(dict(arguments), MAX_ARGUMENTS_SHOWN)
    message = f"{agent} wants to run {tool}" + (f" with {shown}" if arguments else "") + "."
    surface = make_surface(
        tool=tool,
        agent=agent,
        description=description,
        arguments=arguments,
        schema=schema or {"type": "object"},
        decisions=tuple(decisions),
    )
    title = f"Approve {tool}?"
    return {"kind": "confirm", "title": title, "message": message, "ui_surface": surface}


@dataclass(frozen=True)
class Decision:
    """A person's decision on one tool call, read from the answer's normal form.

    ``arguments`` are those to run the call with (the proposed ones, or the edited ones);
    ``reason`` is what the model is told of a rejection (None: the framework's own words);
    ``text`` is the result a ``respond`` gives instead of running the tool.
    """

    decision: DecisionName
    arguments: dict[str, Any] = field(default_factory=dict)
    reason: str | None = None
    text: str | None = None
    by: str | None = None

    @property
    def runs(self) -> bool:
        """Whether the tool runs (approved as proposed or edited)."""
        return self.decision in ("approve", "edit")

    @property
    def edited(self) -> bool:
        return self.decision == "edit"


def decision_of(outcome: Outcome) -> Decision:
    """The decision an approval's outcome stands for: the answer's (normalized by the store
    as ``{decision, arguments, reason, text, by}``); a cancelled or expired request rejects
    the call, saying so (:data:`UNANSWERED_REASONS`)."""
    if outcome.unanswered is not None:
        return Decision("reject", reason=UNANSWERED_REASONS[outcome.unanswered])
    answer = outcome.answer
    if not isinstance(answer, Mapping) or answer.get("decision") not in DECISIONS:
        raise InvalidInput(f"a tool approval needs a decision, not {answer!r}")
    arguments = answer.get("arguments")
    reason, text, by = answer.get("reason"), answer.get("text"), answer.get("by")
    return Decision(
        answer["decision"],
        dict(arguments) if isinstance(arguments, Mapping) else {},
        reason if isinstance(reason, str) and reason else None,
        text if isinstance(text, str) else None,
        by if isinstance(by, str) else None,
    )


# -- human-input steps ----------------------------------------------------------------------


def interrupt_request(
    value: object, response_schema: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """The PawFlow request a paused step asks for, as the fields of a ``Question``.

    - a mapping with a ``kind`` (any of PawFlow's), ``message`` (or ``question``) and maybe
      ``title``, ``options``, ``response_schema``, ``expires_in``, ``expires_at``,
      ``ui_surface``: that request; other keys stay with the framework;
    - a mapping without ``kind``: ``choice`` with ``options``, else the kind its
      ``response_schema`` describes (``form`` for an object), else ``text``;
    - a string: a ``text`` question (``confirm`` when ``response_schema`` is
      ``{"type": "boolean"}``; any schema names its kind the same way);
    - anything else: a ``text`` question whose message is the value as JSON.

    ``response_schema`` is the one the step declares beside its value; a schema in the value
    comes first.
    """
    fields: dict[str, Any] = {}
    schema: Any = response_schema
    if isinstance(value, Mapping) and ({"kind", "message", "question"} & set(value)):
        message = value.get("message", value.get("question"))
        schema = value.get("response_schema", schema)
        fields = {key: value[key] for key in _REQUEST_KEYS if value.get(key) is not None}
        kind = value.get("kind") or _kind_for(schema, "options" in fields)
    elif isinstance(value, str):
        message, kind = value, _kind_for(schema, False)
    else:
        message, kind = _as_text(value, MAX_MESSAGE), _kind_for(schema, False)
    if not isinstance(message, str) or not message.strip():
        raise InvalidInput("a paused step's value needs a message to ask")
    request: dict[str, Any] = {"kind": kind, "message": message, **fields}
    if schema is not None:
        request["response_schema"] = dict(schema)
    return request


def _kind_for(schema: object, has_options: bool) -> str:
    if has_options:
        return "choice"
    if not isinstance(schema, Mapping):
        return "text"
    if schema.get("type") == "object" and schema.get("x-pawflow-kind") != "file":
        return "form"
    return kind_of_property(dict(schema)).value


def _as_text(value: object, limit: int) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False, default=str)
    except ValueError:
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


__all__ = [
    "UNANSWERED_REASONS",
    "Decision",
    "decision_of",
    "interrupt_request",
    "tool_approval_request",
]
