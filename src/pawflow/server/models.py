"""Request and response bodies of the actions, as the OpenAPI document describes them.

Responses wrap the records themselves (``{"interaction": …}``): their JSON is the records'.

Request models refuse unknown fields, so a client can never set what only the server
decides (owner, status, timestamps, the requester). Contract rules (kinds, options,
response schemas, answers) are checked once, by the contract module, not here.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import TYPE_CHECKING, Annotated, Any, Literal, Union

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    GetJsonSchemaHandler,
    PlainValidator,
    StrictBool,
    StrictInt,
    StrictStr,
    field_validator,
)
from pydantic.json_schema import JsonSchemaValue, SkipJsonSchema
from pydantic_core import CoreSchema, PydanticCustomError
from typing_extensions import TypeAliasType

from pawflow.interactions import OPTION_KINDS, Kind
from pawflow.interactions.kinds import SCHEMA_KEYWORDS
from pawflow.interactions.outline import KEYWORD_VALUES, response_schema_outline
from pawflow.interactions.problems import NO_NUL, NOT_BLANK
from pawflow.interactions.surfaces import SURFACE_CONTRACT
from pawflow.records import ClientChannel, Conversation, FileRef, Interaction, Message, Status

# No string in a body may hold NUL (the body is refused with a 400 otherwise): every string
# the document describes says so (NO_NUL, NOT_BLANK).
MAX_SAFE_INTEGER = 2**53 - 1
NotifyChannel = Literal["email", "slack", "webhook", "apprise", "push"]
WEBHOOK_URL = r"^[Hh][Tt][Tt][Pp][Ss]?://[^\s/?#@\\\x00-\x1f\x7f]+([/?#][^\s\x00-\x1f\x7f]*)?$"
WebhookEvent = Literal[
    "interaction.created", "interaction.answered", "interaction.expired", "interaction.cancelled"
]
NotifyList = Annotated[
    list[NotifyChannel], Field(max_length=5, json_schema_extra={"uniqueItems": True})
]
"""The largest integer a JSON number carries exactly everywhere: a bound above it would
admit, compared as a double, numbers past it."""


def _whole_number(value: Any) -> Any:
    """A JSON number with no fraction (``856.0``) is an integer, as JSON Schema counts."""
    try:
        if isinstance(value, float | Decimal) and value % 1 == 0:
            return int(value)
    except ArithmeticError:  # not a finite number: refused as not an integer
        pass
    return value


WHOLE = BeforeValidator(_whole_number)
"""Put last in an ``Annotated`` integer (after its bounds): an integer, however the JSON
wrote it, never a string, a bool or a fraction."""
Text = Annotated[StrictStr, Field(pattern=NO_NUL)]
Id = Annotated[StrictStr, Field(min_length=1, max_length=200, pattern=NO_NUL)]
Name = Annotated[StrictStr, Field(min_length=1, max_length=200, pattern=NO_NUL)]
ConfirmationKind = Literal["confirm", "choice", "multi"]
Limit = Annotated[StrictInt, Field(ge=1, le=1000), WHOLE]
CURSOR = r"^(0|[1-9][0-9]{0,17})\.[^\x00]{1,200}$"
"""What a ``next_cursor`` looks like: a time and an id."""
Cursor = Annotated[
    StrictStr,
    Field(
        max_length=500,
        pattern=CURSOR,
        description="next_cursor of the page before: where this page starts",
    ),
]


class _KeysByName:
    """In the document, a JSON object's keys are described by ``propertyNames`` (pydantic
    would write ``patternProperties``, which lets keys that do not match through)."""

    def __get_pydantic_json_schema__(
        self, core_schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        schema = handler(core_schema)
        patterns = schema.pop("patternProperties", None)
        if patterns:
            [(pattern, value)] = patterns.items()
            schema["propertyNames"] = {"pattern": pattern}
            schema["additionalProperties"] = value
        return schema


if TYPE_CHECKING:  # mypy cannot follow a recursive alias written this way
    JsonValue = Any
else:
    JsonValue = TypeAliasType(
        "JsonValue",
        Union[  # noqa: UP007 - the alias names itself, in a string, which needs Union
            bool,
            int,
            float,
            Text,
            list["JsonValue"],
            Annotated[dict[Text, "JsonValue"], _KeysByName()],
            None,
        ],
    )
"""Any JSON value whose strings and keys hold no NUL."""


def _json_object(value: Any) -> Any:
    if not isinstance(value, dict):
        raise ValueError("expected an object")
    return value


JsonObject = Annotated[
    dict[str, Any],
    PlainValidator(
        _json_object, json_schema_input_type=Annotated[dict[Text, JsonValue], _KeysByName()]
    ),
]
"""A JSON object, as sent: the contract checks what is in it (the body's reading has
already refused NUL anywhere in it)."""


def _as_sent(value: Any) -> Any:
    return value


Answer = Annotated[Any, PlainValidator(_as_sent, json_schema_input_type=JsonValue)]
"""Any JSON value, kept exactly as sent (an answer's decimals are never rounded, nor turned
into numbers of a billion digits); the body's reading has already refused NUL in it."""


