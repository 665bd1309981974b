"""The records the store hands out, and the one codec between them, rows and JSON.

Each record is a pydantic model: :meth:`Record.from_row` reads a database row (timestamps
in epoch milliseconds, JSON columns as text), ``model_dump(mode="json")`` (or
:meth:`Record.to_dict`) gives its contract JSON, and ``model_validate`` reads that JSON
back. The HTTP API uses the records themselves as its response models, so the OpenAPI
document describes exactly what is sent.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime
from typing import Annotated, Any, Literal, Self, TypeVar, get_args

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainSerializer,
    ValidationInfo,
    WithJsonSchema,
)
from typing_extensions import TypedDict  # pydantic reads only this one before 3.12

from pawflow.clock import from_millis, iso
from pawflow.interactions import CONTRACT, Kind

Status = Literal["pending", "answered", "cancelled", "expired"]
OutcomeStatus = Literal["answered", "defaulted", "cancelled", "expired"]
Access = Literal["owner", "write", "read"]

ClientChannel = Literal["button", "cli", "api", "mcp-app"]
"""The channels a client may declare when it answers over HTTP (``answered_via``)."""
CLIENT_CHANNELS: tuple[str, ...] = get_args(ClientChannel)
CHANNELS: tuple[str, ...] = (
    "chat",
    "mcp",
    "agui",
    "a2a",
    "link",
    "email",
    "slack",
    *CLIENT_CHANNELS,
)
"""Where an answer can come from: a typed ``chat`` message, a block's ``button`` (web chat,
terminal, editor), ``cli`` (``pawflow answer``), ``mcp``, PawFlow's MCP App in an agent
host (``mcp-app``), an AG-UI resume (``agui``), an A2A message (``a2a``), an answer ``link``
(a mail's buttons among them), a reply by ``email``, ``slack``, or a plain ``api`` call. Only
the client channels may be claimed by a client (``pawflow mcp`` claims ``mcp-app`` for the
app it relays); the others are the server's own."""

_T = TypeVar("_T")
_FROM_ROW = "from_row"


def _from_millis(value: Any) -> Any:
    """Rows keep moments as epoch milliseconds; JSON as ISO-8601 text (left to pydantic)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return from_millis(value)
    return value


def _from_json_text(value: Any, info: ValidationInfo) -> Any:
    """A JSON column's text, decoded, when reading a row (a text answer stays text else)."""
    if isinstance(value, str) and isinstance(info.context, dict) and info.context.get(_FROM_ROW):
        return json.loads(value)
    return value


Timestamp = Annotated[
    datetime,
    BeforeValidator(_from_millis),
    PlainSerializer(iso, return_type=str, when_used="json"),
    WithJsonSchema({"type": "string", "format": "date-time"}, mode="serialization"),
]
"""A moment: milliseconds in a row, ``2026-01-31T09:00:00.000Z`` in JSON."""

JsonColumn = Annotated[_T, BeforeValidator(_from_json_text)]
"""A value a row keeps as JSON text."""


class Record(BaseModel):
    """Base of the records: immutable, and every field present in their JSON."""

    model_config = ConfigDict(frozen=True, json_schema_serialization_defaults_required=True)

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> Self:
        """The record of a database row (columns named as the fields; others ignored)."""
        return cls.model_validate(dict(row), context={_FROM_ROW: True})

    def to_dict(self) -> dict[str, Any]:
        """The record's contract JSON, as a dict."""
        return self.model_dump(mode="json")


class Requester(BaseModel):
    """Who resumes on the answer: ``{type: agent|flow|api, name, …}``."""

    model_config = ConfigDict(extra="allow", frozen=True)

    type: Literal["agent", "flow", "api"] = "api"
    name: str = "api"


class OptionItem(TypedDict):
    """One option a ``choice``/``multi`` request offers, as the record carries it."""

    value: str
    label: str


class Interaction(Record):
    """A request for input: the ``pawflow.user-interaction.v1`` record."""

    contract: Literal["pawflow.user-interaction.v1"] = CONTRACT
    id: str
    kind: Kind
    title: str | None = None
    message: str
    options: JsonColumn[list[OptionItem] | None] = None
    response_schema: JsonColumn[dict[str, Any]]
    owner: str
    conversation_id: str
    requester: JsonColumn[Requester]
    signal_id: str
    status: Status
    answer: JsonColumn[Any] = None
    answered_by: str | None = None
    answered_at: Timestamp | None = None
    answered_via: str | None = None
    """The channel the answer came from (one of :data:`CHANNELS`); None unless answered."""
    answered_seq: int | None = None
    """For an answer typed in the chat: the ``seq`` of that message."""
    created_at: Timestamp
    expires_at: Timestamp | None = None
    ui_surface: JsonColumn[dict[str, Any] | None] = None
    contract_version: int = Field(default=1, exclude=True)
    """The contract version the row was written under (not part of the JSON)."""

    @property
    def pending(self) -> bool:
        return self.status == "pending"


class Conversation(Record):
    """A conversation as one user sees it: their ``access`` and the other members."""

    id: str
    owner: str
    title: str
    created_at: Timestamp
    access: Access = "owner"
    members: dict[str, Literal["read", "write"]] = Field(default_factory=dict)


class FileRef(Record):
    """An upload, as a ``file`` answer refers to it."""

    id: str
    name: str
    size: int
    media_type: str
    sha256: str


class Event(Record):
    """One entry of a user's durable event log, replayable by ``seq``."""

    seq: int
    type: str
    conversation_id: str | None
    data: JsonColumn[dict[str, Any]]
    created_at: Timestamp


class Message(Record):
    """One entry of a conversation's history."""

    seq: int
    id: str
    conversation_id: str
    role: Literal["user", "assistant", "system", "notification"]
    author: str
    content: str
    data: JsonColumn[dict[str, Any] | None] = None
    created_at: Timestamp


class ApprovalRule(Record):
    """An "always allow": ``agent`` may call ``tool`` with ``arguments`` without asking, in
    one conversation (``scope`` conversation) or wherever it acts for ``created_by``."""

    id: str
    agent: str
    tool: str
    arguments: JsonColumn[dict[str, Any]]
    scope: Literal["conversation", "agent"]
    conversation_id: str | None = None
    created_by: str
    request_id: str | None = None
    created_at: Timestamp
    revoked_at: Timestamp | None = None
    revoked_by: str | None = None


class ToolExecution(Record):
    """The arguments an approved tool call was run with, under its approval request."""

    request_id: str
    tool: str
    arguments: JsonColumn[dict[str, Any]]
    run_id: str | None = None
    executed_at: Timestamp


DEFAULTED_VIA = "policy:on_expire"
"""``answered_via`` of an answer the request's ``on_expire`` policy gave (``defaulted``)."""


class Outcome(Record):
    """How a question ended, as what waited on it reads it: ``answered`` by a person,
    ``defaulted`` (its ``on_expire`` policy answered), ``cancelled`` or ``expired``.

    The store makes it where an answer, a cancel or an expiry resolves the wait, and fires
    the request's signal with :meth:`to_value` — ``{"status", "answer"}``, and for a default
    ``answered_via`` and ``waited`` (how long it waited, in words) — the JSON every
    requester has always read. :meth:`of` reads it back from a signal's value: who answered
    and when are known only to the record the store made (None when read from a value,
    except ``at``, the moment the signal fired, when given).
    """

    status: OutcomeStatus
    answer: Any = None
    answered_by: str | None = None
    answered_via: str | None = None
    at: Timestamp | None = None
    waited: str | None = None

    @property
    def answered(self) -> bool:
        """Whether an answer was given: by a person, or by the ``on_expire`` policy."""
        return self.status in ("answered", "defaulted")

    @property
    def unanswered(self) -> Literal["cancelled", "expired"] | None:
        """``cancelled`` or ``expired`` when nobody answered; None for an answer."""
        if self.status == "cancelled" or self.status == "expired":
            return self.status
        return None

    def to_value(self) -> dict[str, Any]:
        """The value the request's signal fires with (the shape on the wire)."""
        value: dict[str, Any] = {
            "status": "answered" if self.status == "defaulted" else self.status,
            "answer": self.answer if self.answered else None,
        }
        if self.status == "defaulted":
            value.update(answered_via=DEFAULTED_VIA, waited=self.waited)
        return value

    @classmethod
    def of(
        cls, value: Any, *, resolution: str | None = "signaled", at: datetime | None = None
    ) -> Outcome:
        """Read a signal's ``value`` (or a wakeup's data, which carries the same keys).

        ``resolution`` is how the wait resolved (a continuation's ``outcome``): a wait that
        timed out reads as ``expired``, one withdrawn as ``cancelled``; a value that is not
        an interaction's reads as ``expired``.
        """
        if resolution not in (None, "signaled"):
            return cls(status="cancelled" if resolution == "cancelled" else "expired", at=at)
        found = value if isinstance(value, Mapping) else {}
        status = found.get("status")
        if status == "answered":
            via = found.get("answered_via")
            if via == DEFAULTED_VIA:
                waited = found.get("waited")
                return cls(
                    status="defaulted",
                    answer=found.get("answer"),
                    answered_via=via,
                    at=at,
                    waited=waited if isinstance(waited, str) else None,
                )
            return cls(
                status="answered",
                answer=found.get("answer"),
                answered_via=via if isinstance(via, str) else None,
                at=at,
            )
        return cls(status="cancelled" if status == "cancelled" else "expired", at=at)
