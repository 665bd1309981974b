"""What an agent parks on its question's signal, and reads back when it is woken.

An agent that asks (``request_confirmation``, or the approval of a tool call) parks a
continuation whose payload is an :class:`AgentWait`, kept as compact JSON. The chat
service's delivery handler reads it back with :meth:`AgentWait.decode` to write the agent's
wakeup; a payload that is not one is an :class:`~pawflow.errors.InvalidInput` naming what is
wrong, never a guess.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from pawflow.errors import FieldError, InvalidInput

WAIT_VERSION = 1
"""The version of the payload's shape (its ``v``)."""


class AgentWait(BaseModel):
    """An agent waiting for the answer to ``request_id``: who asked whom, in which
    conversation, what, and (``tool_call``) the call the answer settles."""

    model_config = ConfigDict(frozen=True)

    v: int = WAIT_VERSION
    purpose: Literal["confirmation", "approval"] = "confirmation"
    agent: str
    conversation_id: str
    user: str
    request_id: str
    signal_id: str | None = None
    question: str
    kind: str | None = None
    run_id: str | None = None
    tool_call: dict[str, Any] | None = None

    @property
    def source(self) -> str:
        """What the wakeup is a wakeup of: the request's signal."""
        return self.signal_id or f"confirmation:{self.request_id}"

    def encode(self) -> bytes:
        """The payload as it is parked (``tool_call`` only when there is one)."""
        kept = self.model_dump(mode="json")
        if self.tool_call is None:
            del kept["tool_call"]
        return json.dumps(kept).encode("utf-8")

    @classmethod
    def decode(cls, payload: bytes) -> AgentWait:
        """Read a parked payload; :class:`InvalidInput` names what makes it unreadable."""
        try:
            return cls.model_validate_json(payload)
        except ValidationError as exc:
            problems = [
                FieldError(".".join(str(part) for part in error["loc"]), error["msg"])
                for error in exc.errors()
            ]
            first = problems[0]
            message = f"not an agent's wait: {first.path or 'payload'}: {first.message}"
            raise InvalidInput(message, problems) from exc
