"""``pattern`` in response schemas, matched by RE2: linear in the text, whatever the pattern.

A backtracking engine (Python's ``re``) can take exponential time on patterns such as
``^(a+)+$``, so an answer could hold a worker, and the write transaction around it, for
minutes. RE2 never backtracks; the price is that it refuses backreferences and lookaround,
which are refused when the request is published, not when it is answered.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import re2  # type: ignore[import-untyped]

from pawflow.errors import InvalidPattern

if TYPE_CHECKING:
    import jsonschema.protocols
    from jsonschema import ValidationError

MAX_PATTERN = 1000
"""Longer patterns are refused: a schema is data, not a program."""
MAX_PATTERN_MEMORY = 8 << 20
"""RE2's compile-time memory budget for one pattern; a pattern needing more is refused."""


def _options() -> re2.Options:
    options = re2.Options()
    options.log_errors = False  # a refused pattern is a 422, not a line on stderr
    options.max_mem = MAX_PATTERN_MEMORY
    return options


@lru_cache(maxsize=512)
def _compiled(pattern: str) -> Any:
    return re2.compile(pattern, _options())


def compile_pattern(pattern: object) -> Any:
    """The compiled pattern, or ``InvalidPattern``."""
    if not isinstance(pattern, str):
        raise InvalidPattern("must be a string")
    if len(pattern) > MAX_PATTERN:
        raise InvalidPattern(f"must be at most {MAX_PATTERN} characters")
    try:
        return _compiled(pattern)
    except (re2.error, TypeError, ValueError) as exc:
        detail = exc.args[0] if exc.args else ""
        if isinstance(detail, bytes):
            detail = detail.decode("utf-8", "replace")
        reason = str(detail).split(":", 1)[0] if detail else "not supported"
        raise InvalidPattern(
            f"must be a regular expression RE2 accepts (no backreferences or lookaround): "
            f"{reason[:80]}"
        ) from None


def pattern_keyword(
    validator: jsonschema.protocols.Validator, pattern: Any, instance: Any, schema: Any
) -> Iterator[ValidationError]:
    """The ``pattern`` keyword, as jsonschema's own (unanchored search) but through RE2."""
    # Only a validator calls this, so jsonschema is loaded already.
    from jsonschema import ValidationError  # noqa: PLC0415

    if not validator.is_type(instance, "string"):
        return
    try:
        compiled = compile_pattern(pattern)
    except InvalidPattern:
        # Only a schema stored before patterns were checked by RE2 can get here.
        yield ValidationError("the request's pattern cannot be checked")
        return
    if compiled.search(instance) is None:
        yield ValidationError(f"does not match {pattern!r}")
