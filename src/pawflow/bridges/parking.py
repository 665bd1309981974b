"""What the bridges share: their names, the payloads they park, and how a wait ended.

A bridge asks through :meth:`pawflow.Store.ask` with a target ``<framework>.<name>:…``
(the part before the ``:`` is the delivery kind the bridge registers) and a JSON payload; the
answer, a cancel or an expiry comes back as a resolved continuation, read here into an
:class:`~pawflow.records.Outcome`.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pawflow.errors import InvalidInput
from pawflow.records import Outcome
from pawflow.store import Continuation

NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9.-]{0,63}")


def delivery_kind(framework: str, name: str) -> str:
    """``<framework>.<name>``: the target kind of one bridge (one handler per process)."""
    if not isinstance(name, str) or not NAME.fullmatch(name):
        raise InvalidInput(
            f"invalid bridge name {name!r}: letters, digits, '.' and '-', at most 64"
        )
    return f"{framework}.{name}"


def encode(payload: dict[str, Any]) -> bytes:
    """A parked payload: compact JSON (what is not JSON is refused, not pickled)."""
    try:
        return json.dumps(payload, separators=(",", ":"), allow_nan=False).encode("utf-8")
    except (TypeError, ValueError) as exc:
        raise InvalidInput(f"a bridge keeps only JSON: {exc}") from exc


def decode(continuation: Continuation) -> dict[str, Any]:
    payload = json.loads(continuation.payload.decode("utf-8"))
    if not isinstance(payload, dict):
        raise InvalidInput(f"continuation {continuation.id} carries no bridge payload")
    return payload


def outcome_of(continuation: Continuation) -> Outcome:
    """How the wait of a resolved continuation ended: an interaction's signal carries its
    :class:`~pawflow.records.Outcome`; a withdrawn wait is ``cancelled``, one that timed out
    ``expired``."""
    return Outcome.of(continuation.value, resolution=continuation.outcome)
