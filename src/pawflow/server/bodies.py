"""Reading JSON bodies strictly: UTF-8 only, no NaN, bounded nesting, storable text.

Anything unreadable is a 400 before validation starts, so malformed input never reaches
code that could fail on it with a 5xx.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Coroutine
from decimal import Decimal
from typing import Any

from fastapi import HTTPException, Request, Response
from fastapi.routing import APIRoute

from pawflow.interactions.problems import is_clean_text

MAX_DEPTH = 64


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


EXACT_NUMBER_ROUTES = frozenset({"respond_interaction", "respond_confirmation"})
"""Routes whose fractional numbers are read as ``Decimal``: an answer is never rounded."""


def parse_json(raw: bytes, *, exact: bool = False) -> Any:
    """The JSON value in ``raw``, or an HTTP 400 saying what is wrong with it.

    With ``exact``, numbers with a fraction or exponent come back as ``Decimal``, never
    through a binary float (``12345678901234567.89`` stays what it says).
    """
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise HTTPException(400, "the body is not valid UTF-8") from exc
    try:
        value = json.loads(
            text, parse_constant=_no_constants, parse_float=_exact_float if exact else float
        )
    except RecursionError as exc:
        raise HTTPException(400, f"the body is nested deeper than {MAX_DEPTH} levels") from exc
    except ValueError as exc:  # JSONDecodeError, NaN/Infinity, an integer too long to read
        raise HTTPException(400, f"the body is not valid JSON: {_first_line(exc)}") from exc
    problem = _check(value)
    if problem:
        raise HTTPException(400, problem)
    return value


def _exact_float(text: str) -> Decimal:
    if len(text) > MAX_NUMBER_TEXT:
        raise ValueError(f"a number longer than {MAX_NUMBER_TEXT} characters")
    return Decimal(text)


MAX_NUMBER_TEXT = 5000


def _first_line(exc: Exception) -> str:
    return str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__


def _check(value: Any) -> str | None:
    """A reason to refuse ``value`` (too deep, unstorable text), or None."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > MAX_DEPTH:
            return f"the body is nested deeper than {MAX_DEPTH} levels"
        if isinstance(item, str):
            if not is_clean_text(item):
                return "the body holds text with NUL characters or lone surrogates"
        elif isinstance(item, dict):
            for key, child in item.items():
                if not is_clean_text(key):
                    return "the body holds a key with NUL characters or lone surrogates"
                stack.append((child, depth + 1))
        elif isinstance(item, list):
            stack.extend((child, depth + 1) for child in item)
    return None


class StrictJSONRequest(Request):
    exact_numbers = False

    async def json(self) -> Any:
        if not hasattr(self, "_json"):
            self._json = parse_json(await self.body(), exact=self.exact_numbers)
        return self._json


class ExactJSONRequest(StrictJSONRequest):
    exact_numbers = True


class StrictJSONRoute(APIRoute):
    """A route whose JSON body is read by :func:`parse_json`."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()
        wrapper = ExactJSONRequest if self.name in EXACT_NUMBER_ROUTES else StrictJSONRequest

        async def strict_handler(request: Request) -> Response:
            return await handler(wrapper(request.scope, request.receive))

        return strict_handler
