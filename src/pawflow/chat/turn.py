"""The turn: one user message or one agent wakeup, as the pipeline's stages fill it in."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

from pawflow.errors import LeaseLost
from pawflow.store import Unit

if TYPE_CHECKING:
    from pawflow.agent.checkpoints import CheckpointStore
    from pawflow.agent.loop import AgentLoop, ApprovedCall, RunResult
    from pawflow.agent.models.base import ChatMessage
    from pawflow.agent.resume import ResumeSeed
    from pawflow.agent.spec import AgentSpec
    from pawflow.chat.matching import Match
    from pawflow.chat.sessions import SessionContinuation, SessionRegistry
    from pawflow.records import Message
    from pawflow.store import Store, TurnKey, Wakeup
    from pawflow.store import Transaction as Tx


class AgentRuntime(Protocol):
    """What the stages need from whoever runs the agents (``ChatService``)."""

    store: Store
    sessions: SessionRegistry
    checkpoints: CheckpointStore

    def agent(self, name: str) -> AgentSpec | None: ...

    def assigned_agent(self, conversation_id: str) -> str | None: ...

    def loop_for(self, spec: AgentSpec) -> AgentLoop: ...


@dataclass
class Task:
    """One run of one agent, as ``plan`` prepares it for ``execute``."""

    agent: AgentSpec
    messages: list[ChatMessage]
    approved_calls: list[ApprovedCall] = field(default_factory=list)
    # A halted run to go on with, and the reply it hears.
    seed: ResumeSeed | None = None
    reply: str = ""


@dataclass
class Turn:
    store: Store
    conversation_id: str
    text: str
    user: str  # whom the agent acts for (and asks)
    kind: Literal["message", "wakeup"] = "message"
    message_id: str | None = None
    seq: int | None = None  # the message's place in the conversation
    wakeup: Wakeup | None = None
    intent: str | None = None
    pending: SessionContinuation | None = None  # what the session waited on as the turn began
    match: Match | None = None  # this message, taken as the answer to it
    agent: AgentSpec | None = None
    tasks: list[Task] = field(default_factory=list)
    results: list[RunResult] = field(default_factory=list)
    reply: str | None = None
    reply_data: dict[str, Any] = field(default_factory=dict)
    answered_by: str | None = None
    opened: SessionContinuation | None = None  # what the turn left the session waiting on
    recorded: Message | None = None
    done: bool = False
    trace: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # why a match was or was not made
    key: TurnKey | None = None  # the claim on the durable turn: its reply is written once
    on_stage: Callable[[str], None] | None = None  # told where the turn is, for inspection

    def stage(self, where: str) -> None:
        if self.on_stage is not None:
            self.on_stage(where)

    def post_reply(
        self, reply: str, *, author: str, data: dict[str, Any] | None = None
    ) -> Message | None:
        """Post the turn's reply: with a durable turn, together with its end (None: lost)."""
        with self.store.unit() as u:
            if self.key is None:
                return u.messages.append_message(
                    self.conversation_id, role="assistant", author=author, content=reply, data=data
                )
            _, message = u.turns.complete(self.key, reply=reply, author=author, data=data)
        return message

    def post_reply_in(
        self, tx: Tx, reply: str, *, author: str, data: dict[str, Any] | None = None
    ) -> Message:
        """Post the turn's reply in ``tx`` (a durable turn ends there too); raises
        ``LeaseLost`` when another process has taken the turn over, which undoes ``tx``."""
        u = Unit(tx, self.store.now)
        if self.key is None:
            return u.messages.append_message(
                self.conversation_id,
                role="assistant",
                author=author,
                content=reply,
                data=data,
            )
        ended, message = u.turns.complete(self.key, reply=reply, author=author, data=data)
        if not ended or message is None:
            raise LeaseLost(f"turn {self.key.turn_id} is no longer ours")
        return message

    @classmethod
    def for_message(cls, store: Store, message: Message) -> Turn:
        return cls(
            store=store,
            conversation_id=message.conversation_id,
            text=message.content,
            user=message.author,
            message_id=message.id,
            seq=message.seq,
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
