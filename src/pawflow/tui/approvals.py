"""A tool approval in the terminal: the call's arguments to edit, and the decisions.

The composer also takes two commands about the "always allow" rules of the conversation:
``/rules`` lists them, ``/revoke <rule id>`` revokes one.

The panel shows the tool, its description and one line per argument, pre-filled with the
proposed value (text as itself, anything else as JSON); a line for a reason; a line for a
result if the tool offers ``respond``; and a button per decision. Approve sends an ``edit``
when an argument was changed (and the tool offers it), else an ``approve``. The server
checks an edit against the tool's schema; its errors (``arguments.<name>``) come back
beside the argument, and the request stays open.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from rich.markup import escape
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Input, Label, Static

from pawflow.client import Client
from pawflow.errors import PawFlowError
from pawflow.tui.inputs import Line, Ready

TOOL_APPROVAL = "tool_approval"


def is_tool_approval(surface: object) -> bool:
    return (
        isinstance(surface, Mapping)
        and surface.get("type") == TOOL_APPROVAL
        and isinstance(surface.get("arguments"), Mapping)
        and isinstance(surface.get("decisions"), list)
    )


def decision_text(answer: object) -> str:
    """A decision as the outcome line says it."""
    if not isinstance(answer, Mapping):
        return str(answer)
    decision = answer.get("decision")
    if decision == "approve":
        return "approved"
    if decision == "edit":
        return f"approved with edits: {json.dumps(answer.get('arguments'), ensure_ascii=False)}"
    if decision == "reject":
        return f"rejected: {answer['reason']}" if answer.get("reason") else "rejected"
    if decision == "respond":
        return f"answered instead of running it: {answer.get('text')}"
    return str(decision)


def argument_of(path: str) -> str | None:
    """``arguments.environment`` → ``environment``."""
    if not path.startswith("arguments."):
        return None
    rest = path.removeprefix("arguments.")
    return rest.split(".")[0].split("[")[0] or None


def _shown(value: Any, as_text: bool) -> str:
    if value is None:
        return ""
    return value if as_text and isinstance(value, str) else json.dumps(value, ensure_ascii=False)


class ArgumentLine(Vertical):
    """One argument: its name, a line pre-filled with the proposed value, its error."""

    DEFAULT_CSS = """
    ArgumentLine { height: auto; }
    ArgumentLine .field-error { color: $error; }
    """

    def __init__(self, name: str, schema: Mapping[str, Any], proposed: Any) -> None:
        super().__init__(id=f"arg-{name}")
        self.field_name = name
        self.proposed = proposed
        self.absent = proposed is None
        self.as_text = schema.get("type") == "string" or isinstance(proposed, str)
        self.input = Input(value=_shown(proposed, self.as_text), id=f"argument-{name}")

    def compose(self) -> Any:
        yield Label(self.field_name)
        yield self.input
        yield Line(classes="field-error")

    def read(self) -> Any:
        raw = self.input.value
        if raw == "" and self.absent:
            return None
        if self.as_text:
            return raw
        try:
            return json.loads(raw)
        except ValueError:
            return raw

    def set_error(self, message: str) -> None:
        self.query_one(".field-error", Line).say(f"✕ {escape(message)}")

    def clear_error(self) -> None:
        self.query_one(".field-error", Line).say("")

    def focus_first(self) -> None:
        self.input.focus()


class ToolApprovalPanel(Vertical):
    """The decisions on one tool call; a button posts :class:`Ready` with the decision."""

    DEFAULT_CSS = """
    ToolApprovalPanel { height: auto; border: round $accent; padding: 0 1; }
    ToolApprovalPanel Horizontal { height: auto; }
    ToolApprovalPanel Button { margin-right: 2; }
    """

    def __init__(self, surface: Mapping[str, Any], *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.surface = surface
        self.answers = True
        self.offered = set(surface.get("decisions") or ())
        self.proposed: dict[str, Any] = dict(surface.get("arguments") or {})
        properties = (surface.get("schema") or {}).get("properties") or {}
        names = list(dict.fromkeys([*properties, *self.proposed]))
        self.lines = [
            ArgumentLine(name, properties.get(name) or {}, self.proposed.get(name))
            for name in names
        ]
        self.reason = Input(placeholder="why not (optional)", id="reason")
        self.result = Input(placeholder="the result to give instead", id="result")

    def compose(self) -> Any:
        title = self.surface.get("title") or f"Run {self.surface.get('tool')}?"
        yield Static(f"[b]{escape(str(title))}[/b]")
        if self.surface.get("description"):
            yield Static(escape(str(self.surface["description"])))
        yield from self.lines
        yield Label("Reason, if you reject")
        yield self.reason
        if "respond" in self.offered:
            yield Label("Result, to respond instead of running it")
            yield self.result
        with Horizontal():
            yield Button("Approve", variant="primary", id="approve")
            yield Button("Reject", variant="error", id="reject")
            if "respond" in self.offered:
                yield Button("Respond", id="respond")

    def edited(self) -> dict[str, Any]:
        return {line.field_name: value for line in self.lines if (value := line.read()) is not None}

    def decision(self, pressed: str) -> dict[str, Any]:
        if pressed == "reject":
            reason = self.reason.value.strip()
            return {"decision": "reject", **({"reason": reason} if reason else {})}
        if pressed == "respond":
            return {"decision": "respond", "text": self.result.value}
        arguments = self.edited()
        if "edit" in self.offered and arguments != self.proposed:
            return {"decision": "edit", "arguments": arguments}
        return {"decision": "approve"}

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.post_message(Ready(self, self.decision(str(event.button.id))))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()  # Enter moves on; only a button decides
        self.screen.focus_next()

    def on_input_changed(self, event: Input.Changed) -> None:
        """ "Approve" runs the call as proposed; once an argument is changed it says so."""
        edited = "edit" in self.offered and self.edited() != self.proposed
        self.query_one("#approve", Button).label = "Approve with my edits" if edited else "Approve"

    def line_for(self, path: str) -> ArgumentLine | None:
        name = argument_of(path)
        return next((line for line in self.lines if line.field_name == name), None)

    def read(self) -> Any:
        return None

    def focus_first(self) -> None:
        if self.lines:
            self.lines[0].focus_first()
        else:
            self.query(Button).first().focus()


def rules_command(client: Client, conversation_id: str, text: str) -> str | None:
    """What ``/rules`` or ``/revoke <id>`` says (None: ``text`` is not such a command)."""
    words = text.split()
    if not words or words[0] not in ("/rules", "/revoke"):
        return None
    try:
        if words[0] == "/revoke":
            if len(words) != 2:
                return "Revoke which rule? /revoke <rule id> (see /rules)"
            client.action("revoke_approval_rule", rule_id=words[1])
            return f"Revoked {words[1]}: the call is asked again from now on."
        rules = client.action("list_approval_rules", conversation_id=conversation_id)["rules"]
    except PawFlowError as exc:
        return f"Not done: {exc}"
    if not rules:
        return "No call is allowed here without asking."
    return "\n".join(
        f"{rule['id']}  {rule['agent']} may run {rule['tool']}"
        f" {json.dumps(rule['arguments'], ensure_ascii=False)}"
        + (" in every conversation" if rule["scope"] == "agent" else " here")
        for rule in rules
    )
