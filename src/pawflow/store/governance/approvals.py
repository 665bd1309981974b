"""Approval rules and executed tool calls: what a tool approval leaves behind.

An approval rule lets an agent make one tool call again without asking: the same tool with
the same arguments, in one conversation (scope ``conversation``) or wherever the agent acts
for the user who allowed it (scope ``agent``). A rule is written in the transaction that
records the approval that asked for it, and lives until revoked. Whoever made a rule may
list and revoke it; so may anyone with write access to a rule's conversation. A rule
someone may not see is, to them, exactly as unknown as one that does not exist.

A tool execution records the arguments an approved call was run with, under its request,
written just before the tool runs.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from pawflow.clock import to_millis
from pawflow.errors import NotFound
from pawflow.ids import new_id
from pawflow.interactions.tool_approval import canonical
from pawflow.records import ApprovalRule, Interaction, ToolExecution
from pawflow.store.engine.database import Tx, sql
from pawflow.store.ledger.conversations import conversation_access, may_write

_COLUMNS = (
    "id, agent, tool, arguments, scope, conversation_id, user_id AS created_by, request_id,"
    " created_at, revoked_at, revoked_by"
)


def add_rule(
    tx: Tx,
    *,
    agent: str,
    tool: str,
    arguments: Mapping[str, Any],
    scope: str,
    conversation_id: str,
    user: str,
    request_id: str | None,
    now: datetime,
) -> ApprovalRule:
    """Allow ``tool`` with ``arguments`` from now on (in the conversation, or for the agent)."""
    rule_id = new_id()
    sql(tx).execute(
        "INSERT INTO approval_rules (id, agent, tool, arguments, scope, conversation_id,"
        " user_id, request_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            rule_id,
            agent,
            tool,
            canonical(dict(arguments)),
            scope,
            conversation_id if scope == "conversation" else None,
            user,
            request_id,
            to_millis(now),
        ),
    )
    return _get(tx, rule_id)


def _get(tx: Tx, rule_id: str) -> ApprovalRule:
    row = sql(tx).one(f"SELECT {_COLUMNS} FROM approval_rules WHERE id = ?", (rule_id,))
    if row is None:
        raise NotFound("approval rule")
    return ApprovalRule.from_row(row)


def matching_rule(
    tx: Tx,
    *,
    agent: str,
    tool: str,
    arguments: Mapping[str, Any],
    conversation_id: str,
    user: str,
) -> ApprovalRule | None:
    """The live rule that allows this call here, if any."""
    row = sql(tx).one(
        f"SELECT {_COLUMNS} FROM approval_rules WHERE agent = ? AND tool = ? AND arguments = ?"
        " AND revoked_at IS NULL AND ((scope = 'conversation' AND conversation_id = ?)"
        " OR (scope = 'agent' AND user_id = ?)) ORDER BY created_at LIMIT 1",
        (agent, tool, canonical(dict(arguments)), conversation_id, user),
    )
    return None if row is None else ApprovalRule.from_row(row)


def _visible(tx: Tx, rule: ApprovalRule, user: str, *, write: bool) -> bool:
    if rule.created_by == user:
        return True
    if rule.conversation_id is None:
        return False
    if write:
        return may_write(tx, rule.conversation_id, user)
    return conversation_access(tx, rule.conversation_id, user) is not None


def list_rules(
    tx: Tx,
    user: str,
    *,
    conversation_id: str | None = None,
    agent: str | None = None,
    include_revoked: bool = False,
) -> list[ApprovalRule]:
    """The rules ``user`` may see: their own, and those of conversations they are in.

    ``conversation_id`` narrows to the rules that apply there (its own and the agent-wide
    ones ``user`` made); an unknown or foreign conversation is NotFound.
    """
    where = ["1 = 1"]
    params: list[Any] = []
    if conversation_id is not None:
        if conversation_access(tx, conversation_id, user) is None:
            raise NotFound("conversation")
        where.append("(conversation_id = ? OR (scope = 'agent' AND user_id = ?))")
        params += [conversation_id, user]
    if agent is not None:
        where.append("agent = ?")
        params.append(agent)
    if not include_revoked:
        where.append("revoked_at IS NULL")
    rows = sql(tx).all(
        f"SELECT {_COLUMNS} FROM approval_rules WHERE {' AND '.join(where)}"
        " ORDER BY created_at, id",
        tuple(params),
    )
    rules = [ApprovalRule.from_row(row) for row in rows]
    return [rule for rule in rules if _visible(tx, rule, user, write=False)]


def revoke_rule(tx: Tx, rule_id: str, user: str, now: datetime) -> ApprovalRule:
    """Revoke a rule ``user`` may change (its maker, or a writer of its conversation)."""
    row = sql(tx).one(f"SELECT {_COLUMNS} FROM approval_rules WHERE id = ?", (rule_id,))
    rule = None if row is None else ApprovalRule.from_row(row)
    if rule is None or not _visible(tx, rule, user, write=True):
        raise NotFound("approval rule")
    sql(tx).execute(
        "UPDATE approval_rules SET revoked_at = ?, revoked_by = ?"
        " WHERE id = ? AND revoked_at IS NULL",
        (to_millis(now), user, rule_id),
    )
    return _get(tx, rule_id)


def revoke_any_rule(tx: Tx, rule_id: str, by: str, now: datetime) -> str:
    """An administrator's revocation of anyone's live rule; returns its owner."""
    row = sql(tx).one(
        "UPDATE approval_rules SET revoked_at = ?, revoked_by = ? WHERE id = ?"
        " AND revoked_at IS NULL RETURNING user_id",
        (to_millis(now), by, rule_id),
    )
    if row is None:
        raise NotFound("approval rule")
    return str(row["user_id"])


def record_execution(
    tx: Tx,
    request_id: str,
    *,
    tool: str,
    arguments: Mapping[str, Any],
    run_id: str | None,
    now: datetime,
) -> bool:
    """Keep the arguments the approved call runs with; False if it was recorded already."""
    if sql(tx).one("SELECT request_id FROM tool_executions WHERE request_id = ?", (request_id,)):
        return False
    sql(tx).execute(
        "INSERT INTO tool_executions (request_id, tool, arguments, run_id, executed_at)"
        " VALUES (?, ?, ?, ?, ?)",
        (request_id, tool, json.dumps(dict(arguments)), run_id, to_millis(now)),
    )
    return True


def execution(tx: Tx, request_id: str) -> ToolExecution | None:
    """What the approved call of ``request_id`` was run with (None: it has not run)."""
    row = sql(tx).one(
        "SELECT request_id, tool, arguments, run_id, executed_at FROM tool_executions"
        " WHERE request_id = ?",
        (request_id,),
    )
    return None if row is None else ToolExecution.from_row(row)


def keep_rule(tx: Tx, record: Interaction, decision: dict[str, Any], now: datetime) -> None:
    """An approval that says "always": the rule, in the answer's own transaction."""
    surface = record.ui_surface or {}
    if decision.get("always") not in ("conversation", "agent"):
        return
    add_rule(
        tx,
        agent=str(surface.get("agent") or record.requester.name),
        tool=str(surface.get("tool")),
        arguments=decision.get("arguments") or {},
        scope=str(decision["always"]),
        conversation_id=record.conversation_id,
        user=record.answered_by or record.owner,
        request_id=record.id,
        now=now,
    )
