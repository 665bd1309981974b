"""Request and response bodies of the actions, as the OpenAPI document describes them.

Responses wrap the records themselves (``{"interaction": …}``): their JSON is the records'.

Request models refuse unknown fields, so a client can never set what only the server
decides (owner, status, timestamps, the requester). Contract rules (kinds, options,
response schemas, answers) are checked once, by the contract module, not here.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr

from pawflow.interactions import Kind
from pawflow.records import ClientChannel, Conversation, FileRef, Interaction, Message, Status

Id = Annotated[StrictStr, Field(min_length=1, max_length=200)]
Name = Annotated[StrictStr, Field(min_length=1, max_length=200)]
ConfirmationKind = Literal["confirm", "choice", "multi"]
Limit = Annotated[StrictInt, Field(ge=1, le=1000)]
IdempotencyKey = Annotated[
    StrictStr,
    Field(
        min_length=1,
        max_length=255,
        pattern=r"^[^\x00-\x1f\x7f]+$",
        description=(
            "Asking again with a key you used before returns the first request instead of"
            " asking twice; the same key with another question is a 409."
        ),
    ),
]


class Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


# -- requests --------------------------------------------------------------------------------


class OptionIn(Body):
    value: StrictStr
    label: StrictStr | None = None


class RequestInteraction(Body):
    """Ask the caller (or whoever answers in the conversation) something."""

    conversation_id: Id
    kind: Kind
    message: Annotated[StrictStr, Field(min_length=1, max_length=20_000)]
    title: Annotated[StrictStr, Field(max_length=500)] | None = None
    options: Annotated[list[StrictStr | OptionIn], Field(max_length=1000)] | None = None
    response_schema: dict[str, Any] | None = None
    expires_in: (
        Annotated[StrictStr, Field(max_length=40)]
        | Annotated[StrictInt, Field(ge=0, le=10**12)]
        | None
    ) = Field(default=None, description="90s, 5m, 12h, 3d, 2w, 1mo, 1y; 0 or absent: never")
    expires_at: Annotated[StrictStr, Field(max_length=60)] | None = Field(
        default=None, description="ISO-8601 with a timezone"
    )
    ui_surface: dict[str, Any] | None = None
    idempotency_key: IdempotencyKey | None = None


class RequestRef(Body):
    request_id: Id


class Respond(Body):
    request_id: Id
    answer: Any = Field(description="The typed value for the request's kind.")
    answered_via: ClientChannel = Field(
        default="api",
        description="Where the answer was given: a block's button (web chat, terminal,"
        " editor), the command line, or a plain API call. Kept on the record.",
    )


class ListInteractions(Body):
    status: Status | None = None
    conversation_id: Id | None = None
    kind: Kind | None = None
    limit: Limit = 100
    cursor: Annotated[StrictStr, Field(max_length=500)] | None = None


class ListConfirmations(ListInteractions):
    kind: ConfirmationKind | None = None  # type: ignore[assignment]


class CreateConversation(Body):
    title: Annotated[StrictStr, Field(max_length=500)] = ""


class ListConversations(Body):
    pass


class GetHistory(Body):
    conversation_id: Id
    after_seq: Annotated[StrictInt, Field(ge=0, le=2**62)] = 0
    limit: Annotated[StrictInt, Field(ge=1, le=500)] = 500


class SendMessage(Body):
    conversation_id: Id
    content: Annotated[StrictStr, Field(min_length=1, max_length=100_000)]


class ShareConversation(Body):
    conversation_id: Id
    user: Name
    access: Literal["read", "write"]


# -- responses -------------------------------------------------------------------------------


class Out(BaseModel):
    """A response: the records themselves (from :mod:`pawflow.records`) in an envelope."""

    model_config = ConfigDict(extra="forbid")


class InteractionEnvelope(Out):
    interaction: Interaction


class InteractionPage(Out):
    interactions: list[Interaction]
    next_cursor: str | None


class ConversationEnvelope(Out):
    conversation: Conversation


class ConversationList(Out):
    conversations: list[Conversation]


class MessageOut(Message):
    """A message as the API sends it: the record, and for agents' and notifications'
    messages the content rendered as sanitized HTML."""

    html: str | None = Field(
        default=None,
        description="Agents' and notifications' messages: the content as sanitized HTML.",
    )


class MessageEnvelope(Out):
    message: MessageOut


class History(Out):
    messages: list[MessageOut]


class FileEnvelope(Out):
    file: FileRef


class SessionOut(Out):
    user: str
    via: Literal["token", "session"]
    csrf_token: str | None


class Health(Out):
    status: Literal["ok"]