def in_words(error: Mapping[str, Any]) -> str:
    """A validation error's message, with the document's patterns said in words."""
    if error.get("type") == "string_pattern_mismatch":
        pattern = (error.get("ctx") or {}).get("pattern")
        words = PATTERNS_IN_WORDS.get(pattern) if isinstance(pattern, str) else None
        if words is not None:
            return words
    return str(error.get("msg", "invalid value"))


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


OptionValue = Annotated[StrictStr, Field(min_length=1, max_length=256, pattern=NOT_BLANK)]


class OptionIn(Body):
    value: OptionValue
    label: Annotated[StrictStr, Field(min_length=1, max_length=1000, pattern=NOT_BLANK)] | None = (
        None
    )


_SPACE = r"[ \t\n\r]*"
DURATION = (
    rf"^{_SPACE}(0+|[0-9]{{1,11}}{_SPACE}s|[0-9]{{1,9}}{_SPACE}m|[0-9]{{1,7}}{_SPACE}h"
    rf"|[0-9]{{1,6}}{_SPACE}d|[0-9]{{1,5}}{_SPACE}w|[0-9]{{1,4}}{_SPACE}mo"
    rf"|[0-9]{{1,3}}{_SPACE}y){_SPACE}$"
)
"""A count and a unit, small enough that it ends before the year 9999; 0 alone: never."""
POSITIVE_DURATION = (
    rf"^{_SPACE}(0*[1-9][0-9]{{0,10}}{_SPACE}s|0*[1-9][0-9]{{0,8}}{_SPACE}m"
    rf"|0*[1-9][0-9]{{0,6}}{_SPACE}h|0*[1-9][0-9]{{0,5}}{_SPACE}d|0*[1-9][0-9]{{0,4}}{_SPACE}w"
    rf"|0*[1-9][0-9]{{0,3}}{_SPACE}mo|0*[1-9][0-9]{{0,2}}{_SPACE}y){_SPACE}$"
)
"""A duration above zero: a count and a unit."""
DEADLINE = (
    r"^([0-8][0-9]{3}|9[0-8][0-9]{2}|99[0-8][0-9]|999[0-8])-[0-9]{2}-[0-9]{2}[Tt ]"
    r"[0-9]{2}:[0-9]{2}(:[0-9]{2}(\.[0-9]{1,6})?)?([Zz]|[+-][0-9]{2}:[0-9]{2})\n?$"
)
"""An ISO-8601 date and time with a timezone, before the year 9999, to the microsecond."""
PATTERNS_IN_WORDS = {
    NO_NUL: "must not contain NUL characters",
    NOT_BLANK: "must hold more than spaces, and no NUL characters",
    CURSOR: "not a cursor: give the next_cursor of the page before",
    DURATION: "expected a duration such as 90s, 5m, 12h, 3d, 2w, 1mo or 1y (0: never)",
    POSITIVE_DURATION: "expected a duration above 0, such as 90s, 5m, 12h, 3d, 2w or 1mo",
    DEADLINE: "expected a date and time with a timezone, such as 2026-12-01T09:00:00Z",
}
_NULL = {"type": "null"}


def _kind_rules(kind: Kind) -> dict[str, Any]:
    """What a request of ``kind`` asks of its options and response_schema."""
    outline = response_schema_outline(kind)
    given = {"anyOf": [_NULL, outline]}
    if kind in OPTION_KINDS:
        listed = {"type": "array", "minItems": 1}
        in_schema = (
            {"required": ["enum"]}
            if kind is Kind.CHOICE
            else {"required": ["items"], "properties": {"items": {"required": ["enum"]}}}
        )
        return {
            "properties": {"kind": {"const": kind.value}},
            "anyOf": [
                {
                    "required": ["options"],
                    "properties": {"options": listed, "response_schema": given},
                },
                {
                    "required": ["response_schema"],
                    "properties": {
                        "options": _NULL,
                        "response_schema": {"allOf": [outline, in_schema]},
                    },
                },
            ],
        }
    rules: dict[str, Any] = {
        "properties": {
            "kind": {"const": kind.value},
            "options": {"anyOf": [_NULL, {"type": "array", "maxItems": 0}]},
            "response_schema": outline if kind is Kind.FORM else given,
        }
    }
    if kind is Kind.FORM:
        rules["required"] = ["response_schema"]
    return rules


