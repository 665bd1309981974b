"""Tool approvals: the ``tool_approval`` surface, and the decisions that answer it.

An agent's consequential tool call is asked as a ``confirm`` request whose surface, of type
``tool_approval``, carries the tool's name, its description, the proposed arguments and the
tool's JSON Schema, and which decisions the tool offers:

- ``approve`` — run the call with the proposed arguments;
- ``edit`` — run it with other arguments, checked here against the tool's schema (a field
  error has the path ``arguments.<name>``, and the request stays open);
- ``reject`` — do not run it; an optional ``reason`` is what the model reads;
- ``respond`` — do not run it; the person's ``text`` is the tool's result.

A client that does not know the surface falls back to its ``confirm``: ``true`` approves and
``false`` rejects. Every answer is stored in one normal form, ``{"decision": …,
"arguments": …, "digest": …}`` plus ``reason``, ``text`` or ``always`` where they apply;
``digest`` is :func:`surface_digest` of what the reviewer saw. An ``approve`` or ``edit`` may
ask to ``always`` allow the same call (``conversation`` or ``agent``): the store keeps that
as an approval rule.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any, Literal

import jsonschema

from pawflow.errors import FieldError, InvalidAnswer
from pawflow.interactions.answers import schema_error, validator_for
from pawflow.interactions.kinds import Kind
from pawflow.interactions.problems import is_clean_text, summarize

SURFACE_TYPE = "tool_approval"
Decision = Literal["approve", "edit", "reject", "respond"]
Scope = Literal["conversation", "agent"]

DECISIONS: tuple[Decision, ...] = ("approve", "edit", "reject", "respond")
SCOPES: tuple[Scope, ...] = ("conversation", "agent")
MAX_REASON = 2000
MAX_TEXT = 20_000

_YES = frozenset({"yes", "y", "true", "approve", "allow"})
_NO = frozenset({"no", "n", "false", "reject", "deny"})
_KEYS = frozenset({"decision", "arguments", "reason", "text", "always", "digest"})


def check(surface: Mapping[str, Any], kind: Kind) -> list[FieldError]:
    """What is wrong with a ``tool_approval`` surface beyond its shape."""
    errors = []
    if kind is not Kind.CONFIRM:
        errors.append(FieldError("ui_surface.fallback", "a tool approval falls back to confirm"))
    decisions = list(surface.get("decisions") or [])
    if "approve" not in decisions or "reject" not in decisions:
        message = "must offer approve and reject (what a confirm answers)"
        errors.append(FieldError("ui_surface.decisions", message))
    if len(set(decisions)) != len(decisions):
        errors.append(FieldError("ui_surface.decisions", "must not repeat"))
    try:
        jsonschema.Draft202012Validator.check_schema(surface.get("schema") or {})
    except jsonschema.SchemaError as exc:
        errors.append(FieldError("ui_surface.schema", f"not a JSON Schema: {exc.message}"))
    return errors


def is_tool_approval(surface: object) -> bool:
    return isinstance(surface, Mapping) and surface.get("type") == SURFACE_TYPE


def make_surface(
    *,
    tool: str,
    agent: str,
    description: str,
    arguments: Mapping[str, Any],
    schema: Mapping[str, Any],
    decisions: tuple[str, ...] | list[str] = DECISIONS,
) -> dict[str, Any]:
    """The surface of one call's approval."""
    return {
        "contract": "pawflow.ui-surface.v1",
        "type": SURFACE_TYPE,
        "fallback": Kind.CONFIRM.value,
        "title": f"{agent} wants to run {tool}",
        "tool": tool,
        "agent": agent,
        "description": description[:10_000],
        "arguments": dict(arguments),
        "schema": dict(schema),
        "decisions": list(decisions),
    }


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def surface_digest(surface: Mapping[str, Any]) -> str:
    """``sha256:…`` of what the reviewer saw: the tool, its description, the proposed
    arguments and the schema, as canonical JSON."""
    seen = {k: surface.get(k) for k in ("tool", "description", "arguments", "schema")}
    return "sha256:" + hashlib.sha256(canonical(seen).encode("utf-8")).hexdigest()


def _invalid(errors: list[FieldError]) -> InvalidAnswer:
    return InvalidAnswer(summarize("invalid decision", errors), errors)


