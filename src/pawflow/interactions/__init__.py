"""The ``pawflow.user-interaction.v1`` contract: kinds, response schemas and answers."""

from __future__ import annotations

from pawflow.interactions.answers import FileResolver, canonical_decimal, normalize_answer
from pawflow.interactions.kinds import (
    CONFIRMATION_KINDS,
    CONTRACT,
    OPTION_KINDS,
    SCALAR_KINDS,
    JsonValue,
    Kind,
    Option,
    derive_schema,
    kind_of_property,
    normalize_options,
    parse_kind,
    prepare_request,
)

__all__ = [
    "CONFIRMATION_KINDS",
    "CONTRACT",
    "OPTION_KINDS",
    "SCALAR_KINDS",
    "FileResolver",
    "JsonValue",
    "Kind",
    "Option",
    "canonical_decimal",
    "derive_schema",
    "kind_of_property",
    "normalize_answer",
    "normalize_options",
    "parse_kind",
    "prepare_request",
]
