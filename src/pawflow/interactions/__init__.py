"""The ``pawflow.user-interaction.v1`` contract: kinds, response schemas and answers.

The names below are loaded on first use (PEP 562): a client that only reads records needs
the kinds, never the answer checking and its JSON Schema validator.
"""

from __future__ import annotations

import typing

from pawflow import lazy

if typing.TYPE_CHECKING:
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

__getattr__, __dir__ = lazy.exports(
    __name__,
    {
        **dict.fromkeys(
            ("FileResolver", "canonical_decimal", "normalize_answer"),
            "pawflow.interactions.answers",
        ),
        **dict.fromkeys(
            (
                "CONFIRMATION_KINDS",
                "CONTRACT",
                "OPTION_KINDS",
                "SCALAR_KINDS",
                "JsonValue",
                "Kind",
                "Option",
                "derive_schema",
                "kind_of_property",
                "normalize_options",
                "parse_kind",
                "prepare_request",
            ),
            "pawflow.interactions.kinds",
        ),
    },
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
