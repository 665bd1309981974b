"""Tools from Python functions, the scripted model, and the loop's one streamed run."""

from __future__ import annotations

import enum
from collections.abc import Iterator
from datetime import date
from typing import Any, Literal

import pytest

from pawflow.agent import (
    AgentLoop,
    CheckpointStore,
    RunRequest,
    ScriptedModel,
    Tool,
    Toolbox,
    ToolContext,
    ToolOutcome,
    tool,
)
from pawflow.agent.builtin_tools import builtin_tools
from pawflow.agent.loop import RunFinished, StepStarted, TextChunk, ToolFinished, ToolStarted
from pawflow.agent.models.base import (
    ChatMessage,
    ModelOutput,
    ModelRequest,
    TextDelta,
    ToolCall,
    collect,
)
from pawflow.errors import InvalidInput
from pawflow.store import Store


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


def paint(
    ctx: ToolContext,
    wall: str,
    coats: int = 2,
    color: Color = Color.RED,
    finish: Literal["matte", "gloss"] | None = None,
    rooms: list[str] | None = None,
    ratio: float = 0.5,
    dry: bool = False,
) -> str:
    """Paint a wall.

    Longer explanation that the model does not need.

    Args:
        wall: Which wall to paint.
        coats: How many coats; more
            is better.
        color: The color.
        finish: Matte or gloss.
        rooms: Rooms to do too.
    """
    return f"{ctx.agent} painted {wall} {color} x{coats}"


def test_a_schema_from_type_hints_and_docstring() -> None:
    made = Tool.from_function(paint)
    assert made.name == "paint" and made.context_param == "ctx"
    assert made.description.startswith("Paint a wall.\n\nLonger explanation")
    assert made.parameters == {
        "type": "object",
        "properties": {
            "wall": {"type": "string", "description": "Which wall to paint."},
            "coats": {
                "type": "integer",
                "description": "How many coats; more is better.",
                "default": 2,
            },
            "color": {"$ref": "#/$defs/Color", "default": "red", "description": "The color."},
            "finish": {
                "enum": ["matte", "gloss"],
                "type": "string",
                "description": "Matte or gloss.",
            },
            "rooms": {
                "type": "array",
                "items": {"type": "string"},
                "description": "Rooms to do too.",
            },
            "ratio": {"type": "number", "default": 0.5},
            "dry": {"type": "boolean", "default": False},
        },
        "additionalProperties": False,
        "required": ["wall"],
        "$defs": {"Color": {"enum": ["red", "blue"], "type": "string"}},
    }


def test_sphinx_docstrings_and_the_decorator() -> None:
    @tool(consequential=True)
    def wipe(disk: str) -> str:
        """Wipe a disk.

        :param disk: The device
            to wipe.
        :returns: what happened
        """
        return disk

    assert isinstance(wipe, Tool) and wipe.consequential
    assert wipe.parameters["properties"]["disk"]["description"] == "The device to wipe."

    def bad(*args: Any) -> None:
        """No."""

    with pytest.raises(InvalidInput):
        Tool.from_function(bad)


def test_arguments_arrive_typed_and_odd_types_are_refused(sqlite_store: Store) -> None:
    def book(day: date, color: Color = Color.RED) -> str:
        """Book a day."""
        return f"{day.isoformat()} {color.name}"

    made = Tool.from_function(book)
    assert made.parameters["properties"]["day"] == {"type": "string", "format": "date"}
    outcome = Toolbox([made]).invoke(
        ToolCall("c", "book", '{"day": "2026-03-01", "color": "blue"}'), context(sqlite_store)
    )
    assert outcome.content == "2026-03-01 BLUE"

    def odd(thing: Store) -> None:
        """Store is no JSON."""

    with pytest.raises(InvalidInput, match="odd"):
        Tool.from_function(odd)


def context(store: Store) -> ToolContext:
    conversation = store.create_conversation("alice")
    return ToolContext(store, "tester", conversation.id, "alice", "run")