REQUEST_RULES: dict[str, Any] = {
    "allOf": [
        {
            "description": "required_approvals is for confirm requests with assignees.",
            "anyOf": [
                {"properties": {"required_approvals": _NULL}},
                {"not": {"required": ["required_approvals"]}},
                {
                    "required": ["assignees"],
                    "properties": {"kind": {"const": "confirm"}, "assignees": {"type": "array"}},
                },
            ],
        },
        {
            "description": "A deadline is expires_in or expires_at, not both.",
            "not": {
                "required": ["expires_in", "expires_at"],
                "properties": {"expires_in": {"not": _NULL}, "expires_at": {"not": _NULL}},
            },
        },
        {
            "description": "choice and multi list their options, here or as response_schema's"
            " enum; other kinds take none; a form is its response_schema; a response_schema"
            " uses the keywords and type of the kind.",
            "anyOf": [_kind_rules(kind) for kind in Kind],
        },
    ]
}
"""What the contract asks of a request's fields together, as JSON Schema. The rules of a
``response_schema`` and a ``ui_surface`` themselves (the schema subset, bounds that agree,
fields that exist, a surface that fits the kind) are the contract's (docs/contract.md): a
request that breaks one is a 422 naming each problem."""


Duration = Annotated[StrictStr, Field(max_length=40, pattern=POSITIVE_DURATION)]
Assignee = Annotated[
    StrictStr,
    Field(
        min_length=1,
        max_length=200,
        pattern=NOT_BLANK,
        description="A user's name, or group:NAME for the members of a group.",
    ),
]
Assignees = Annotated[list[Assignee], Field(min_length=1, max_length=100)]
GROUP_NAME = r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,99}$"


class EscalationStep(Body):
    """After a time since the request, add assignees (and tell them)."""

    after: Duration
    to: Assignees


def _on_expire_schema(schema: dict[str, Any]) -> None:
    """``on_expire``'s three shapes, each with exactly its keys; the answer any JSON value."""
    [value] = [s for s in schema.pop("anyOf") if s.get("type") != "null"]
    schema["anyOf"] = [
        {"const": "cancel"},
        {
            "type": "object",
            "required": ["cancel"],
            "properties": {"cancel": {"const": True}},
            "additionalProperties": False,
        },
        {
            "type": "object",
            "required": ["answer"],
            "properties": {"answer": value},
            "additionalProperties": False,
        },
        {
            "type": "object",
            "required": ["extend"],
            "properties": {
                "extend": {"type": "string", "maxLength": 40, "pattern": POSITIVE_DURATION},
                "escalate": {
                    "type": "array",
                    "minItems": 1,
                    "maxItems": 100,
                    "items": {
                        "type": "string",
                        "minLength": 1,
                        "maxLength": 200,
                        "pattern": NOT_BLANK,
                    },
                },
            },
            "additionalProperties": False,
        },
        {"type": "null"},
    ]


POLICY_FIELDS = (
    "assignees",
    "requester_may_answer",
    "reassign_to",
    "claim_for",
    "required_approvals",
    "reject",
    "remind_every",
    "escalate",
    "on_expire",
)
"""The fields of ``request_interaction`` that make its policy (docs/governance.md)."""


