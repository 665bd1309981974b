"""A request as a block in the terminal: what is asked, its surface, its inputs, its outcome.

The block is drawn from the record the server sent. Sending reads the inputs, uploads any
file first, and calls ``respond_interaction``; a refusal (422) puts each field error beside
its input and leaves the request pending; a request closed meanwhile (409) is re-read and
shown closed. The block never decides by itself that an answer is valid.
"""

from __future__ import annotations

import asyncio
from typing import Any, ClassVar, Protocol, cast

from rich.markdown import Markdown
from rich.markup import escape
from textual import work
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.widget import Widget
from textual.widgets import Button, Checkbox, Input, Label, SelectionList, Static, TextArea

from pawflow.client import Client, ServerUnreachable
from pawflow.errors import (
    FieldError,
    Forbidden,
    InvalidInput,
    NotFound,
    NotPending,
    PawFlowError,
)
from pawflow.records import Interaction
from pawflow.tui.answers import (
    APPROVAL_TAG,
    KIND_NAMES,
    PathToUpload,
    answer_text,
    enum_choices,
    field_of,
    form_fields,
    hints,
    options_of,
)
from pawflow.tui.approvals import ToolApprovalPanel, decision_text, is_tool_approval
from pawflow.tui.inputs import (
    AnswerWidget,
    Edited,
    Line,
    MultilineInput,
    Ready,
    field_input,
    single_input,
)
from pawflow.tui.surfaces import SurfaceCard, SurfaceTable, handoff_text, plan_surface, row_choices

CHROME_WIDTH = 36

# An empty answer cannot be taken back: it is sent only when asked for twice in a row.
EMPTY_QUESTIONS = {
    "multi": "Send with nothing chosen? Enter again sends none; Space ticks an option.",
    "text": "Send an empty answer? Enter again sends it.",
    "multiline": "Send an empty answer? Ctrl+S again sends it.",
}

# Where an answer came from (the record's answered_via), as the block says it.
_VIA = {
    "chat": "in the chat",
    "button": "in its block",
    "cli": "with pawflow answer",
    "mcp": "over MCP",
    "mcp-app": "in an MCP app",
    "agui": "over AG-UI",
    "a2a": "over A2A",
    "api": "through the API",
}


def answerer(name: str, user: str) -> str:
    """Who answered, as the web chat says it: "you" for the person reading."""
    return "you" if user and name == user else name


def via_text(via: str | None) -> str:
    """`` in the chat``: where the answer came from, or nothing when the record says nothing."""
    return "" if not via else f" {_VIA.get(via, f'via {via}')}"


class Host(Protocol):
    """What a block needs from the app around it."""

    client: Client

    @property
    def user(self) -> str:
        """Who is signed in ("" until known): their own answers read "by you"."""
        ...

    def record_changed(self, record: Interaction) -> None: ...

    def conversation_title(self, conversation_id: str) -> str: ...

    def waits_for_others(self, record: Interaction) -> list[str] | None:
        """Whom ``record`` waits for when the user may not answer it (no controls then)."""
        ...


class FieldBox(Vertical):
    """A labelled input with its hints and the server's error beside it."""

    DEFAULT_CSS = """
    FieldBox { height: auto; margin-bottom: 1; }
    FieldBox:last-child { margin-bottom: 0; }
    FieldBox .hint { color: $text-muted; }
    FieldBox .field-error { color: $error; }
    """

    def __init__(self, name: str, label: str, widget: AnswerWidget, hint: str) -> None:
        super().__init__(id=f"box-{name}" if name else "box")
        self.field_name = name
        self.label = label
        self.widget = widget
        self.hint = hint

    def compose(self) -> Any:
        if self.label and not isinstance(self.widget, Checkbox):  # a checkbox carries its own
            yield Label(self.label)
        yield self.widget
        if self.hint:
            yield Static(escape(self.hint), classes="hint")
        yield Line(classes="field-error")

    @property
    def error(self) -> str:
        return self.query_one(".field-error", Line).said

    def set_error(self, message: str) -> None:
        self.query_one(".field-error", Line).say(f"✕ {escape(message)}")

    def clear_error(self) -> None:
        self.query_one(".field-error", Line).say("")