def test_invoking_validates_and_reports_failures_to_the_model(sqlite_store: Store) -> None:
    box = Toolbox([paint])
    ctx = context(sqlite_store)

    def call(arguments: str, name: str = "paint") -> ToolOutcome:
        return box.invoke(ToolCall("c", name, arguments), ctx)

    assert call('{"wall": "north", "color": "blue", "finish": null}').content == (
        "tester painted north Color.BLUE x2"
    )
    assert call('{"wall": "north", "coats": "two"}').error
    assert "coats" in call('{"wall": "north", "coats": "two"}').content
    assert "not a JSON object" in call("[1]").content
    assert "additional" in call('{"wall": "n", "door": 1}').content.lower()
    assert "no tool named 'sand'" in call("{}", name="sand").content

    def broken() -> str:
        """Always fails."""
        raise RuntimeError("kaput")

    box.add(broken)
    assert call("{}", name="broken") == ToolOutcome("Error: RuntimeError: kaput", error=True)
    with pytest.raises(InvalidInput, match="already registered"):
        box.add(broken)


def test_a_consequential_tool_without_an_approver_does_not_run(sqlite_store: Store) -> None:
    ran: list[str] = []

    def launch() -> str:
        """Launch."""
        ran.append("yes")
        return "launched"

    box = Toolbox([Tool.from_function(launch, consequential=True)])
    outcome = box.invoke(ToolCall("c", "launch", "{}"), context(sqlite_store))
    assert outcome.error and ran == []


def test_request_confirmation_refuses_a_long_wait(sqlite_store: Store) -> None:
    box = Toolbox(builtin_tools())
    ctx = context(sqlite_store)
    outcome = box.invoke(
        ToolCall("c", "request_confirmation", '{"message": "ok?", "wait_seconds": 500}'), ctx
    )
    assert outcome.error and "120" in outcome.content
    outcome = box.invoke(
        ToolCall("c", "request_confirmation", '{"message": "which?", "mode": "choice"}'), ctx
    )
    assert outcome.error and "needs options" in outcome.content
    assert sqlite_store.list_interactions(user="alice") == []


def test_request_confirmation_outside_a_chat_does_not_wait(sqlite_store: Store) -> None:
    """With no caller to take an answer in the turn (``ToolContext.take_answer``), the tool
    asks and ends the turn at once, wait_seconds or not: the answer comes back later."""
    box = Toolbox(builtin_tools())
    ctx = context(sqlite_store)
    assert ctx.take_answer is None
    outcome = box.invoke(
        ToolCall("c", "request_confirmation", '{"message": "ok?", "wait_seconds": 120}'), ctx
    )
    assert outcome.end_turn and outcome.content.startswith("pending")
    [asked] = sqlite_store.list_interactions(user="alice", status="pending")
    assert outcome.data == {"request_id": asked.id, "signal_id": asked.signal_id}


# --- the scripted model ------------------------------------------------------------------


def test_scripts_match_the_last_message_and_fill_in_groups() -> None:
    model = ScriptedModel.from_text(
        """
        turns:
          - role: any
            match: 'size=(?P<n>\\d+)'
            reply: 'It is {n}.'
          - role: user
            match: '(?i)measure (?P<what>\\w+)'
            tool_calls: [{name: measure, arguments: {what: '{what}', deep: [ '{what}' ]}}]
        default: {reply: 'Hm?'}
        """
    )
    ask = ModelRequest((ChatMessage("user", "Measure kitchen"),))
    first = collect(model.stream(ask))
    assert first.text == ""
    assert first.tool_calls == (
        ToolCall("call_1", "measure", '{"what": "kitchen", "deep": ["kitchen"]}'),
    )
    observed = ModelRequest(
        (
            *ask.messages,
            ChatMessage("assistant", None, first.tool_calls),
            ChatMessage("tool", "size=12", tool_call_id="call_1"),
        )
    )
    assert collect(model.stream(observed)).text == "It is 12."
    assert collect(model.stream(ModelRequest((ChatMessage("user", "hello"),)))).text == "Hm?"
    # Instructions are not something to answer, even when they would match.
    prompt = ChatMessage("system", "size=1: measure everything")
    assert (
        collect(model.stream(ModelRequest((prompt,)))).text == "(the script has no reply for this)"
    )
    assert collect(model.stream(ModelRequest((prompt, ChatMessage("user", "hi"))))).text == "Hm?"


