"""A request's idempotency key: what it may be, and the request an owner already made with it
(the same question asked again gets that request back; another question under the same key is
a conflict)."""

from __future__ import annotations

import json
import re
from typing import Any

from pawflow.errors import Conflict, FieldError, InvalidInput
from pawflow.records import Interaction
from pawflow.store.engine.database import Tx, sql

MAX_KEY = 255
_KEY = re.compile(rf"[^\x00-\x1f\x7f]{{1,{MAX_KEY}}}")


def check_key(key: object) -> None:
    if not isinstance(key, str) or not _KEY.fullmatch(key):
        raise InvalidInput(
            "idempotency_key is invalid",
            [FieldError("idempotency_key", f"1 to {MAX_KEY} characters, no control characters")],
        )


def asked_before(tx: Tx, owner: str, key: str, asked: dict[str, Any]) -> Interaction | None:
    """The owner's request made with ``key``, if any; ``Conflict`` if it asked otherwise."""
    row = sql(tx).one(
        "SELECT * FROM interactions WHERE owner = ? AND idempotency_key = ?", (owner, key)
    )
    if row is None:
        return None
    stored = {
        "conversation_id": row["conversation_id"],
        "kind": row["kind"],
        "message": row["message"],
        "title": row["title"],
        "options": None if row["options"] is None else json.loads(row["options"]),
        "response_schema": json.loads(row["response_schema"]),
        "ui_surface": None if row["ui_surface"] is None else json.loads(row["ui_surface"]),
    }
    differing = sorted(name for name, value in asked.items() if stored[name] != value)
    if differing:
        raise Conflict(
            f"idempotency_key {key!r} was used for another request"
            f" (it differs in {', '.join(differing)})"
        )
    return Interaction.from_row(row)