class RequestBlock(Vertical):
    """One interaction record; ``in_inbox`` adds the conversation it belongs to."""

    DEFAULT_CSS = """
    RequestBlock {
        height: auto; border: round $primary; padding: 0 1; margin: 1 0;
    }
    RequestBlock.closed { border: round $panel; }
    RequestBlock .meta { color: $text-muted; }
    RequestBlock .note { color: $warning; }
    RequestBlock .handoff { color: $warning; text-style: bold; }
    RequestBlock .block-error { color: $error; }
    RequestBlock .confirm { color: $warning; text-style: bold; }
    RequestBlock .outcome { color: $success; }
    RequestBlock .controls { height: auto; margin-top: 1; }
    RequestBlock .surface-title { margin-bottom: 1; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [Binding("ctrl+s", "send", "Send", show=False)]

    def __init__(self, record: Interaction, host: Host, *, in_inbox: bool = False) -> None:
        super().__init__(id=f"request-{record.id}", classes="request")
        self.record = record
        self.host = host
        self.in_inbox = in_inbox
        self.boxes: list[FieldBox] = []
        self.busy = False
        self.empty_asked = False
        self.plan = plan_surface(record, 80)
        self.choices = options_of(record.options)
        self.panel: ToolApprovalPanel | None = None
        self.others: list[str] | None = None
        """Whom the request waited for when drawn, if not the user (no controls then)."""

    # -- drawing ---------------------------------------------------------------------------

    def compose(self) -> Any:
        record = self.record
        heading = f"[b]{escape(record.title)}[/b] · " if record.title else ""
        tag = APPROVAL_TAG if is_tool_approval(record.ui_surface) else KIND_NAMES.get(record.kind)
        yield Static(f"{heading}[i]{escape(tag or record.kind)}[/i]", classes="tag")
        yield Static(Markdown(record.message))
        yield Static(self._meta(), classes="meta")
        yield Line(classes="outcome")
        others = self.others = self.host.waits_for_others(record) or None
        if others:
            yield Static(escape(f"Waiting for {', '.join(others)}"), classes="note")
        elif record.status == "pending":
            yield Vertical(*self._controls(), classes="controls")
        yield Line(classes="confirm")
        yield Line(classes="block-error")

    def on_mount(self) -> None:
        self._show_outcome()

    def _meta(self) -> str:
        record = self.record
        parts = []
        if record.requester.name:
            parts.append(f"asked by {record.requester.type} {record.requester.name}")
        if self.in_inbox:
            parts.append(f"in {self.host.conversation_title(record.conversation_id)}")
        if record.expires_at is not None:
            local = record.expires_at.astimezone().strftime("%Y-%m-%d %H:%M")
            parts.append(f"expires {local}")
        parts.append(f"id {record.id}")
        return escape(" · ".join(parts))

    def _controls(self) -> list[Widget]:
        record = self.record
        # The conversation list, the block's border and padding take some of the width.
        self.plan = plan_surface(record, self.app.size.width - CHROME_WIDTH)
        parts: list[Widget] = []
        surface_answers = False
        if self.plan.mode == "handoff":
            return [
                Static(
                    escape(handoff_text(self.host.client.server, record, self.plan.reason)),
                    classes="handoff",
                )
            ]
        if self.plan.mode == "native":
            surface = record.ui_surface or {}
            if is_tool_approval(surface):
                self.panel = ToolApprovalPanel(surface, id="surface")
                surface_answers = True
                parts.append(self.panel)
            elif surface.get("type") == "table":
                if surface.get("title"):
                    title = f"[b]{escape(str(surface['title']))}[/b]"
                    parts.append(Static(title, classes="surface-title"))
                table = SurfaceTable(record, id="surface")
                surface_answers = table.answers
                parts.append(table)
            else:
                card = SurfaceCard(record, id="surface")
                surface_answers = card.answers
                parts.append(card)
        elif self.plan.mode == "fallback":
            kind = KIND_NAMES.get(record.kind, record.kind).lower()
            note = f"The rich view is not shown here ({self.plan.reason}); answering as {kind}."
            parts.append(Static(escape(note), classes="note"))
        if surface_answers:
            return parts
        if record.kind == "form":
            for field in form_fields(record.response_schema):
                label = field.label + (" *" if field.required else "")
                widget = field_input(field.kind, enum_choices(field.schema), field.name, label)
                box = FieldBox(
                    field.name, label, widget, " · ".join(hints(field.kind, field.schema))
                )
                self.boxes.append(box)
            parts.extend(self.boxes)
            parts.append(Button("Submit (Ctrl+S)", variant="primary", id="submit"))
        else:
            widget = single_input(record.kind, self.choices)
            hint = " · ".join(hints(record.kind, record.response_schema))
            keys = {
                "confirm": "y/n, or a button",
                "choice": "a digit, or arrows and Enter",
                "multi": "Space ticks, Enter validates",
                "multiline": "Ctrl+S sends",
            }.get(record.kind, "Enter sends")
            box = FieldBox("", "", widget, " · ".join(p for p in (hint, keys) if p))
            self.boxes.append(box)
            parts.append(box)
        return parts

    def _show_outcome(self) -> None:
        record = self.record
        outcome = self.query_one(".outcome", Line)
        if record.status == "pending":
            outcome.say("")
            self.remove_class("closed")
            return
        self.add_class("closed")
        if record.status == "answered":
            choices = row_choices(record) or self.choices
            text = answer_text(record.kind, record.answer, choices, record.response_schema)
            if is_tool_approval(record.ui_surface):
                text = decision_text(record.answer)
            by = record.answered_by
            who = f" by {answerer(by, self.host.user)}" if by else ""
            who += via_text(record.answered_via)
            outcome.say(f"✓ Answered{escape(who)}: {escape(text)}")
        else:
            outcome.say(f"✕ {record.status.capitalize()}")

    def takes(self, record: Interaction) -> bool:
        """Show the server's newer ``record`` in this block, as it is drawn (what is typed in
        it stays), if it can: False when the block must be drawn anew (its controls, or
        whom it waits for, are not what the record now needs)."""
        if record.status == "pending" and (
            self.record.status != "pending"
            or (self.host.waits_for_others(record) or None) != self.others
        ):
            return False
        self.update_record(record)
        return True

    def update_record(self, record: Interaction) -> None:
        """The server's newer record: a closed request loses its controls everywhere."""
        self.record = record
        self.query_one(".meta", Static).update(self._meta())
        if record.status != "pending":
            for controls in self.query(".controls"):
                controls.remove()
            self.query_one(".block-error", Line).say("")
            self.forget_empty()
        self._show_outcome()

    def focus_answer(self) -> bool:
        for widget in self.query("#surface, .controls FieldBox > *"):
            focus_first = getattr(widget, "focus_first", None)
            if focus_first is not None and widget.display:
                focus_first()
                return True
        return False

    # -- sending ---------------------------------------------------------------------------

    def on_ready(self, event: Ready) -> None:
        event.stop()
        # In a form, Enter moves on to the next field; Ctrl+S (a multiline field's too) sends.
        form_field = self.record.kind == "form" and not event.carries_value
        if form_field and not isinstance(event.source, MultilineInput):
            self.screen.focus_next()
            return
        self.send(event.value if event.carries_value else None, read=not event.carries_value)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "submit":
            event.stop()
            self.send(None, read=True)

    def action_send(self) -> None:
        if self.record.status == "pending" and self.boxes:
            self.send(None, read=True)

    def _read(self) -> Any:
        if self.record.kind != "form":
            return self.boxes[0].widget.read()
        answer = {}
        for box in self.boxes:
            value = box.widget.read()
            if value is not None:
                answer[box.field_name] = value
        return answer

    def send(self, value: Any, *, read: bool) -> None:
        if self.busy or self.record.status != "pending":
            return
        answer = self._read() if read else value
        if self._empty(answer) and not self.empty_asked:
            self.empty_asked = True
            self.query_one(".confirm", Line).say(escape(EMPTY_QUESTIONS[self.record.kind]))
            return
        self.forget_empty()
        self.busy = True
        self.clear_errors()
        self._send(answer)

    def _empty(self, answer: Any) -> bool:
        kind = self.record.kind
        if kind == "multi":
            return isinstance(answer, list) and not answer
        return kind in ("text", "multiline") and isinstance(answer, str) and not answer.strip()

    def forget_empty(self) -> None:
        """The inputs changed (or the answer went out): an empty one is asked about anew."""
        self.empty_asked = False
        for confirm in self.query(".confirm").results(Line):
            confirm.say("")

    def on_input_changed(self, event: Input.Changed) -> None:
        self.forget_empty()

    def on_text_area_changed(self, event: TextArea.Changed) -> None:
        self.forget_empty()

    def on_selection_list_selected_changed(self, event: SelectionList.SelectedChanged[str]) -> None:
        self.forget_empty()

    def on_edited(self, event: Edited) -> None:
        self.forget_empty()

    @work(group="answer", exclusive=True)
    async def _send(self, answer: Any) -> None:
        client, request_id = self.host.client, self.record.id
        try:
            answer = await asyncio.to_thread(self._upload_files, client, answer)
            found = await asyncio.to_thread(
                client.respond_interaction, request_id, answer, via="button"
            )
        except InvalidInput as exc:
            self.show_errors(exc.errors or [FieldError("", str(exc))])
        except NotPending:
            try:
                found = await asyncio.to_thread(client.get_interaction, request_id)
            except PawFlowError as exc:
                self.block_error(f"This request is already closed ({exc}).")
            else:
                self.host.record_changed(found)
        except NotFound:
            self.block_error("This request is no longer available to you.")
        except Forbidden as exc:  # the server's 403: whom it waits for, or who handles it
            self.block_error(f"Not yours to answer: {exc.message}. Nothing was sent.")
        except ServerUnreachable:
            self.block_error("The server cannot be reached; the answer was not sent. Try again.")
        except PawFlowError as exc:
            self.block_error(str(exc))
        else:
            self.host.record_changed(found)
        finally:
            self.busy = False

    def _upload_files(self, client: Client, answer: Any) -> Any:
        """Upload every path in ``answer`` for this request; errors name their field."""
        if isinstance(answer, PathToUpload):
            return self._upload(client, answer, None)
        if isinstance(answer, dict):
            return {
                name: self._upload(client, value, name)
                if isinstance(value, PathToUpload)
                else value
                for name, value in answer.items()
            }
        return answer

    def _upload(self, client: Client, value: PathToUpload, name: str | None) -> Any:
        path = name or "answer"
        if not value.path.is_file():
            raise InvalidInput("no such file", [FieldError(path, f"no such file: {value.path}")])
        try:
            return client.upload(value.path, request_id=self.record.id, field=name).to_dict()
        except InvalidInput as exc:
            errors = [FieldError(path, e.message) for e in exc.errors] or [
                FieldError(path, str(exc))
            ]
            raise InvalidInput(str(exc), errors) from exc

    # -- errors ----------------------------------------------------------------------------

    def clear_errors(self) -> None:
        for box in self.boxes:
            box.clear_error()
        for line in self.panel.lines if self.panel is not None else []:
            line.clear_error()
        self.query_one(".block-error", Line).say("")

    def show_errors(self, errors: list[FieldError]) -> None:
        loose = []
        for error in errors:
            line = None if self.panel is None else self.panel.line_for(error.path)
            if line is not None:
                line.set_error(error.message)
                continue
            box = self._box_for(error.path)
            if box is None:
                loose.append(f"{error.path}: {error.message}" if error.path else error.message)
            else:
                box.set_error(error.message)
        if loose:
            self.block_error("; ".join(loose))
        invalid = next((b for b in self.boxes if b.error), None)
        target = cast(Any, invalid.widget if invalid else None)
        if target is not None:
            target.focus_first()

    def _box_for(self, path: str) -> FieldBox | None:
        if self.record.kind != "form":
            return self.boxes[0] if self.boxes else None
        name = field_of(path)
        return next((b for b in self.boxes if b.field_name == name), None)

    def block_error(self, message: str) -> None:
        self.query_one(".block-error", Line).say(f"✕ {escape(message)}")
