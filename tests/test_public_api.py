"""The public API is curated: a sorted ``__all__`` that this test pins."""

from __future__ import annotations

import pawflow

PUBLIC = [
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


def test_public_names_are_pinned_and_sorted() -> None:
    assert pawflow.__all__ == PUBLIC
    assert sorted(pawflow.__all__, key=str.lower) == [n for n in sorted(PUBLIC, key=str.lower)]
    for name in pawflow.__all__:
        assert getattr(pawflow, name) is not None


def test_every_error_descends_from_one_base() -> None:
    for name in pawflow.__all__:
        value = getattr(pawflow, name)
        if isinstance(value, type) and issubclass(value, Exception):
            assert issubclass(value, pawflow.PawFlowError)
