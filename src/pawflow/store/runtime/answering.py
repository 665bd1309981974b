"""Answering a request: read once, checked, normalized, recorded, in one transaction.

The request, its policy and its conversation's members are read in one statement
(:func:`read_answering`) inside the answer's writing transaction; the decoded record then
goes through access, validation, voting and the state change without being read again.
That read holds the request until the transaction ends (SQLite: its writers take turns;
PostgreSQL: ``FOR UPDATE``), so the state change knows it still finds the request as read
and reads nothing back: on PostgreSQL it travels with the signal it fires, one exchange.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pawflow.errors import FieldError, InvalidAnswer, InvalidInput, NotFound, NotPending
from pawflow.interactions import Kind, normalize_answer
from pawflow.interactions.tool_approval import decide, is_tool_approval
from pawflow.records import CHANNELS, Interaction
from pawflow.store.engine.database import Tx, sql
from pawflow.store.governance import policies, votes
from pawflow.store.governance.approvals import keep_rule
from pawflow.store.ledger.conversations import get_file
from pawflow.store.reach.file_links import link_files, referenced_files
from pawflow.store.runtime.interactions import is_past, leave_pending, must_find, settle_expired

_MEMBERS = {
    "sqlite": "(SELECT json_group_array(json_array(user_id, access)) FROM conversation_members"
    " WHERE conversation_id = i.conversation_id)",
    "postgres": "(SELECT COALESCE(json_agg(json_build_array(user_id, access)), '[]')::text"
    " FROM conversation_members WHERE conversation_id = i.conversation_id)",
}
_HOLD = {"sqlite": "", "postgres": " FOR UPDATE OF i"}
"""How the read holds the request until the answer's transaction ends: SQLite's writers
take turns already; on PostgreSQL a concurrent answer waits here, then reads it settled."""


@dataclass
class Answering:
    """A request as an answer finds it, read in one statement: its row, its policy
    (decoded, None without one), its conversation's members with their access, and whether
    anyone was notified of it (it has outbox rows)."""

    row: dict[str, Any]
    policy: dict[str, Any] | None
    members: dict[str, str]
    notified: bool

    @property
    def writers(self) -> set[str]:
        return {user for user, access in self.members.items() if access != "read"}


def read_answering(tx: Tx, request_id: str) -> Answering | None:
    """The request with its policy and its conversation's members, or None."""
    if not isinstance(request_id, str) or not request_id:
        return None
    row = sql(tx).one(
        "SELECT i.*, p.*, (SELECT owner FROM conversations WHERE id = i.conversation_id)"
        f" AS conversation_owner, {_MEMBERS[tx.dialect]} AS conversation_members,"
        " EXISTS (SELECT 1 FROM outbox WHERE request_id = i.id) AS notified"
        " FROM interactions AS i LEFT JOIN request_policies AS p ON p.request_id = i.id"
        f" WHERE i.id = ?{_HOLD[tx.dialect]}",
        (request_id,),
    )
    if row is None:
        return None
    policy = policies.split(row)
    owner = row.pop("conversation_owner")
    members: dict[str, str] = {} if owner is None else {owner: "owner"}
    for user, access in json.loads(row.pop("conversation_members") or "[]"):
        members.setdefault(user, access)
    notified = bool(row.pop("notified"))
    return Answering(row, policy, members, notified)


def check_channel(via: str, seq: int | None) -> None:
    """``via`` names a channel; only a chat answer names its message's ``seq``."""
    if via not in CHANNELS:
        message = f"answered_via must be one of {', '.join(CHANNELS)}"
        raise InvalidInput(message, [FieldError("answered_via", message)])
    if seq is not None and (via != "chat" or not isinstance(seq, int) or isinstance(seq, bool)):
        message = "answered_seq is the seq of the chat message that answered"
        raise InvalidInput(message, [FieldError("answered_seq", message)])


class PastDeadline:
    """What :func:`prepare_answer` returns for a request whose deadline has passed."""


PAST_DEADLINE = PastDeadline()


