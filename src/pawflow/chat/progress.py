"""Agent progress, streamed to the conversation as durable ``agent_progress`` events."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pawflow.agent.loop import (
    LoopEvent,
    RunFinished,
    StepStarted,
    TextChunk,
    ToolFinished,
    ToolStarted,
)

if TYPE_CHECKING:
    from pawflow.store import Store

PROGRESS_EVENT = "agent_progress"
_TEXT_FLUSH = 240  # characters of streamed text per progress event


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
        self.store.announce(self.conversation_id, PROGRESS_EVENT, data)

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
