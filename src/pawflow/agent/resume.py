"""The one decoding of a checkpoint into a resume seed.

A run halted on ``ask_user`` is resumed by the next message of its session: the checkpoint
it wrote is decoded here into a :class:`ResumeSeed` (which agent, which run, at which step,
the conversation the model had so far, and the question it asked), and the seed turns the
user's reply into the observation of the paused step. Every entry point that resumes or
shows a checkpoint — the chat pipeline, ``pawflow run inspect`` — goes through
:func:`decode`; a checkpoint it cannot read is not resumed, and the reply is then handled as
a fresh turn.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from pawflow.agent.loop import RunRequest
from pawflow.agent.models.base import ChatMessage
from pawflow.agent.tools import AWAITING_USER_INPUT, ToolContext
from pawflow.errors import UndecodableCheckpoint as UndecodableCheckpoint

if TYPE_CHECKING:
    from pawflow.agent.checkpoints import Checkpoint, CheckpointStore
    from pawflow.agent.loop import RunRequest

log = logging.getLogger("pawflow.agent.resume")

PAYLOAD_VERSION = 1
ASK_TOOL = "ask_user"
OBSERVATION = (
    "Asked the user: {question}\n"
    "User answered: {reply}\n"
    "If that reply does not answer the question, abandon the previous task and address the"
    " reply instead."
)


@dataclass(frozen=True)
class ResumeSeed:
    """Everything needed to go on with a halted run at its next iteration."""

    agent: str
    run_id: str
    step_id: str
    step: int
    halt_reason: str
    messages: tuple[ChatMessage, ...]
    question: str | None
    # The ask_user call whose observation the reply becomes (None: the run halted otherwise).
    call_id: str | None
    session_id: str | None
    created_at: datetime
    expires_at: datetime

    @property
    def awaits_user(self) -> bool:
        return self.halt_reason == AWAITING_USER_INPUT and self.call_id is not None

    def observation(self, reply: str) -> str:
        return OBSERVATION.format(
            question=self.question or "(the question is not known)", reply=reply
        )

    def messages_with_reply(self, reply: str) -> list[ChatMessage]:
        """The run's conversation with the reply injected as the paused step's observation."""
        text = self.observation(reply)
        messages = list(self.messages)
        if self.call_id is not None:
            for index, message in enumerate(messages):
                if message.role == "tool" and message.tool_call_id == self.call_id:
                    messages[index] = ChatMessage("tool", text, tool_call_id=self.call_id)
                    return messages
        # A run that halted for another reason hears the reply as a user message.
        messages.append(ChatMessage("user", text))
        return messages

    def request(self, reply: str, context: ToolContext) -> RunRequest:
        """The run request that goes on with this run, the reply heard."""

        return RunRequest(
            agent=self.agent,
            messages=self.messages_with_reply(reply),
            context=context,
            run_id=self.run_id,
            start_step=self.step,
        )


def _messages(raw: Any) -> tuple[ChatMessage, ...]:
    if not isinstance(raw, list) or not raw:
        raise UndecodableCheckpoint("the checkpoint holds no messages")
    try:
        return tuple(ChatMessage.from_dict(item) for item in raw)
    except (KeyError, TypeError, AttributeError) as exc:
        raise UndecodableCheckpoint(f"a message of the checkpoint is unreadable: {exc}") from exc


def _asked(messages: Sequence[ChatMessage]) -> tuple[str | None, str | None]:
    """The last ask_user call of the run: its id and its question."""
    for message in reversed(messages):
        if message.role != "assistant" or not message.tool_calls:
            continue
        for call in message.tool_calls:
            if call.name == ASK_TOOL:
                try:
                    question = call.parsed_arguments().get("question")
                except ValueError:
                    question = None
                return call.id, question if isinstance(question, str) else None
        return None, None  # the last step called other tools
    return None, None


def decode(checkpoint: Checkpoint) -> ResumeSeed:
    """The seed of a checkpoint; :class:`UndecodableCheckpoint` when it cannot be resumed."""
    payload = checkpoint.payload
    if not isinstance(payload, dict) or payload.get("v") != PAYLOAD_VERSION:
        raise UndecodableCheckpoint("unknown checkpoint payload version")
    step = payload.get("step")
    if not isinstance(step, int) or isinstance(step, bool) or step < 1:
        raise UndecodableCheckpoint("the checkpoint has no step number")
    if payload.get("run_id") not in (None, checkpoint.run_id):
        raise UndecodableCheckpoint("the checkpoint belongs to another run")
    messages = _messages(payload.get("messages"))
    call_id, question = _asked(messages)
    data = payload.get("data")
    if isinstance(data, dict) and isinstance(data.get("question"), str):
        question = data["question"]
    return ResumeSeed(
        agent=checkpoint.agent,
        run_id=checkpoint.run_id,
        step_id=checkpoint.step_id,
        step=step,
        halt_reason=checkpoint.halt_reason,
        messages=messages,
        question=question,
        call_id=call_id if checkpoint.halt_reason == AWAITING_USER_INPUT else None,
        session_id=checkpoint.session_id,
        created_at=checkpoint.created_at,
        expires_at=checkpoint.expires_at,
    )


def load_seed(checkpoints: CheckpointStore, run_id: str, step_id: str) -> ResumeSeed | None:
    """The seed of a live checkpoint; None when it expired, was swept, or cannot be decoded."""
    checkpoint = checkpoints.get(run_id, step_id)
    if checkpoint is None:
        return None
    try:
        return decode(checkpoint)
    except UndecodableCheckpoint as exc:
        log.warning("checkpoint %s/%s cannot be resumed: %s", run_id, step_id, exc)
        return None