def prepare_answer(
    tx: Tx,
    found: Answering | None,
    answer: Any,
    *,
    user: str,
    now: datetime,
    kinds: Collection[str] | None = None,
) -> Any | PastDeadline:
    """Check access and normalize an answer to the request as read (:func:`read_answering`)."""
    row = None if found is None else found.row
    policy = None if found is None else found.policy
    members = None if found is None else found.members
    policies.decider(tx, row, user, kinds, now, policy, members)
    assert row is not None
    if row["status"] != "pending":
        raise NotPending(row["status"])
    if is_past(row, now) and not policies.extends_by(policy):
        return PAST_DEADLINE

    def resolve_file(file_id: str) -> dict[str, Any] | None:
        try:
            return get_file(tx, file_id, user=user).to_dict()
        except NotFound:
            return None

    surface = json.loads(row["ui_surface"]) if row["ui_surface"] else None
    if isinstance(surface, dict) and is_tool_approval(surface):
        return decide(surface, answer)  # a decision on a tool call (its fallback: a confirm)
    return normalize_answer(
        Kind(row["kind"]), json.loads(row["response_schema"]), answer, resolve_file=resolve_file
    )


def respond(
    tx: Tx,
    found: Answering | None,
    normalized: Any | PastDeadline,
    *,
    user: str,
    now: datetime,
    kinds: Collection[str] | None = None,
    via: str = "api",
    seq: int | None = None,
) -> Interaction | NotPending:
    """Record an answer :func:`prepare_answer` normalized, and where it came from, to the
    request as read (:func:`read_answering`, in this transaction).

    A request found past its deadline is expired here and now (the caller commits that and
    raises the returned ``NotPending``), so an answer never beats an expiry that is due.
    """
    check_channel(via, seq)
    row = None if found is None else found.row
    members = None if found is None else found.members
    policy, principal = policies.decider(
        tx, row, user, kinds, now, None if found is None else found.policy, members
    )
    assert row is not None and found is not None
    if row["status"] != "pending":
        raise NotPending(row["status"])
    if is_past(row, now) or isinstance(normalized, PastDeadline):
        settled = settle_expired(tx, row, now)
        found = read_answering(tx, row["id"])
        assert found is not None
        row, members = found.row, found.members
        if settled is not None or isinstance(normalized, PastDeadline):
            return NotPending(row["status"])
        policy, principal = policies.decider(tx, row, user, kinds, now, found.policy, members)
    note = None if principal == user else {"for": principal}
    surface = json.loads(row["ui_surface"]) if row["ui_surface"] else None
    if policy is not None and policy["required_approvals"] is not None:  # a tool call's: approve
        choice = normalized.get("decision") if isinstance(normalized, dict) else None
        if choice in ("edit", "respond"):  # a vote is for or against the call as shown
            needed = policy["required_approvals"]
            message = f"this call needs {needed} approvals: vote approve or reject"
            raise InvalidAnswer(message, [FieldError("decision", message)])
        yes = choice == "approve" if isinstance(normalized, dict) else normalized
        people = policies.deciders(tx, row, policy)
        principal, decided = votes.vote(
            tx, row, policy, user, bool(yes), people=people, via=via, now=now
        )
        note = None if principal == user else {"for": principal}
        if decided is None:
            return Interaction.from_row(row)
        if not (decided is False and choice == "reject"):  # the deciding "no" keeps its reason
            normalized = decide(surface or {}, decided) if is_tool_approval(surface) else decided
    kind = Kind(row["kind"])
    if is_tool_approval(surface) and isinstance(normalized, dict):
        normalized = {**normalized, "by": user}  # a tool approval's decision says who made it
    files = referenced_files(kind, json.loads(row["response_schema"]), normalized)
    record = leave_pending(
        tx,
        row,
        "answered",
        answer=normalized,
        by=user,
        now=now,
        via=via,
        seq=seq,
        note=note,
        writers=found.writers,
        notified=found.notified,
        held=True,
    )
    if record is None:
        current = must_find(tx, row["id"])
        raise NotPending(current["status"])
    link_files(tx, record.id, files, answerer=user)
    if is_tool_approval(record.ui_surface) and isinstance(normalized, dict):
        keep_rule(tx, record, normalized, now)
    return record
