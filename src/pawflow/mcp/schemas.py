"""The MCP tools' arguments and results, as models built from the action API's own.

Every tool's JSON Schema is generated from these models, and they reuse the field
definitions of :mod:`pawflow.server.models`: a constraint changed there changes here.
Only what MCP adds is declared anew: where the question goes when no conversation is
named, how long to wait, and the answer link.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Literal

import mcp_types as types
from pydantic import BaseModel, Field, StrictInt, create_model

from pawflow.records import Status
from pawflow.server import models as m

MAX_WAIT = 120
"""The longest a tool call waits for an answer, in seconds (R-5.2)."""

WaitSeconds = Annotated[
    StrictInt,
    Field(
        ge=0,
        le=MAX_WAIT,
        description=f"Seconds to wait for an answer before returning pending (0-{MAX_WAIT}).",
    ),
]
ConversationRef = Annotated[
    m.Id | None,
    Field(description="The conversation to ask in; absent: this client's own conversation."),
]


def _fields(model: type[BaseModel], *names: str) -> dict[str, Any]:
    """``create_model`` definitions of ``model``'s fields, constraints included."""
    found = model.model_fields
    return {name: (found[name].annotation, found[name]) for name in names}


class RequestUserInput(m.RequestInteraction):
    """Ask the person something of any kind and get a durable request back."""

    conversation_id: ConversationRef = None  # type: ignore[assignment]
    wait_seconds: WaitSeconds = 0


RequestConfirmation: type[m.Body] = create_model(
    "RequestConfirmation",
    __base__=m.Body,
    __doc__="Ask the person to confirm, or to pick one or several options.",
    message=_fields(m.RequestInteraction, "message")["message"],
    mode=(m.ConfirmationKind, Field(default="confirm", description="confirm, choice or multi")),
    **_fields(m.RequestInteraction, "options", "title", "expires_in", "idempotency_key"),
    conversation_id=(ConversationRef, None),
    wait_seconds=(WaitSeconds, 0),
)


class PendingList(m.ListInteractions):
    """The caller's requests, pending ones unless another status is asked for."""

    status: Status | None = "pending"


class WaitForAnswer(m.RequestRef):
    seconds: WaitSeconds = 60


class FieldErrorOut(m.Out):
    path: str
    message: str


class InteractionResult(m.InteractionEnvelope):
    """One request, where the person can answer it, and why an answer was refused."""

    answer_url: str = Field(description="Where the person can answer it (the web chat).")
    errors: list[FieldErrorOut] | None = Field(
        default=None, description="Field errors of the last answer refused, if any."
    )
    elicitation: Literal["decline", "cancel"] | None = Field(
        default=None,
        description="The person declined (decline) or dismissed (cancel) the question asked in "
        "the client; the request stays pending.",
    )


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    arguments: type[BaseModel]
    result: type[BaseModel]

    def tool(self) -> types.Tool:
        return types.Tool(
            name=self.name,
            description=self.description,
            input_schema=self.arguments.model_json_schema(),
            output_schema=self.result.model_json_schema(),
        )


TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "request_confirmation",
        "Ask the person to confirm (mode confirm), pick one option (choice) or several (multi). "
        "Returns the request, pending unless the answer came within wait_seconds; the answer "
        "can come days later: check with get_interaction or wait_for_answer.",
        RequestConfirmation,
        InteractionResult,
    ),
    ToolSpec(
        "request_user_input",
        "Ask the person for any kind of input: text, multiline, integer, decimal, date, "
        "datetime, file, form (with a response_schema), or confirm/choice/multi. Returns the "
        "request, pending unless the answer came within wait_seconds.",
        RequestUserInput,
        InteractionResult,
    ),
    ToolSpec(
        "get_interaction",
        "Read one of your requests: its status and, once answered, the typed answer.",
        m.RequestRef,
        InteractionResult,
    ),
    ToolSpec(
        "list_interactions",
        "List your requests, the pending ones by default, a page at a time.",
        PendingList,
        m.InteractionPage,
    ),
    ToolSpec(
        "cancel_interaction",
        "Withdraw a pending request; whoever waits on it learns it was cancelled.",
        m.RequestRef,
        InteractionResult,
    ),
    ToolSpec(
        "wait_for_answer",
        f"Wait up to `seconds` (at most {MAX_WAIT}) for a request to be answered, cancelled or "
        "to expire; returns it either way.",
        WaitForAnswer,
        InteractionResult,
    ),
)
TOOLS_BY_NAME = {spec.name: spec for spec in TOOLS}
