"""Request and response bodies of the actions, as the OpenAPI document describes them.

Request models refuse unknown fields, so a client can never set what only the server
decides (owner, status, timestamps, the requester). Contract rules (kinds, options,
response schemas, answers) are checked once, by the contract module, not here.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr

from pawflow.interactions import Kind

Id = Annotated[StrictStr, Field(min_length=1, max_length=200)]
Name = Annotated[StrictStr, Field(min_length=1, max_length=200)]
Status = Literal["pending", "answered", "cancelled", "expired"]
ConfirmationKind = Literal["confirm", "choice", "multi"]
Limit = Annotated[StrictInt, Field(ge=1, le=1000)]


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


class RequestRef(Body):
    request_id: Id


class Respond(Body):
    request_id: Id
    answer: Any = Field(description="The typed value for the request's kind.")


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
    model_config = ConfigDict(extra="forbid")


class OptionOut(Out):
    value: str
    label: str


class RequesterOut(BaseModel):
    model_config = ConfigDict(extra="allow")

    type: str
    name: str


class InteractionOut(Out):
    """The ``pawflow.user-interaction.v1`` record."""

    contract: Literal["pawflow.user-interaction.v1"]
    id: str
    kind: Kind
    title: str | None
    message: str
    options: list[OptionOut] | None
    response_schema: dict[str, Any]
    owner: str
    conversation_id: str
    requester: RequesterOut
    signal_id: str
    status: Status
    answer: Any
    answered_by: str | None
    answered_at: str | None
    created_at: str
    expires_at: str | None
    ui_surface: dict[str, Any] | None


class InteractionEnvelope(Out):
    interaction: InteractionOut


class InteractionPage(Out):
    interactions: list[InteractionOut]
    next_cursor: str | None


class ConversationOut(Out):
    id: str
    owner: str
    title: str
    created_at: str
    access: Literal["owner", "read", "write"]
    members: dict[str, Literal["read", "write"]]


class ConversationEnvelope(Out):
    conversation: ConversationOut


class ConversationList(Out):
    conversations: list[ConversationOut]


class MessageOut(Out):
    seq: int
    id: str
    conversation_id: str
    role: Literal["user", "assistant", "system", "notification"]
    author: str
    content: str
    data: dict[str, Any] | None
    created_at: str
    html: str | None = Field(
        default=None,
        description="Agents' and notifications' messages: the content as sanitized HTML.",
    )


class MessageEnvelope(Out):
    message: MessageOut


class History(Out):
    messages: list[MessageOut]


class FileOut(Out):
    id: str
    name: str
    size: int
    media_type: str
    sha256: str


class FileEnvelope(Out):
    file: FileOut


class SessionOut(Out):
    user: str
    via: Literal["token", "session"]
    csrf_token: str | None


class Health(Out):
    status: Literal["ok"]
