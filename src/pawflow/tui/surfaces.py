"""Rich surfaces (``pawflow.ui-surface.v1``) in a terminal: drawn, fallen back, or handed off.

A surface only presents a request: its answers are the values of the request's own kind,
sent through ``respond_interaction`` and validated like any other. For each request the
terminal takes exactly one of three paths (:func:`plan_surface`):

- **native**: a table (a row per option, picked with the arrows, Enter or a digit; ticked
  with Space for several), a card (its fields, and a button per action), or a tool
  approval (:mod:`pawflow.tui.approvals`);
- **fallback**: the surface cannot be drawn here (a type this client does not know, a table
  wider than the terminal, parts that do not fit the request): the request's declared
  fallback kind is rendered instead, with a note saying so;
- **hand-off**: not even the fallback can be trusted (an unknown contract, a fallback that
  is not the request's kind): no control at all, and a line with the web chat's link.

Never a silent accept: nothing is answered that the person did not pick.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, DataTable, Static

from pawflow.records import Interaction
from pawflow.tui.answers import Choice, is_known_kind
from pawflow.tui.approvals import is_tool_approval
from pawflow.tui.inputs import Edited, Ready

SURFACE_CONTRACT = "pawflow.ui-surface.v1"
MIN_CARD_WIDTH = 32
MAX_CELL_WIDTH = 30
ANSWERING_KINDS = frozenset({"choice", "multi"})

Mode = Literal["none", "native", "fallback", "handoff"]


@dataclass(frozen=True)
class SurfacePlan:
    mode: Mode
    reason: str = ""


def cell_text(value: object) -> str:
    if value is None:
        return ""
    if value is True:
        return "yes"
    if value is False:
        return "no"
    return str(value)


def table_width(surface: Mapping[str, Any]) -> int:
    """Columns the table needs: each column as wide as its widest cell (capped), plus rules."""
    total = 8  # borders, the pick mark and the block's padding
    for column in surface["columns"]:
        key = column.get("key")
        widest = max(
            [len(str(column.get("label", "")))]
            + [
                min(len(cell_text(row["cells"].get(key))), MAX_CELL_WIDTH)
                for row in surface["rows"]
            ]
        )
        total += widest + 3
    return total


def _table_problem(surface: Mapping[str, Any], record: Interaction, width: int) -> str | None:
    columns, rows = surface.get("columns"), surface.get("rows")
    if not isinstance(columns, list) or not isinstance(rows, list) or not columns or not rows:
        return "the table has no columns or rows"
    if not all(isinstance(c, Mapping) and isinstance(c.get("key"), str) for c in columns):
        return "the table's columns are unreadable"
    if not all(isinstance(r, Mapping) and isinstance(r.get("cells"), Mapping) for r in rows):
        return "the table's rows are unreadable"
    if record.kind in ANSWERING_KINDS:
        values = {o["value"] for o in record.options or []}
        if any(r.get("value") not in values for r in rows):
            return "its rows do not match the request's options"
    needed = table_width(surface)
    if needed > width:
        return f"the table needs {needed} columns and this terminal has {width}"
    return None


def _card_problem(surface: Mapping[str, Any], record: Interaction, width: int) -> str | None:
    fields, actions = surface.get("fields", []), surface.get("actions", [])
    if not isinstance(fields, list) or not isinstance(actions, list):
        return "the card's fields or actions are unreadable"
    if actions and record.kind not in ("confirm", "choice"):
        return f"card actions cannot answer a {record.kind} request"
    values = {o["value"] for o in record.options or []}
    for action in actions:
        if not isinstance(action, Mapping) or not isinstance(action.get("label"), str):
            return "the card's actions are unreadable"
        value = action.get("value")
        if (record.kind == "confirm" and not isinstance(value, bool)) or (
            record.kind == "choice" and value not in values
        ):
            return "the card's actions do not match the request"
    if width < MIN_CARD_WIDTH:
        return f"the card needs {MIN_CARD_WIDTH} columns and this terminal has {width}"
    return None


def plan_surface(record: Interaction, width: int) -> SurfacePlan:
    """Which of the three paths ``record``'s surface takes in a terminal ``width`` wide."""
    surface = record.ui_surface
    if surface is None:
        return SurfacePlan("none")
    kind_name = surface.get("type")
    if surface.get("contract") != SURFACE_CONTRACT:
        return SurfacePlan("handoff", f"its contract {surface.get('contract')!r} is unknown")
    if kind_name == "table":
        problem = _table_problem(surface, record, width)
    elif kind_name == "card":
        problem = _card_problem(surface, record, width)
    elif is_tool_approval(surface):
        problem = None if record.kind == "confirm" else "a tool approval answers a confirm"
    else:
        problem = f"this terminal cannot show a {kind_name!r} surface"
    if problem is None:
        return SurfacePlan("native")
    fallback = surface.get("fallback")
    if fallback == record.kind and is_known_kind(fallback):
        return SurfacePlan("fallback", problem)
    return SurfacePlan("handoff", f"{problem}, and it declares no usable fallback")


def row_choices(record: Interaction) -> list[Choice]:
    """A table surface's rows as choices, named by their first cell (what the person saw)."""
    surface = record.ui_surface or {}
    columns, rows = surface.get("columns"), surface.get("rows")
    if surface.get("type") != "table" or not isinstance(columns, list) or not columns:
        return []
    first = columns[0].get("key") if isinstance(columns[0], Mapping) else None
    found = []
    for row in rows if isinstance(rows, list) else []:
        if isinstance(row, Mapping) and isinstance(row.get("cells"), Mapping) and row.get("value"):
            name = cell_text(row["cells"].get(first)) or str(row["value"])
            found.append(Choice(str(row["value"]), name))
    return found


