"""What the model did, kept with the conversation, and the conversation as the model reads it.

A turn's reply stores, in its ``data["transcript"]``, the messages its runs added: each
assistant message with the tool calls it made, and each tool result with its
``tool_call_id``. The next turn rebuilds the history from them, so the model sees what it
did, not only what it said.

A wakeup — the answer to a question an agent asked with a tool and ended its turn on —
reaches the model as the *result of that call* (matching ``tool_call_id``), e.g.
``{"status": "answered", "answer": "staging"}``. The call moves from where it was made to
where its answer arrived: its ``pending`` result is left out at the first place, and the call
and its answer appear together at the second, so that every call has exactly one result and
the answer is the latest thing the model reads. The wakeup's system line stays in the
conversation for people; the model never gets it (except for wakeups stored before calls were
kept, which carry no call). An approval's call is settled by the run itself, so its wakeup
adds nothing here.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pawflow.agent.models.base import ChatMessage, ToolCall
from pawflow.records import Message, Outcome

log = logging.getLogger("pawflow.chat")

TRANSCRIPT = "transcript"


def recorded(messages: Iterable[ChatMessage]) -> list[dict[str, Any]]:
    """The messages a run added, as a reply's ``data["transcript"]`` stores them."""
    return [message.to_dict() for message in messages]


def wakeup_result(data: Mapping[str, Any]) -> str:
    """What the asking call returns once the wakeup comes: its status, and the answer."""
    outcome = Outcome.of(data)
    result: dict[str, Any] = {"status": outcome.to_value()["status"]}
    if outcome.answered:
        result["answer"] = outcome.answer
    if outcome.status == "defaulted":  # no person answered: the on_expire policy did
        result["answered_via"] = outcome.answered_via
        result["note"] = (
            f"No one answered within {outcome.waited or 'the deadline'}; the default was applied."
        )
    return json.dumps(result, ensure_ascii=False)


def _asking_call(message: Message) -> ToolCall | None:
    """The call a wakeup's system line answers; None for any other message."""
    data = message.data or {}
    if message.role != "system" or "wakeup" not in data:
        return None
    raw = data.get("tool_call")
    if not isinstance(raw, dict):
        return None
    try:
        return ToolCall.from_dict(raw)
    except (KeyError, TypeError, ValueError):
        log.warning("wakeup message %s names an unreadable tool call", message.id)
        return None


def _transcript(message: Message) -> list[ChatMessage] | None:
    raw = (message.data or {}).get(TRANSCRIPT)
    if message.role != "assistant" or not isinstance(raw, list) or not raw:
        return None
    try:
        return [ChatMessage.from_dict(item) for item in raw]
    except (KeyError, TypeError, AttributeError, ValueError):
        log.warning("message %s has an unreadable transcript; its text stands for it", message.id)
        return None


def _calls_in(messages: Sequence[ChatMessage]) -> set[str]:
    return {call.id for m in messages if m.role == "assistant" for call in m.tool_calls}


def _without(messages: Sequence[ChatMessage], moved: set[str]) -> list[ChatMessage]:
    """The transcript with the moved calls (and their results) left out."""
    kept: list[ChatMessage] = []
    for message in messages:
        if message.role == "tool" and message.tool_call_id in moved:
            continue
        if message.role == "assistant" and any(c.id in moved for c in message.tool_calls):
            calls = tuple(c for c in message.tool_calls if c.id not in moved)
            if not calls and not message.content:
                continue
            message = ChatMessage("assistant", message.content, tool_calls=calls)
        kept.append(message)
    return kept


def model_messages(
    history: Sequence[Message], replacing: Mapping[str, str] | None = None
) -> list[ChatMessage]:
    """The conversation as the model reads it; notifications are not part of it.

    ``replacing`` gives other text for some messages (by id): a matched answer becomes its
    owner's task.
    """
    replacing = replacing or {}
    transcripts = {m.id: _transcript(m) for m in history}
    # Each wakeup that answers a call takes that call from the latest transcript before it.
    moved: dict[str, set[str]] = {}
    for index, message in enumerate(history):
        call = _asking_call(message)
        if call is None:
            continue
        for earlier in reversed(history[:index]):
            found = transcripts.get(earlier.id)
            if found is not None and call.id in _calls_in(found):
                moved.setdefault(earlier.id, set()).add(call.id)
                break
    result: list[ChatMessage] = []
    for message in history:
        if message.role not in ("user", "assistant", "system"):
            continue
        call = _asking_call(message)
        if call is not None:
            if (message.data or {}).get("purpose") != "approval":
                result.append(ChatMessage("assistant", None, tool_calls=(call,)))
                result.append(
                    ChatMessage("tool", wakeup_result(message.data or {}), tool_call_id=call.id)
                )
            continue
        found = transcripts.get(message.id)
        if found is not None:
            result.extend(_without(found, moved.get(message.id, set())))
            continue
        result.append(ChatMessage(message.role, replacing.get(message.id, message.content)))
    return result
