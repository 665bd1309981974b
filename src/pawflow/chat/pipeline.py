"""The chat turn pipeline: ``intercept → classify → route → plan → execute → curate → record``.

Every turn — a user's message, or an agent's wakeup — runs these stages in this order. A
stage reads and fills the :class:`Turn`; one that settles the turn sets ``turn.done`` and
the later stages do not run (an intercept that answers records its own reply). The stages
are objects so that later parts can replace one (an intercept chain declared in YAML, a
classifier that steers answers to their owner, a curator that re-grounds) without touching
the others.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

from pawflow.agent.loop import (
    AgentLoop,
    ApprovedCall,
    LoopEvent,
    RunFinished,
    RunRequest,
    RunResult,
    StepStarted,
    TextChunk,
    ToolFinished,
    ToolStarted,
)
from pawflow.agent.models.base import ChatMessage, ToolCall
from pawflow.agent.tools import ToolContext
from pawflow.clock import from_millis
from pawflow.records import Message
from pawflow.store.conversations import conversation_audience
from pawflow.store.events import append_event

if TYPE_CHECKING:
    from pawflow.agent.spec import AgentSpec
    from pawflow.agent.wakeups import Wakeup
    from pawflow.store import Store

log = logging.getLogger("pawflow.chat")

STAGES = ("intercept", "classify", "route", "plan", "execute", "curate", "record")
PROGRESS_EVENT = "agent_progress"
_TEXT_FLUSH = 240  # characters of streamed text per progress event


class AgentRuntime(Protocol):
    """What the stages need from whoever runs the agents (``AgentService``)."""

    store: Store

    def agent(self, name: str) -> AgentSpec | None: ...

    def assigned_agent(self, conversation_id: str) -> str | None: ...

    def loop_for(self, spec: AgentSpec) -> AgentLoop: ...


@dataclass
class Task:
    """One run of one agent, as ``plan`` prepares it for ``execute``."""

    agent: AgentSpec
    messages: list[ChatMessage]
    approved_calls: list[ApprovedCall] = field(default_factory=list)


@dataclass
class Turn:
    store: Store
    conversation_id: str
    text: str
    user: str  # whom the agent acts for (and asks)
    kind: Literal["message", "wakeup"] = "message"
    message_id: str | None = None
    wakeup: Wakeup | None = None
    intent: str | None = None
    agent: AgentSpec | None = None
    tasks: list[Task] = field(default_factory=list)
    results: list[RunResult] = field(default_factory=list)
    reply: str | None = None
    reply_data: dict[str, Any] = field(default_factory=dict)
    answered_by: str | None = None
    recorded: Message | None = None
    done: bool = False
    trace: list[str] = field(default_factory=list)

    @classmethod
    def for_message(cls, store: Store, message: Message) -> Turn:
        return cls(
            store=store,
            conversation_id=message.conversation_id,
            text=message.content,
            user=message.author,
            message_id=message.id,
        )

    @classmethod
    def for_wakeup(cls, store: Store, wakeup: Wakeup) -> Turn:
        return cls(
            store=store,
            conversation_id=wakeup.conversation_id,
            text=wakeup.text,
            user=wakeup.user,
            kind="wakeup",
            message_id=wakeup.message_id,
            wakeup=wakeup,
        )


class Stage(Protocol):
    name: str

    def __call__(self, turn: Turn) -> None: ...


class Pipeline:
    """The stages, in the one order they may run in."""

    def __init__(self, stages: Sequence[Stage]) -> None:
        names = tuple(stage.name for stage in stages)
        if names != STAGES:
            raise ValueError(f"the stages must be {' → '.join(STAGES)}, not {' → '.join(names)}")
        self.stages = list(stages)

    def stage(self, name: str) -> Stage:
        return self.stages[STAGES.index(name)]

    def run(self, turn: Turn) -> Turn:
        for stage in self.stages:
            turn.trace.append(stage.name)
            stage(turn)
            if turn.done:
                break
        return turn


# --- intercept ------------------------------------------------------------------------


class Intercept(Protocol):
    """A deterministic short-circuit: a reply for the turn, or None to let it pass."""

    name: str
    resolves_confirmation: bool

    def __call__(self, turn: Turn) -> str | None: ...


class InterceptStage:
    """An ordered chain of intercepts; the first that answers settles the turn."""

    name = "intercept"

    def __init__(self, intercepts: Iterable[Intercept] = ()) -> None:
        self.intercepts = list(intercepts)

    def __call__(self, turn: Turn) -> None:
        if turn.kind != "message":
            return  # a wakeup belongs to the agent that asked; nothing may answer for it
        for intercept in self.intercepts:
            reply = intercept(turn)
            if reply is None:
                continue
            turn.reply = reply
            turn.answered_by = intercept.name
            turn.recorded = turn.store.append_message(
                turn.conversation_id,
                reply,
                role="assistant",
                author=intercept.name,
                data={"intercept": intercept.name},
            )
            turn.done = True
            return


# --- classify, route, plan ------------------------------------------------------------


class ClassifyStage:
    name = "classify"

    def __call__(self, turn: Turn) -> None:
        turn.intent = "wakeup" if turn.kind == "wakeup" else "chat"


class RouteStage:
    """Picks the agent: the one that asked, for a wakeup; the assigned one, for a message."""

    name = "route"

    def __init__(self, runtime: AgentRuntime) -> None:
        self.runtime = runtime

    def __call__(self, turn: Turn) -> None:
        name = (
            turn.wakeup.agent
            if turn.wakeup is not None
            else self.runtime.assigned_agent(turn.conversation_id)
        )
        turn.agent = None if name is None else self.runtime.agent(name)
        if turn.agent is None:
            turn.done = True  # no agent answers in this conversation


def history_messages(history: Sequence[Message]) -> list[ChatMessage]:
    """The conversation as the model reads it; notifications are not part of it."""
    found = []
    for message in history:
        if message.role in ("user", "assistant", "system"):
            found.append(ChatMessage(message.role, message.content))
    return found


def recent_history(store: Store, conversation_id: str, limit: int) -> list[Message]:
    with store.transaction(write=False) as tx:
        rows = tx.all(
            "SELECT * FROM messages WHERE conversation_id = ? ORDER BY seq DESC LIMIT ?",
            (conversation_id, limit),
        )
    return [
        Message(
            seq=row["seq"],
            id=row["id"],
            conversation_id=row["conversation_id"],
            role=row["role"],
            author=row["author"],
            content=row["content"],
            data=None if row["data"] is None else json.loads(row["data"]),
            created_at=from_millis(row["created_at"]),
        )
        for row in reversed(rows)
    ]


def settled_calls(wakeup: Wakeup) -> list[ApprovedCall]:
    """The user's decision on an approval, as a call to settle before the model speaks."""
    data = wakeup.data
    if data.get("purpose") != "approval" or not isinstance(data.get("tool_call"), dict):
        return []
    call = ToolCall.from_dict(data["tool_call"])
    status = data.get("status")
    if status == "answered":
        approved = data.get("answer") is True
        reason = "" if approved else f"The user declined: {call.name} was not run."
    else:
        approved, reason = False, f"The approval request {status}: {call.name} was not run."
    return [ApprovedCall(call, approved, reason)]