def web_link(server: str, record: Interaction) -> str:
    return f"{server.rstrip('/')}/?c={record.conversation_id}"


def handoff_text(server: str, record: Interaction, reason: str) -> str:
    return (
        f"This request cannot be answered in the terminal ({reason}). "
        f"Open it in the web chat: {web_link(server, record)} (request {record.id})"
    )


# -- tables ---------------------------------------------------------------------------------


class SurfaceTable(DataTable[str]):
    """A table surface: for choice a pick per row, for multi a tick per row, else information.

    Enter or a digit picks the row (choice); Space ticks and Enter validates (multi).
    """

    DEFAULT_CSS = "SurfaceTable { height: auto; max-height: 16; }"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("space", "tick", "Tick", show=False),
        *[Binding(str(d), f"pick({d})", show=False) for d in range(1, 10)],
    ]

    def __init__(self, record: Interaction, *, id: str | None = None) -> None:
        super().__init__(cursor_type="row", zebra_stripes=True, id=id)
        self.record = record
        self.surface: Mapping[str, Any] = record.ui_surface or {}
        self.answers = record.kind in ANSWERING_KINDS
        self.values: list[str] = [str(r.get("value")) for r in self.surface["rows"]]
        self.ticked: set[str] = set()
        if not self.answers:
            self.can_focus = False

    def on_mount(self) -> None:
        columns = self.surface["columns"]
        mark = {"multi": "✓", "choice": "#"}.get(self.record.kind)
        if mark is not None:
            self.add_column(mark, key="_mark")
        for column in columns:
            self.add_column(str(column.get("label", "")), key=str(column["key"]))
        for index, row in enumerate(self.surface["rows"]):
            cells = [self._mark(index)] if mark is not None else []
            for column in columns:
                text = cell_text(row["cells"].get(column["key"]))[:MAX_CELL_WIDTH]
                align = column.get("align", "start")
                justify: Literal["left", "right", "center"] = (
                    "right" if align == "end" else "center" if align == "center" else "left"
                )
                cells.append(Text(text, justify=justify))  # type: ignore[arg-type]
            self.add_row(*cells, key=str(index))

    def _mark(self, index: int) -> str:
        if self.record.kind == "choice":
            return str(index + 1)
        return "[x]" if self.values[index] in self.ticked else "[ ]"

    def action_tick(self) -> None:
        if self.record.kind != "multi":
            return
        index = self.cursor_row
        value = self.values[index]
        self.ticked ^= {value}
        self.update_cell(str(index), "_mark", self._mark(index))
        self.post_message(Edited())

    def action_pick(self, number: int) -> None:
        if self.record.kind == "choice" and 1 <= number <= len(self.values):
            self.move_cursor(row=number - 1)
            self.post_message(Ready(self, self.values[number - 1]))

    def action_select_cursor(self) -> None:
        if self.record.kind == "choice":
            self.post_message(Ready(self, self.values[self.cursor_row]))
        elif self.record.kind == "multi":
            self.post_message(Ready(self, self.read()))

    def read(self) -> Any:
        if self.record.kind == "multi":
            return [v for v in self.values if v in self.ticked]
        return self.values[self.cursor_row]

    def focus_first(self) -> None:
        self.focus()


# -- cards ----------------------------------------------------------------------------------


def card_renderable(surface: Mapping[str, Any]) -> RenderableType:
    parts: list[RenderableType] = []
    if surface.get("title"):
        parts.append(Text(str(surface["title"]), style="bold"))
    if surface.get("subtitle"):
        parts.append(Text(str(surface["subtitle"]), style="dim"))
    if surface.get("body"):
        parts.append(Text(str(surface["body"])))
    fields = surface.get("fields") or []
    if fields:
        grid = Table.grid(padding=(0, 2))
        grid.add_column(style="bold")
        grid.add_column()
        for field in fields:
            grid.add_row(str(field.get("label", "")), str(field.get("value", "")))
        parts.append(grid)
    return Group(*parts)


class SurfaceCard(Vertical):
    """A card surface: its text and fields, and a button per action (confirm and choice)."""

    DEFAULT_CSS = """
    SurfaceCard { height: auto; border: round $accent; padding: 0 1; }
    SurfaceCard Horizontal { height: auto; }
    SurfaceCard Button { margin-right: 2; }
    """

    def __init__(self, record: Interaction, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.record = record
        self.surface: Mapping[str, Any] = record.ui_surface or {}
        self.actions: list[Mapping[str, Any]] = list(self.surface.get("actions") or [])
        self.answers = bool(self.actions) and record.kind in ("confirm", "choice")

    def compose(self) -> Any:
        yield Static(card_renderable(self.surface))
        if self.answers:
            with Horizontal():
                for index, action in enumerate(self.actions):
                    style = action.get("style")
                    variant: Literal["primary", "error", "default"] = (
                        "primary"
                        if style == "primary"
                        else "error"
                        if style == "danger"
                        else "default"
                    )
                    yield Button(str(action["label"]), variant=variant, id=f"action-{index}")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        index = int(str(event.button.id).removeprefix("action-"))
        self.post_message(Ready(self, self.actions[index]["value"]))

    def read(self) -> Any:
        return None

    def focus_first(self) -> None:
        self.query(Button).first().focus()
