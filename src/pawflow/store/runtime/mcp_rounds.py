"""The rounds of MCP elicitation: what a client replied to each question it was shown.

A round is recorded once, under its id: for the 2026 protocol the id is the nonce sealed in
the ``requestState`` the reply came with, so a state already used (a replay) finds its row
and is refused. Declining and dismissing (``cancel``) leave the request pending; the round
keeps which one it was.
"""

from __future__ import annotations

from datetime import datetime

from pawflow.clock import to_millis
from pawflow.store.engine.database import Tx, sql

ACTIONS = frozenset({"accept", "decline", "cancel"})


def record(
    tx: Tx, round_id: str, interaction_id: str, *, user: str, action: str, now: datetime
) -> bool:
    """Record a client's reply to round ``round_id``; False when that round was already used."""
    if action not in ACTIONS:
        raise ValueError(f"unknown elicitation action {action!r}")
    inserted = sql(tx).execute(
        "INSERT INTO mcp_rounds (id, interaction_id, user_id, action, created_at)"
        " VALUES (?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING",
        (round_id, interaction_id, user, action, to_millis(now)),
    )
    return inserted == 1


def actions(tx: Tx, interaction_id: str) -> list[str]:
    """The replies recorded for a request, oldest first."""
    rows = sql(tx).all(
        "SELECT action FROM mcp_rounds WHERE interaction_id = ? ORDER BY created_at, id",
        (interaction_id,),
    )
    return [str(row["action"]) for row in rows]
