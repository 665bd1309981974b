"""What the admin page reads across every user: webhooks, approval rules, channels.

Each function reads (or, for the ``remove_…`` ones, changes) rows of every user; only an
admin's request reaches them (:mod:`pawflow.server.admin` checks the role first).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pawflow.clock import from_millis, iso
from pawflow.errors import NotFound
from pawflow.store.engine.database import Tx, sql
from pawflow.store.governance import approvals
from pawflow.store.reach import webhooks as hooks


def webhooks(tx: Tx) -> list[dict[str, Any]]:
    rows = sql(tx).all("SELECT id, user_id, url, events, created_at FROM webhooks ORDER BY id")
    return [
        {
            "id": str(row["id"]),
            "owner": str(row["user_id"]),
            "url": str(row["url"]),
            "events": str(row["events"]),
            "created_at": iso(from_millis(int(row["created_at"]))),
        }
        for row in rows
    ]


def remove_webhook(tx: Tx, webhook_id: str) -> str:
    """Remove anyone's webhook (as its owner would); its owner."""
    row = sql(tx).one("SELECT user_id FROM webhooks WHERE id = ?", (webhook_id,))
    if row is None:
        raise NotFound("webhook")
    owner = str(row["user_id"])
    hooks.delete(tx, owner, webhook_id)
    return owner


def approval_rules(tx: Tx) -> list[dict[str, Any]]:
    rows = sql(tx).all(
        "SELECT id, agent, tool, scope, user_id, conversation_id, created_at FROM approval_rules"
        " WHERE revoked_at IS NULL ORDER BY created_at, id"
    )
    return [
        {
            "id": str(row["id"]),
            "agent": str(row["agent"]),
            "tool": str(row["tool"]),
            "scope": str(row["scope"]),
            "owner": str(row["user_id"]),
            "conversation_id": row["conversation_id"],
            "created_at": iso(from_millis(int(row["created_at"]))),
        }
        for row in rows
    ]


def revoke_rule(tx: Tx, rule_id: str, by: str, now: datetime) -> str:
    """Revoke anyone's live rule (:mod:`pawflow.store.governance.approvals` writes it); its
    owner."""
    return approvals.revoke_any_rule(tx, rule_id, by, now)


def outbox_counts(tx: Tx) -> dict[str, dict[str, int]]:
    """Notifications by channel and status (queued, sent, failed, …)."""
    found: dict[str, dict[str, int]] = {}
    for row in sql(tx).all(
        "SELECT channel, status, COUNT(*) AS n FROM outbox GROUP BY channel, status"
    ):
        found.setdefault(str(row["channel"]), {})[str(row["status"])] = int(row["n"])
    return found