class RequestInteraction(Body):
    """Ask the caller (or whoever answers in the conversation) something."""

    model_config = ConfigDict(extra="forbid", json_schema_extra=REQUEST_RULES)

    conversation_id: Id
    kind: Kind
    message: Annotated[StrictStr, Field(min_length=1, max_length=20_000, pattern=NOT_BLANK)]
    title: Annotated[StrictStr, Field(max_length=500, pattern=NO_NUL)] | None = None
    options: (
        Annotated[
            list[OptionValue | OptionIn],
            Field(max_length=1000, json_schema_extra={"uniqueItems": True}),
        ]
        | None
    ) = None
    response_schema: JsonObject | None = Field(
        default=None,
        description="The answer's JSON Schema, in the contract's subset (docs/contract.md):"
        " which keywords a kind takes, bounds that agree, form fields that exist.",
        json_schema_extra={
            "propertyNames": {"enum": list(SCHEMA_KEYWORDS)},
            "properties": KEYWORD_VALUES,
        },
    )
    expires_in: (
        Annotated[StrictStr, Field(max_length=40, pattern=DURATION)]
        | Annotated[StrictInt, Field(ge=0, le=10**11), WHOLE]
        | None
    ) = Field(default=None, description="90s, 5m, 12h, 3d, 2w, 1mo, 1y; 0 or absent: never")
    expires_at: (
        Annotated[
            StrictStr,
            Field(max_length=60, pattern=DEADLINE, json_schema_extra={"format": "date-time"}),
        ]
        | None
    ) = Field(default=None, description="ISO-8601 with a timezone; a moment already past is a 409")
    ui_surface: JsonObject | None = Field(
        default=None,
        description="A pawflow.ui-surface.v1 surface (docs/contract.md): its fallback is the"
        " request's kind, and a table or card fits that kind and its options.",
        json_schema_extra={
            "required": ["contract", "type", "fallback"],
            "properties": {
                "contract": {"const": SURFACE_CONTRACT},
                "type": {"type": "string", "minLength": 1, "maxLength": 40, "pattern": NO_NUL},
                "fallback": {"enum": [kind.value for kind in Kind]},
            },
        },
    )
    idempotency_key: IdempotencyKey | None = None
    notify: NotifyList | None = Field(
        default=None,
        description="The channels to notify of this request ([]: none); absent: the"
        " owner's own (set_notifications).",
    )

    assignees: Assignees | None = Field(
        default=None,
        description="Who may answer: users and group:NAME entries (docs/governance.md);"
        " absent: the requester and the conversation's writers.",
    )
    requester_may_answer: StrictBool | None = Field(
        default=None, description="false: the requester may not answer (no self-approval)."
    )
    reassign_to: Assignees | None = Field(
        default=None, description="Whom an assignee may hand the request to, besides them."
    )
    claim_for: Duration | None = Field(default=None, description="How long a claim lasts (1h).")
    required_approvals: Annotated[StrictInt, Field(ge=1, le=100), WHOLE] | None = Field(
        default=None, description="confirm: this many distinct assignees' yes approve it."
    )
    reject: Literal["first", "majority"] | None = Field(
        default=None, description="With required_approvals: the first no rejects, or a majority."
    )
    remind_every: Duration | None = Field(
        default=None, description="Remind the assignees this often while it waits."
    )
    escalate: Annotated[list[EscalationStep], Field(min_length=1, max_length=20)] | None = Field(
        default=None, description="Steps that add assignees as time passes since the request."
    )
    on_expire: Answer | None = Field(
        default=None,
        description="At the deadline: cancel, {answer: VALUE} (checked now against the"
        " request, which needs a deadline) or {escalate: [...], extend: DURATION}.",
        json_schema_extra=_on_expire_schema,
    )
    # Store.request_interaction takes policy={...}; over HTTP and MCP its fields sit at the
    # top of the body. A nested "policy" is refused with where they go (never in the schema).
    nested_policy: SkipJsonSchema[Any] = Field(
        default=None, alias="policy", exclude=True, repr=False
    )

    @field_validator("nested_policy")
    @classmethod
    def _policy_fields_at_the_top(cls, value: Any) -> Any:
        raise PydanticCustomError(
            "policy_nested",
            "the policy's fields go at the top of the body, beside kind and message, not"
            " under policy: {fields} (docs/governance.md)",
            {"fields": ", ".join(POLICY_FIELDS)},
        )

    def policy(self) -> dict[str, Any]:
        """The policy fields that were given, as the store reads them."""
        found = {name: getattr(self, name) for name in POLICY_FIELDS}
        if self.escalate is not None:
            found["escalate"] = [step.model_dump(exclude_none=True) for step in self.escalate]
        return {name: value for name, value in found.items() if value is not None}


class RequestRef(Body):
    request_id: Id


class Respond(Body):
    request_id: Id
    answer: Answer = Field(description="The typed value for the request's kind.")
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
    cursor: Cursor | None = None


class ListConfirmations(ListInteractions):
    kind: ConfirmationKind | None = None  # type: ignore[assignment]


class CreateConversation(Body):
    title: Annotated[StrictStr, Field(max_length=500, pattern=NO_NUL)] = ""


class ListConversations(Body):
    pass


class GetHistory(Body):
    conversation_id: Id
    after_seq: Annotated[StrictInt, Field(ge=0, le=MAX_SAFE_INTEGER), WHOLE] = 0
    limit: Annotated[StrictInt, Field(ge=1, le=500), WHOLE] = 500


class SendMessage(Body):
    conversation_id: Id
    content: Annotated[StrictStr, Field(min_length=1, max_length=100_000, pattern=NO_NUL)]


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


class Delivery(Out):
    """One notification of a request: by which channel, to whom, and how it went."""

    id: str
    channel: str
    recipient: str
    status: Literal["queued", "sent", "failed", "skipped"]
    attempts: int
    error: str | None
    created_at: str
    sent_at: str | None
    updated: bool = Field(
        default=False,
        description="Whether the sent copy was updated once the request was settled (Slack"
        " says who answered).",
    )
    text: str = Field(
        default="",
        description='The delivery in words, as the History shows it: "email to lee: failed —'
        ' not configured", "slack to ada: sent, updated after the answer".',
    )


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
    version: str = Field(description="The server's version of PawFlow.")
    role: Literal["admin", "member"] = "member"
    signout_url: str = Field(default="/", description="Where to go after POST /signout.")