def _text(raw: object, path: str, limit: int, errors: list[FieldError]) -> str | None:
    if raw is None:
        return None
    if not isinstance(raw, str) or not is_clean_text(raw):
        errors.append(FieldError(path, "expected text"))
        return None
    if len(raw) > limit:
        errors.append(FieldError(path, f"must be at most {limit} characters long"))
        return None
    return raw.strip() or None


def _as_decision(answer: object) -> object:
    """A confirm's answer (``true``, ``"no"``) as the decision it stands for."""
    if isinstance(answer, bool):
        return {"decision": "approve" if answer else "reject"}
    if isinstance(answer, str):
        word = answer.strip().lower()
        if word in _YES:
            return {"decision": "approve"}
        if word in _NO:
            return {"decision": "reject"}
    return answer


def decide(surface: Mapping[str, Any], answer: object) -> dict[str, Any]:
    """The normal form of a decision on the approval ``surface`` describes.

    Raises ``InvalidAnswer`` with one FieldError per problem (``arguments.<name>`` for an
    edit that does not fit the tool's schema).
    """
    raw = _as_decision(answer)
    if not isinstance(raw, Mapping):
        raise _invalid([FieldError("", "expected yes, no, or an object with a decision")])
    errors = [FieldError(str(key)[:40], "unknown field") for key in raw if key not in _KEYS]
    offered = list(surface.get("decisions") or DECISIONS)
    decision = raw.get("decision")
    if decision not in offered:
        message = "must be one of: " + ", ".join(offered)
        raise _invalid([*errors, FieldError("decision", message)])
    digest = surface_digest(surface)
    seen = raw.get("digest")
    if seen is not None and seen != digest:
        message = "the call shown is not the one waiting: reload it and decide again"
        errors.append(FieldError("digest", message))
    result: dict[str, Any] = {"decision": decision}
    proposed = surface.get("arguments") or {}
    if decision == "edit":
        edited = raw.get("arguments")
        if not isinstance(edited, Mapping):
            errors.append(FieldError("arguments", "expected an object of arguments"))
        else:
            schema = surface.get("schema") or {}
            problems = sorted(
                validator_for(schema).iter_errors(dict(edited)), key=lambda e: list(e.path)
            )
            errors.extend(dict.fromkeys(schema_error(e, "arguments") for e in problems))
            result["arguments"] = dict(edited)
    elif "arguments" in raw:
        errors.append(FieldError("arguments", f"only an edit gives arguments, not {decision}"))
    if decision == "approve":
        result["arguments"] = dict(proposed)
    if decision == "reject":
        reason = _text(raw.get("reason"), "reason", MAX_REASON, errors)
        if reason:
            result["reason"] = reason
    elif raw.get("reason") is not None:
        errors.append(FieldError("reason", "only a reject gives a reason"))
    if decision == "respond":
        text = _text(raw.get("text"), "text", MAX_TEXT, errors)
        if text is None:
            errors.append(FieldError("text", "required: the result the tool would have given"))
        else:
            result["text"] = text
    elif raw.get("text") is not None:
        errors.append(FieldError("text", "only a respond gives a text"))
    always = raw.get("always")
    if always is not None:
        if decision not in ("approve", "edit"):
            errors.append(FieldError("always", "only an approval can be made a rule"))
        elif always not in SCOPES:
            errors.append(FieldError("always", "must be one of: " + ", ".join(SCOPES)))
        else:
            result["always"] = always
    if errors:
        raise _invalid(errors)
    result["digest"] = digest
    return result


def shown(decision: Mapping[str, Any]) -> str:
    """A decision as the chat restates it: ``approve``, ``edit``, ``reject: <reason>``."""
    name = str(decision.get("decision", ""))
    if name == "reject" and decision.get("reason"):
        return f"reject ({decision['reason']})"
    return name


def outcome(answer: object) -> str:
    """A decision as the web chat states it once made: "Rejected: use staging instead"."""
    if not isinstance(answer, Mapping):
        return ""
    decision = answer.get("decision")
    if decision == "approve":
        return "Approved"
    if decision == "edit":
        return "Approved with edits: " + json.dumps(answer.get("arguments"), ensure_ascii=False)
    if decision == "reject":
        return f"Rejected: {answer['reason']}" if answer.get("reason") else "Rejected"
    if decision == "respond":
        return f"Answered instead of running it: {answer.get('text', '')}"
    return ""
