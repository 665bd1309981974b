"""A tool approval on the answer-link page: the call shown, and a form per decision.

The page of a ``tool_approval`` request (:mod:`pawflow.interactions.tool_approval`) shows the
tool's name, its description and the proposed arguments, then one form for each decision the
tool offers: **Approve**; **Approve with my edits** (a JSON box pre-filled with the proposed
arguments); **Reject** with an optional reason; **Respond instead** with the text the tool's
result will be. Each form posts ``decision`` and its own fields, and the digest of the call
shown; :func:`decision_from` turns them into the decision ``respond_interaction`` takes, so
the edited arguments are checked against the tool's schema by the same code as every other
client's (a refusal re-renders the page with the field errors, what was typed kept).
"""

from __future__ import annotations

import html
import json
from collections.abc import Mapping
from typing import Any

from starlette.datastructures import FormData

from pawflow.errors import FieldError, InvalidAnswer
from pawflow.interactions.tool_approval import DECISIONS, surface_digest

LABELS = {
    "approve": "Approve",
    "edit": "Approve with my edits",
    "reject": "Reject",
    "respond": "Respond instead",
}
"""The web chat's button labels (static/js/surfaces.js)."""


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _typed(values: FormData | None, name: str, default: str = "") -> str:
    found = None if values is None else values.get(name)
    return found if isinstance(found, str) else default


def _box(name: str, label: str, value: str, rows: int, hint: str = "") -> str:
    ident = f"f-{name}"
    hinted = f'<br><span class="note">{_e(hint)}</span>' if hint else ""
    return (
        f'<p><label for="{ident}">{_e(label)}</label>{hinted}<br>'
        f'<textarea id="{ident}" name="{name}" rows="{rows}" spellcheck="false">{_e(value)}'
        "</textarea></p>"
    )


def _form(action: str, decision: str, digest: str, fields: str, style: str = "") -> str:
    cls = f' class="{style}"' if style else ""
    return (
        f'<form method="post" action="{_e(action)}" class="decision">'
        f'<input type="hidden" name="decision" value="{decision}">'
        f'<input type="hidden" name="digest" value="{_e(digest)}">'
        f'{fields}<button type="submit"{cls}>{_e(LABELS[decision])}</button></form>'
    )


def controls(surface: Mapping[str, Any], action: str, values: FormData | None) -> str:
    """The call as the reviewer sees it, and one form per decision the tool offers."""
    tool = str(surface.get("tool", ""))
    proposed = json.dumps(surface.get("arguments") or {}, indent=2, ensure_ascii=False)
    offered = [d for d in DECISIONS if d in (surface.get("decisions") or DECISIONS)]
    digest = surface_digest(surface)
    parts = [f'<p class="tool">Tool: <code>{_e(tool)}</code></p>']
    if surface.get("description"):
        parts.append(f'<p class="tool-description">{_e(surface["description"])}</p>')
    parts.append(
        f'<p>Proposed arguments</p><pre class="arguments" aria-label="Proposed arguments">'
        f"{_e(proposed)}</pre>"
    )
    if "approve" in offered:
        parts.append(_form(action, "approve", digest, "", "primary"))
    if "edit" in offered:
        edited = _typed(values, "arguments", proposed)
        rows = min(16, edited.count("\n") + 2)
        hint = "Edit them as JSON to run the call with other arguments."
        box = _box("arguments", f"Arguments of {tool}", edited, rows, hint)
        parts.append(_form(action, "edit", digest, box))
    if "reject" in offered:
        box = _box("reason", "Reason (optional)", _typed(values, "reason"), 2)
        parts.append(_form(action, "reject", digest, box, "danger"))
    if "respond" in offered:
        box = _box("text", "Result to give instead", _typed(values, "text"), 3)
        parts.append(_form(action, "respond", digest, box))
    return "".join(parts)


def decision_from(form: FormData) -> object:
    """The decision a posted form carries, as ``respond_interaction`` takes it.

    Only the edited arguments are read here (JSON text into an object); whether they fit
    the tool's schema, and everything else about the decision, is the store's to check.
    """
    decision = form.get("decision")
    found: dict[str, Any] = {"decision": decision}
    digest = form.get("digest")
    if isinstance(digest, str) and digest:
        found["digest"] = digest
    if decision == "edit":
        typed = form.get("arguments")
        try:
            found["arguments"] = json.loads(typed if isinstance(typed, str) else "")
        except ValueError as exc:
            problem = FieldError("arguments", f"not valid JSON: {exc}")
            raise InvalidAnswer("invalid decision: arguments: not valid JSON", [problem]) from None
    elif decision == "reject":
        reason = form.get("reason")
        if isinstance(reason, str) and reason.strip():
            found["reason"] = reason
    elif decision == "respond":
        text = form.get("text")
        found["text"] = text if isinstance(text, str) else None
    return found
