"""A tool approval in Slack: the call in the message, a button per decision, a modal each.

The message of a ``tool_approval`` request (:mod:`pawflow.interactions.tool_approval`) shows
the tool, its description and the proposed arguments (a code block), then one button per
decision the tool offers:

- **Approve** answers at once;
- **Edit…** opens a modal whose multiline input holds the arguments as JSON;
- **Reject…** opens a modal with an optional reason;
- **Respond…** opens a modal with the text to give instead of the tool's result.

A modal's submission (``callback_id`` :data:`CALLBACK`, the request, the decision and the
digest of the call shown in its ``private_metadata``) is read by :func:`decision_from`; the
store checks it like any client's decision, so edited arguments that do not fit the tool's
schema keep the modal open with the errors, and the request stays open. Arguments too long
for a Slack input (3000 characters) are edited on the answer page instead.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from pawflow.errors import FieldError, InvalidAnswer, InvalidInput
from pawflow.interactions.tool_approval import DECISIONS, surface_digest

APPROVE = "tool_approve"
"""The Approve button's ``action_id`` (its value: the digest of the call shown)."""
DECIDE = "tool_decide"
"""The ``action_id`` of the buttons that open a modal (their value: the decision)."""
CALLBACK = "pawflow_tool_approval"
INPUT = "value"
MAX_INPUT = 3000
MAX_CODE = 2500
BLOCKS = {"edit": "arguments", "reject": "reason", "respond": "text"}
"""The modal's input block for each decision."""
_BUTTONS = {"edit": "Edit…", "reject": "Reject…", "respond": "Respond…"}
_TITLES = {"edit": "Edit the arguments", "reject": "Reject the call", "respond": "Respond instead"}
_SUBMITS = {"edit": "Approve", "reject": "Reject", "respond": "Respond"}


def _plain(text: str, limit: int = 75) -> dict[str, Any]:
    cut = text if len(text) <= limit else text[: limit - 1] + "…"
    return {"type": "plain_text", "text": cut or " ", "emoji": True}


def _mrkdwn(text: str, limit: int = 3000) -> dict[str, Any]:
    escaped = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    cut = escaped if len(escaped) <= limit else escaped[: limit - 1] + "…"
    return {"type": "mrkdwn", "text": cut or " "}


def proposed(surface: Mapping[str, Any]) -> str:
    """The proposed arguments, as JSON a person reads and edits."""
    return json.dumps(surface.get("arguments") or {}, indent=2, ensure_ascii=False)


def offered(surface: Mapping[str, Any]) -> list[str]:
    listed = surface.get("decisions") or DECISIONS
    return [d for d in DECISIONS if d in listed]


def call_blocks(surface: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The call as the reviewer sees it: the tool, its description, its arguments."""
    about = f"Tool: `{surface.get('tool', '')}`"
    if surface.get("description"):
        about += "\n" + str(surface["description"])
    arguments = proposed(surface)
    if len(arguments) > MAX_CODE:
        arguments = arguments[:MAX_CODE] + "\n…"
    return [
        {"type": "section", "text": _mrkdwn(about)},
        {"type": "section", "text": _mrkdwn(f"```{arguments}```")},
    ]


def message_blocks(
    surface: Mapping[str, Any], actions_id: str, link: dict[str, Any]
) -> list[dict[str, Any]]:
    """The call, and a button per decision the tool offers (``link``: the answer page)."""
    digest = surface_digest(surface)
    buttons: list[dict[str, Any]] = []
    for decision in offered(surface):
        if decision == "approve":
            button = {"type": "button", "text": _plain("Approve"), "action_id": APPROVE}
            buttons.append({**button, "value": digest, "style": "primary"})
        elif decision != "edit" or len(proposed(surface)) <= MAX_INPUT:
            button = {"type": "button", "text": _plain(_BUTTONS[decision]), "action_id": DECIDE}
            buttons.append({**button, "value": decision, **_style(decision)})
    actions = {"type": "actions", "block_id": actions_id, "elements": [*buttons, link]}
    return [*call_blocks(surface), actions]


def _style(decision: str) -> dict[str, str]:
    return {"style": "danger"} if decision == "reject" else {}


def modal(request_id: str, surface: Mapping[str, Any], decision: str) -> dict[str, Any]:
    """The modal a decision's button opens: the call, and the decision's one input."""
    element: dict[str, Any] = {
        "type": "plain_text_input",
        "action_id": INPUT,
        "multiline": True,
        "max_length": MAX_INPUT,
    }
    label = {"edit": "Arguments (JSON)", "reject": "Reason (optional)", "respond": "Result"}
    if decision == "edit":
        element["initial_value"] = proposed(surface)
    block: dict[str, Any] = {
        "type": "input",
        "block_id": BLOCKS[decision],
        "label": _plain(label[decision], 2000),
        "element": element,
        "optional": decision == "reject",
    }
    if decision == "respond":
        block["hint"] = _plain("What the tool would have answered: it is not run.", 2000)
    metadata = {"request": request_id, "decision": decision, "digest": surface_digest(surface)}
    shown = call_blocks(surface) if decision != "edit" else call_blocks(surface)[:1]
    return {
        "type": "modal",
        "callback_id": CALLBACK,
        "private_metadata": json.dumps(metadata),
        "title": _plain(_TITLES[decision], 24),
        "submit": _plain(_SUBMITS[decision], 24),
        "close": _plain("Cancel", 24),
        "blocks": [*shown, block],
    }


def metadata(view: Mapping[str, Any]) -> dict[str, str]:
    """The request, decision and digest a modal was opened for (empty: not one of ours)."""
    try:
        found = json.loads(str(view.get("private_metadata") or ""))
    except ValueError:
        return {}
    if not isinstance(found, dict) or found.get("decision") not in BLOCKS:
        return {}
    return {k: str(v) for k, v in found.items() if k in ("request", "decision", "digest")}


def decision_from(meta: Mapping[str, str], values: Mapping[str, Any]) -> dict[str, Any]:
    """The decision a submitted modal carries, as ``respond_interaction`` takes it.

    Only the edited arguments are read here (JSON text into an object); whether they fit
    the tool's schema, and the rest, is the store's to check.
    """
    decision = meta["decision"]
    block = BLOCKS[decision]
    state = (values.get(block) or {}).get(INPUT) or {}
    typed = state.get("value") if isinstance(state, Mapping) else None
    text = typed if isinstance(typed, str) else ""
    found: dict[str, Any] = {"decision": decision}
    if meta.get("digest"):
        found["digest"] = meta["digest"]
    if decision == "edit":
        try:
            found["arguments"] = json.loads(text)
        except ValueError as exc:
            problem = FieldError("arguments", f"not valid JSON: {exc}")
            raise InvalidAnswer("invalid decision: arguments: not valid JSON", [problem]) from None
    elif decision == "reject":
        if text.strip():
            found["reason"] = text
    else:
        found["text"] = text
    return found


def field_errors(decision: str, error: InvalidInput) -> dict[str, str]:
    """A refusal's problems, all on the modal's one input."""
    items = [f"{e.path}: {e.message}" if e.path else e.message for e in error.errors or []]
    return {BLOCKS[decision]: ("; ".join(items) or error.message)[:2000]}
