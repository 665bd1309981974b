"""PawFlow: ask a person something from an agent or a flow, and wait for the answer durably.

The names below are loaded on first use (PEP 562): ``import pawflow`` — and so every
``pawflow`` command, ``pawflow --help`` first — costs only this file and the error tree.
"""

from __future__ import annotations

import typing

from pawflow import lazy
from pawflow.errors import (
    AlreadyVoted,
    ApiError,
    ConfigError,
    Conflict,
    DeliveryError,
    EgressRefused,
    ExpressionError,
    FieldError,
    FlowDefinitionError,
    Forbidden,
    Halt,
    HopLimitReached,
    HTTPProblem,
    InvalidAnswer,
    InvalidDuration,
    InvalidInput,
    InvalidPattern,
    LeaseLost,
    MigrationError,
    MissingExtra,
    ModelError,
    NotFound,
    NotPending,
    PawFlowError,
    PayloadTooLarge,
    QueueFull,
    ServerUnreachable,
    SignInProblem,
    StoreError,
    StoreUnavailable,
    TaskFailed,
    TokenRefused,
    UndecodableCheckpoint,
    Undeliverable,
)

if typing.TYPE_CHECKING:
    from pawflow.clock import Clock, FakeClock, SystemClock
    from pawflow.durations import deadline_after, parse_deadline, parse_duration
    from pawflow.interactions import CONTRACT, Kind, Option
    from pawflow.records import Conversation, Event, FileRef, Interaction, Message, Requester
    from pawflow.store import (
        Asked,
        Continuation,
        Delivery,
        DeliveryHandler,
        Park,
        Question,
        SignalValue,
        Store,
        Sweeper,
        SweepReport,
        default_url,
        open_store,
    )

__version__ = "0.1.0"

__getattr__, __dir__ = lazy.exports(
    __name__,
    {
        **dict.fromkeys(("Clock", "FakeClock", "SystemClock"), "pawflow.clock"),
        **dict.fromkeys(
            ("deadline_after", "parse_deadline", "parse_duration"), "pawflow.durations"
        ),
        **dict.fromkeys(("CONTRACT", "Kind", "Option"), "pawflow.interactions"),
        **dict.fromkeys(
            ("Conversation", "Event", "FileRef", "Interaction", "Message", "Requester"),
            "pawflow.records",
        ),
        **dict.fromkeys(
            (
                "Asked",
                "Continuation",
                "Delivery",
                "DeliveryHandler",
                "Park",
                "Question",
                "SignalValue",
                "Store",
                "SweepReport",
                "Sweeper",
                "default_url",
                "open_store",
            ),
            "pawflow.store",
        ),
    },
)

__all__ = [
    "CONTRACT",
    "AlreadyVoted",
    "ApiError",
    "Asked",
    "Clock",
    "ConfigError",
    "Conflict",
    "Continuation",
    "Conversation",
    "Delivery",
    "DeliveryError",
    "DeliveryHandler",
    "EgressRefused",
    "Event",
    "ExpressionError",
    "FakeClock",
    "FieldError",
    "FileRef",
    "FlowDefinitionError",
    "Forbidden",
    "HTTPProblem",
    "Halt",
    "HopLimitReached",
    "Interaction",
    "InvalidAnswer",
    "InvalidDuration",
    "InvalidInput",
    "InvalidPattern",
    "Kind",
    "LeaseLost",
    "Message",
    "MigrationError",
    "MissingExtra",
    "ModelError",
    "NotFound",
    "NotPending",
    "Option",
    "Park",
    "PawFlowError",
    "PayloadTooLarge",
    "Question",
    "QueueFull",
    "Requester",
    "ServerUnreachable",
    "SignInProblem",
    "SignalValue",
    "Store",
    "StoreError",
    "StoreUnavailable",
    "SweepReport",
    "Sweeper",
    "SystemClock",
    "TaskFailed",
    "TokenRefused",
    "UndecodableCheckpoint",
    "Undeliverable",
    "__version__",
    "deadline_after",
    "default_url",
    "open_store",
    "parse_deadline",
    "parse_duration",
]
