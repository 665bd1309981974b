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


def isort_style(name: str) -> tuple[int, str]:
    """Constants, then classes, then the rest, each alphabetically."""
    return (0 if name.isupper() else 1 if name[0].isupper() else 2, name)


def test_public_names_are_pinned_and_sorted() -> None:
    assert pawflow.__all__ == PUBLIC
    assert pawflow.__all__ == sorted(pawflow.__all__, key=isort_style)
    assert all(hasattr(pawflow, name) for name in pawflow.__all__)


def test_every_error_descends_from_one_base() -> None:
    for name in pawflow.__all__:
        value = getattr(pawflow, name)
        if isinstance(value, type) and issubclass(value, Exception):
            assert issubclass(value, pawflow.PawFlowError)