@pytest.mark.parametrize(
    "script",
    [
        "turns: [{match: '(', reply: x}]",
        "turns: [{match: x}]",
        "turns: [{match: x, reply: y, role: robot}]",
        "turns: [{match: x, reply: y, extra: 1}]",
        "wat: 1",
        "turns: [",
    ],
)
def test_bad_scripts_are_clear_errors(script: str) -> None:
    with pytest.raises(InvalidInput):
        ScriptedModel.from_text(script)


# --- one loop, streamed or blocking --------------------------------------------------------


def test_the_blocking_run_is_the_streamed_run_consumed(sqlite_store: Store) -> None:
    def measure(what: str) -> str:
        """Measure something."""
        return f"size={len(what)}"

    model = ScriptedModel(
        {
            "turns": [
                {"role": "tool", "match": r"size=(?P<n>\d+)", "reply": "It is {n} long."},
                {
                    "role": "user",
                    "match": "",
                    "reply": "Measuring now.",
                    "tool_calls": [
                        {"name": "measure", "arguments": {"what": "kitchen"}},
                        {"name": "nothing_here", "arguments": {}},
                    ],
                },
            ]
        }
    )
    loop = AgentLoop(model, Toolbox([measure]), checkpoints=CheckpointStore(sqlite_store))
    messages = [ChatMessage("user", "go")]

    events = list(loop.stream(RunRequest("t", messages, context(sqlite_store), run_id="r1")))
    kinds = [type(e).__name__ for e in events]
    assert kinds[0] == "StepStarted" and kinds[-1] == "RunFinished"
    assert (
        "".join(e.text for e in events if isinstance(e, TextChunk)) == "Measuring now.It is 7 long."
    )
    finished = [e for e in events if isinstance(e, ToolFinished)]
    assert [f.outcome.content for f in finished] == [
        "size=7",
        "Error: there is no tool named 'nothing_here' (tools: measure)",
    ]
    assert len([e for e in events if isinstance(e, ToolStarted)]) == 2
    assert len([e for e in events if isinstance(e, StepStarted)]) == 2
    streamed = events[-1]
    assert isinstance(streamed, RunFinished)

    blocking = loop.run(RunRequest("t", messages, context(sqlite_store), run_id="r1"))
    assert blocking == streamed.result
    assert blocking.status == "completed" and blocking.checkpoint is None
    assert blocking.text == "Measuring now.\n\nIt is 7 long."


def test_the_turn_ends_on_a_question_and_later_calls_do_not_run(sqlite_store: Store) -> None:
    ran: list[str] = []

    def act() -> str:
        """Act."""
        ran.append("act")
        return "done"

    model = ScriptedModel(
        {
            "turns": [
                {
                    "match": "",
                    "tool_calls": [
                        {"name": "ask_user", "arguments": {"question": "Which color?"}},
                        {"name": "act"},
                    ],
                }
            ]
        }
    )
    checkpoints = CheckpointStore(sqlite_store)
    loop = AgentLoop(model, Toolbox([*builtin_tools(), act]), checkpoints=checkpoints)
    ctx = context(sqlite_store)
    ctx.session_id = ctx.conversation_id
    result = loop.run(RunRequest("t", [ChatMessage("user", "paint")], ctx))
    assert (result.status, result.halt_reason, result.text) == (
        "halted",
        "awaiting_user_input",
        "Which color?",
    )
    assert ran == []
    assert result.messages[-1].content == "not run: the turn ended before this call"
    [saved] = checkpoints.by_session(ctx.conversation_id)
    assert saved.halt_reason == "awaiting_user_input" and saved.payload["step"] == 1


class Broken:
    name = "broken"

    def stream(self, request: ModelRequest) -> Iterator[ModelOutput]:
        yield TextDelta("Let me")
        raise KeyError("choices")


def test_a_provider_bug_ends_the_turn_with_a_message(sqlite_store: Store) -> None:
    checkpoints = CheckpointStore(sqlite_store)
    loop = AgentLoop(Broken(), Toolbox(), checkpoints=checkpoints)
    result = loop.run(RunRequest("t", [ChatMessage("user", "hi")], context(sqlite_store)))
    assert (result.status, result.halt_reason, result.error) == ("halted", "model_error", True)
    assert "KeyError" in result.text and result.checkpoint is not None
