"""Keyboard inputs for each kind, alone and as the fields of a form.

Every input reads what was entered into the JSON value its kind expects (``read()``) and
posts :class:`Ready` when the person asks to send (Enter, a digit, y/n, Ctrl+S). None of
them checks the value: the server does, and its field errors come back beside the input.
"""

from __future__ import annotations

from typing import Any, ClassVar

from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.message import Message
from textual.widget import Widget
from textual.widgets import (
    Button,
    Checkbox,
    Input,
    OptionList,
    Select,
    SelectionList,
    Static,
    TextArea,
)
from textual.widgets.option_list import Option

from pawflow.tui.answers import PLACEHOLDERS, Choice, scalar_value

_UNSET: Any = object()


class Line(Static):
    """A line beside the inputs (an outcome, an error, a question) that takes no room while
    it says nothing."""

    def __init__(self, text: str = "", *, classes: str) -> None:
        super().__init__(text, classes=classes)
        self.display = bool(text)

    def say(self, text: str) -> None:
        self.update(text)
        self.display = bool(text)

    @property
    def said(self) -> str:
        return str(self.render()) if self.display else ""


class Ready(Message):
    """The person asked to send: ``value`` when the key itself carries the answer."""

    def __init__(self, source: Widget, value: Any = _UNSET) -> None:
        super().__init__()
        self.source = source
        self.value = value

    @property
    def carries_value(self) -> bool:
        return self.value is not _UNSET


class ConfirmInput(Horizontal):
    """Yes and No buttons; ``y`` and ``n`` answer from anywhere inside."""

    DEFAULT_CSS = """
    ConfirmInput { height: auto; }
    ConfirmInput Button { margin-right: 2; min-width: 10; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer(True)", "Yes"),
        Binding("n", "answer(False)", "No"),
    ]

    def compose(self) -> Any:
        yield Button("Yes (y)", variant="primary", id="yes")
        yield Button("No (n)", id="no")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.post_message(Ready(self, event.button.id == "yes"))

    def action_answer(self, value: bool) -> None:
        self.post_message(Ready(self, value))

    def read(self) -> Any:
        return None

    def focus_first(self) -> None:
        self.query_one("#yes", Button).focus()


class ChoiceInput(OptionList):
    """Numbered options: a digit picks at once; arrows and Enter pick the highlighted one."""

    DEFAULT_CSS = "ChoiceInput { height: auto; max-height: 12; }"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(str(d), f"pick({d})", show=False) for d in range(1, 10)
    ]

    def __init__(self, choices: list[Choice], *, id: str | None = None) -> None:
        self.choices = choices
        options = [Option(f"{i}. {c.label}", id=f"o{i}") for i, c in enumerate(choices, 1)]
        super().__init__(*options, id=id)

    def action_pick(self, number: int) -> None:
        if 1 <= number <= len(self.choices):
            self.highlighted = number - 1
            self.post_message(Ready(self, self.choices[number - 1].value))

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.post_message(Ready(self, self.choices[event.option_index].value))

    def read(self) -> Any:
        index = self.highlighted
        return None if index is None else self.choices[index].value

    def focus_first(self) -> None:
        self.focus()


class Edited(Message):
    """What an input holds changed in a way no Textual message says (a table's tick)."""


class MultiInput(SelectionList[str]):
    """Space ticks the highlighted option, Enter validates what is ticked."""

    DEFAULT_CSS = "MultiInput { height: auto; max-height: 12; }"
    BINDINGS: ClassVar[list[BindingType]] = [Binding("enter", "validate", "Validate", show=False)]

    def __init__(
        self, choices: list[Choice], *, in_form: bool = False, id: str | None = None
    ) -> None:
        self.choices = choices
        self.in_form = in_form
        super().__init__(*[(c.label, c.value) for c in choices], id=id)

    def action_validate(self) -> None:
        self.post_message(Ready(self))

    def read(self) -> Any:
        ticked = set(self.selected)
        values = [c.value for c in self.choices if c.value in ticked]
        return None if self.in_form and not values else values

    def focus_first(self) -> None:
        self.focus()


class LineInput(Input):
    """One line: text, integer, decimal, date, datetime (local time) or a file's path."""

    def __init__(self, kind: str, *, in_form: bool = False, id: str | None = None) -> None:
        super().__init__(placeholder=PLACEHOLDERS.get(kind, "your answer"), id=id)
        self.kind = kind
        self.in_form = in_form

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.post_message(Ready(self))

    def read(self) -> Any:
        return scalar_value(self.kind, self.value, in_form=self.in_form)

    def focus_first(self) -> None:
        self.focus()


class MultilineInput(TextArea):
    """Several lines; Ctrl+S sends (Enter breaks the line)."""

    DEFAULT_CSS = "MultilineInput { height: 6; }"
    BINDINGS: ClassVar[list[BindingType]] = [Binding("ctrl+s", "send", "Send", show=True)]

    def __init__(self, *, in_form: bool = False, id: str | None = None) -> None:
        super().__init__(id=id)
        self.in_form = in_form

    def action_send(self) -> None:
        self.post_message(Ready(self))

    def read(self) -> Any:
        if self.in_form and self.text == "":
            return None
        return self.text

    def focus_first(self) -> None:
        self.focus()


class CheckInput(Checkbox):
    """A form's yes/no field: Space ticks and unticks it; Enter moves on, as in every field."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("space", "toggle_button", "Tick", show=False),
        Binding("enter", "next", "Next field", show=False),
    ]

    def action_next(self) -> None:
        self.post_message(Ready(self))

    def read(self) -> Any:
        return self.value

    def focus_first(self) -> None:
        self.focus()


class SelectInput(Select[str]):
    """A form's choice field: Enter opens the list, arrows move, Enter picks."""

    def __init__(self, choices: list[Choice], *, id: str | None = None) -> None:
        super().__init__([(c.label, c.value) for c in choices], prompt="Choose…", id=id)

    def read(self) -> Any:
        return None if self.is_blank() else self.value

    def focus_first(self) -> None:
        self.focus()


AnswerWidget = (
    ConfirmInput | ChoiceInput | MultiInput | LineInput | MultilineInput | CheckInput | SelectInput
)


def single_input(kind: str, choices: list[Choice]) -> AnswerWidget:
    """The input answering a request of ``kind`` on its own (a form has one per field)."""
    if kind == "confirm":
        return ConfirmInput(classes="answer")
    if kind == "choice":
        return ChoiceInput(choices, id="answer")
    if kind == "multi":
        return MultiInput(choices, id="answer")
    if kind == "multiline":
        return MultilineInput(id="answer")
    return LineInput(kind, id="answer")


def field_input(kind: str, choices: list[Choice], name: str, label: str = "") -> AnswerWidget:
    """The input of a form field named ``name`` (a yes/no one carries its ``label``)."""
    ident = f"field-{name}"
    if kind == "confirm":
        return CheckInput(label, id=ident)
    if kind == "choice":
        return SelectInput(choices, id=ident)
    if kind == "multi":
        return MultiInput(choices, in_form=True, id=ident)
    if kind == "multiline":
        return MultilineInput(in_form=True, id=ident)
    return LineInput(kind, in_form=True, id=ident)