class PlanStage:
    name = "plan"

    def __call__(self, turn: Turn) -> None:
        agent = turn.agent
        assert agent is not None
        history = recent_history(turn.store, turn.conversation_id, agent.history_limit)
        messages = [ChatMessage("system", agent.system_prompt), *history_messages(history)]
        approved = settled_calls(turn.wakeup) if turn.wakeup is not None else []
        turn.tasks = [Task(agent, messages, approved)]


# --- execute ---------------------------------------------------------------------------


class Progress:
    """Streams a run's progress to the conversation as durable ``agent_progress`` events."""

    def __init__(self, store: Store, conversation_id: str, agent: str) -> None:
        self.store = store
        self.conversation_id = conversation_id
        self.agent = agent
        self._text: list[str] = []
        self._step = 0
        self._run_id = ""

    def _emit(self, data: dict[str, Any]) -> None:
        data = {"agent": self.agent, "run_id": self._run_id, "step": self._step, **data}
        with self.store.transaction() as tx:
            audience = conversation_audience(tx, self.conversation_id, writers_only=False)
            append_event(tx, audience, self.conversation_id, PROGRESS_EVENT, data, self.store.now())

    def _flush(self) -> None:
        if self._text:
            self._emit({"phase": "text", "text": "".join(self._text)})
            self._text.clear()

    def feed(self, event: LoopEvent) -> None:
        if isinstance(event, StepStarted):
            self._flush()
            self._run_id, self._step = event.run_id, event.step
            self._emit({"phase": "thinking"})
        elif isinstance(event, TextChunk):
            self._text.append(event.text)
            if sum(len(t) for t in self._text) >= _TEXT_FLUSH:
                self._flush()
        elif isinstance(event, ToolStarted):
            self._flush()
            self._run_id = event.run_id
            self._emit(
                {"phase": "tool", "tool": event.call.name, "arguments": event.call.arguments}
            )
        elif isinstance(event, ToolFinished):
            self._emit(
                {
                    "phase": "tool_result",
                    "tool": event.call.name,
                    "error": event.outcome.error,
                    "summary": event.outcome.content[:500],
                }
            )
        elif isinstance(event, RunFinished):
            self._flush()
            result = event.result
            self._emit(
                {"phase": "finished", "status": result.status, "halt_reason": result.halt_reason}
            )


