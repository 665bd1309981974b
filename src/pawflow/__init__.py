"""PawFlow: ask a person something from an agent or a flow, and wait for the answer durably."""

from __future__ import annotations

from pawflow.clock import Clock, FakeClock, SystemClock
from pawflow.durations import deadline_after, parse_deadline, parse_duration
from pawflow.errors import (
    Conflict,
    FieldError,
    InvalidAnswer,
    InvalidDuration,
    InvalidInput,
    MigrationError,
    NotFound,
    NotPending,
    PawFlowError,
    PayloadTooLarge,
    StoreError,
    StoreUnavailable,
    Undeliverable,
)
from pawflow.interactions import CONTRACT, Kind, Option
from pawflow.records import Conversation, Event, FileRef, Interaction, Message, Requester
from pawflow.store import DEFAULT_URL, Store, open_store
from pawflow.store.continuations import Continuation, SignalValue
from pawflow.store.delivery import Delivery, DeliveryHandler
from pawflow.store.store import SweepReport
from pawflow.store.sweeper import Sweeper

__version__ = "0.1.0"

__all__ = [
    "CONTRACT",
    "DEFAULT_URL",
    "Clock",
    "Conflict",
    "Continuation",
    "Conversation",
    "Delivery",
    "DeliveryHandler",
    "Event",
    "FakeClock",
    "FieldError",
    "FileRef",
    "Interaction",
    "InvalidAnswer",
    "InvalidDuration",
    "InvalidInput",
    "Kind",
    "Message",
    "MigrationError",
    "NotFound",
    "NotPending",
    "Option",
    "PawFlowError",
    "PayloadTooLarge",
    "Requester",
    "SignalValue",
    "Store",
    "StoreError",
    "StoreUnavailable",
    "SweepReport",
    "Sweeper",
    "SystemClock",
    "Undeliverable",
    "__version__",
    "deadline_after",
    "open_store",
    "parse_deadline",
    "parse_duration",
]