class ExecuteStage:
    name = "execute"

    def __init__(self, runtime: AgentRuntime, *, progress: bool = True) -> None:
        self.runtime = runtime
        self.progress = progress

    def events(self, turn: Turn, task: Task) -> Iterator[LoopEvent]:
        """The run of one task, as the loop streams it."""
        ctx = ToolContext(
            store=turn.store,
            agent=task.agent.name,
            conversation_id=turn.conversation_id,
            user=turn.user,
            run_id="",
            session_id=turn.conversation_id,
            wakeup_id=None if turn.wakeup is None else turn.wakeup.id,
        )
        loop = self.runtime.loop_for(task.agent)
        request = RunRequest(
            agent=task.agent.name,
            messages=task.messages,
            context=ctx,
            approved_calls=task.approved_calls,
        )
        yield from loop.stream(request)

    def __call__(self, turn: Turn) -> None:
        for task in turn.tasks:
            progress = Progress(turn.store, turn.conversation_id, task.agent.name)
            for event in self.events(turn, task):
                if self.progress:
                    try:
                        progress.feed(event)
                    except Exception:  # progress is a courtesy; the turn goes on without it
                        log.exception("agent progress event not written")
                if isinstance(event, RunFinished):
                    turn.results.append(event.result)


# --- curate, record --------------------------------------------------------------------


class CurateStage:
    """Decides what of the runs' output the user sees."""

    name = "curate"

    def __call__(self, turn: Turn) -> None:
        texts = [r.text.strip() for r in turn.results if r.text and r.text.strip()]
        turn.reply = "\n\n".join(texts) or None
        if turn.results:
            last = turn.results[-1]
            turn.reply_data = {
                "run_id": last.run_id,
                "status": last.status,
                "halt_reason": last.halt_reason,
                "error": last.error,
            }
            if last.checkpoint is not None:
                turn.reply_data["checkpoint"] = {
                    "run_id": last.checkpoint[0],
                    "step_id": last.checkpoint[1],
                }
            request_id = last.data.get("request_id")
            if request_id:
                turn.reply_data["request_id"] = request_id


class RecordStage:
    name = "record"

    def __call__(self, turn: Turn) -> None:
        if turn.reply is None or turn.agent is None:
            return
        turn.recorded = turn.store.append_message(
            turn.conversation_id,
            turn.reply,
            role="assistant",
            author=turn.agent.name,
            data=turn.reply_data or None,
        )


def default_pipeline(runtime: AgentRuntime, intercepts: Iterable[Intercept] = ()) -> Pipeline:
    return Pipeline(
        [
            InterceptStage(intercepts),
            ClassifyStage(),
            RouteStage(runtime),
            PlanStage(),
            ExecuteStage(runtime),
            CurateStage(),
            RecordStage(),
        ]
    )
