"""Claims, reassignment, the assignees' inbox, and the reminders and escalations the sweeper
sends: the moving parts of a request's policy (:mod:`pawflow.store.governance.policies`).

Reminders and escalation steps are due times stored with the policy. The sweeper takes a
due one and, in one transaction, moves its due time on (a conditional update: of two
sweepers exactly one wins), records it in the audit trail and hands the notice to
:func:`notify`. A crash before the commit leaves it due; after, it is done: never skipped,
never doubled.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from pawflow.clock import to_millis
from pawflow.errors import Conflict, Forbidden, InvalidInput, NotFound, NotPending
from pawflow.records import Interaction
from pawflow.store.engine.database import Tx, sql
from pawflow.store.governance import policies
from pawflow.store.ledger import audit
from pawflow.store.people import groups

InboxFilter = Literal["all", "assigned", "own", "mine", "groups", "claimed", "others", "visible"]
notify = policies.notify


def _pending_row(
    tx: Tx, request_id: str, user: str, now: datetime
) -> tuple[dict[str, Any], dict[str, Any], str]:
    row = sql(tx).one("SELECT * FROM interactions WHERE id = ?", (request_id,))
    policy, principal = policies.decider(tx, row, user, None, now)
    assert row is not None
    if row["status"] != "pending":
        raise NotPending(row["status"])
    if policy is None or not policy["assignees"]:
        raise Conflict("only a request with assignees can be claimed or reassigned")
    return row, policy, principal


def claim(tx: Tx, request_id: str, *, user: str, via: str, now: datetime) -> None:
    """``user`` (an assignee or their delegate) takes the request on for its claim time."""
    row, policy, _ = _pending_row(tx, request_id, user, now)
    if policy["required_approvals"] is not None:
        raise Conflict("a request that needs several approvals is not claimed")
    until = to_millis(now) + int(policy["claim_ttl_ms"])
    sql(tx).execute(
        "UPDATE request_policies SET claimed_by = ?, claim_expires_at = ? WHERE request_id = ?",
        (user, until, request_id),
    )
    audit.record(tx, request_id, "claimed", now, actor=user, via=via)
    notify(tx, row, _audience(tx, row, policy), "claim", now)


def release(tx: Tx, request_id: str, *, user: str, via: str, now: datetime) -> None:
    """The claim's holder gives the request back to all of its assignees."""
    row, policy, _ = _pending_row(tx, request_id, user, now)
    holder = policies.claim_holder(policy, now)
    if holder != user:
        raise Conflict("only the one who claimed the request can release it")
    sql(tx).execute(
        "UPDATE request_policies SET claimed_by = NULL, claim_expires_at = NULL"
        " WHERE request_id = ?",
        (request_id,),
    )
    audit.record(tx, request_id, "released", now, actor=user, via=via)
    notify(tx, row, _audience(tx, row, policy), "release", now)


def reassign(tx: Tx, request_id: str, to: list[str], *, user: str, via: str, now: datetime) -> None:
    """Hand the request to ``to``: among its assignees, or whom the requester allowed
    (``reassign_to``). The claim, if any, ends."""
    row, policy, _ = _pending_row(tx, request_id, user, now)
    targets = groups.check_assignees(to, "to")
    allowed = set(policy["assignees"]) | set(policy["reassign_to"] or [])
    outside = [entry for entry in targets if entry not in allowed]
    if outside:
        waiting = sorted(allowed)
        raise Forbidden(
            f"the requester does not allow reassigning to {', '.join(outside)}", waiting
        )
    before = list(policy["assignees"])
    sql(tx).execute(
        "UPDATE request_policies SET assignees = ?, claimed_by = NULL, claim_expires_at = NULL"
        " WHERE request_id = ?",
        (json.dumps(targets), request_id),
    )
    audit.record(
        tx,
        request_id,
        "reassigned",
        now,
        actor=user,
        via=via,
        detail={"from": before, "to": targets},
    )
    notify(tx, row, groups.expand(tx, targets), "reassign", now)


def _audience(tx: Tx, row: dict[str, Any], policy: dict[str, Any]) -> list[str]:
    return sorted({*policies.deciders(tx, row, policy), row["owner"]})


# -- the inbox -------------------------------------------------------------------------------

Why = Literal["own", "mine", "groups", "claimed", "others"]
WAITING_FOR_ME: frozenset[str] = frozenset({"own", "mine", "groups", "claimed"})
_FILTERS: dict[str, frozenset[str]] = {
    "all": WAITING_FOR_ME,
    "assigned": frozenset({"mine", "groups", "claimed"}),
    "own": frozenset({"own"}),
    "mine": frozenset({"mine"}),
    "groups": frozenset({"groups"}),
    "claimed": frozenset({"claimed"}),
    "others": frozenset({"others"}),
    "visible": frozenset({*WAITING_FOR_ME, "others"}),
}


@dataclass(frozen=True)
class Waiting:
    """A pending request as one user's inbox shows it: why it is there and, when it waits for
    someone else, for whom (``why == "others"``)."""

    interaction: Interaction
    why: Why
    waiting_for: list[str] = field(default_factory=list)


def inbox(tx: Tx, user: str, which: InboxFilter, now: datetime, limit: int = 1000) -> list[Waiting]:
    """The pending requests ``user`` may answer now, soonest due first, each with why:
    ``own`` (theirs, with no assignees), ``mine`` (assigned to them, or to someone they stand
    in for), ``groups`` (through a group) or ``claimed`` (they hold its claim).

    This is the one reading of "waiting for me": the badge, the home and pending pages,
    ``pawflow inbox``, the terminal app and the editor extension all count it. ``others``
    (and ``visible``, which adds them) are the requests ``user`` asked, or is assigned, that
    wait for someone else: their assignees, or whoever holds the claim.
    """
    kept = _FILTERS.get(which)
    if kept is None:
        raise InvalidInput(
            "unknown filter: all, assigned, own, mine, groups, claimed, others or visible"
        )
    at = to_millis(now)
    persons = [user, *(p for p in groups.principals_of(tx, user, now) if p != user)]
    groups_by = {p: {groups.GROUP_PREFIX + g for g in groups.groups_of(tx, p)} for p in persons}
    rows = sql(tx).all(
        "SELECT i.*, p.assignees AS policy_assignees, p.claimed_by AS policy_claimed_by,"
        " p.claim_expires_at AS policy_claim_until, p.requester_may_answer AS policy_self"
        " FROM interactions i LEFT JOIN request_policies p ON p.request_id = i.id"
        " WHERE i.status = 'pending' AND (i.expires_at IS NULL OR i.expires_at > ?)"
        " AND (i.owner = ? OR (p.assignees IS NOT NULL AND p.assignees <> '[]'))"
        " ORDER BY CASE WHEN i.expires_at IS NULL THEN 1 ELSE 0 END, i.expires_at,"
        " i.created_at, i.id",
        (at, user),
    )
    found: list[Waiting] = []
    for row in rows:
        assignees = list(json.loads(row["policy_assignees"] or "[]"))
        entry = _why(row, assignees, user, persons, groups_by, at)
        if entry is not None and entry[0] in kept:
            found.append(Waiting(Interaction.from_row(row), entry[0], entry[1]))
            if len(found) >= limit:
                break
    return found


def _why(
    row: dict[str, Any],
    assignees: list[str],
    user: str,
    persons: list[str],
    groups_by: dict[str, set[str]],
    at: int,
) -> tuple[Why, list[str]] | None:
    """Why ``row`` is in ``user``'s inbox (the rules of :func:`policies.decider`)."""
    if not assignees:
        return ("own", []) if row["owner"] == user else None
    named = set(assignees)
    principal, through = None, False
    if row["owner"] != user or row["policy_self"]:
        for person in persons:
            if person == row["owner"] and not row["policy_self"]:
                continue
            if person in named or groups_by[person] & named:
                principal, through = person, person not in named
                break
    holder = row["policy_claimed_by"] if (row["policy_claim_until"] or 0) > at else None
    if principal is not None and holder is not None and holder not in (user, principal):
        return "others", [str(holder)]
    if principal is None:
        if row["owner"] != user:
            return None
        return "others", [str(holder)] if holder is not None else assignees
    if holder == user:
        return "claimed", []
    return ("groups" if through else "mine"), []


# -- the sweeper's reminders and escalations -------------------------------------------------


def _due(tx: Tx, column: str, now: datetime, limit: int) -> list[dict[str, Any]]:
    return sql(tx).all(
        f"SELECT p.* FROM request_policies p WHERE p.{column} <= ?"
        f" ORDER BY p.{column} LIMIT ?" + sql(tx).skip_locked,
        (to_millis(now), limit),
    )


def _request(tx: Tx, request_id: str) -> dict[str, Any]:
    row = sql(tx).one("SELECT * FROM interactions WHERE id = ?", (request_id,))
    if row is None:  # pragma: no cover - a policy never outlives its request
        raise NotFound()
    return row


def remind_due(tx: Tx, now: datetime, limit: int) -> int:
    """Send the reminders that are due, one per due time; a request that settled stops."""
    sent = 0
    at = to_millis(now)
    for policy in _due(tx, "next_remind_at", now, limit):
        row = _request(tx, policy["request_id"])
        due = int(policy["next_remind_at"])
        every = int(policy["remind_every_ms"])
        following = due + every
        if following <= at:  # down for a while: one reminder now, the next one after now
            following = at + every - (at - due) % every
        upcoming = None if row["status"] != "pending" else following
        moved = sql(tx).one(
            "UPDATE request_policies SET next_remind_at = ?"
            " WHERE request_id = ? AND next_remind_at = ? RETURNING request_id",
            (upcoming, row["id"], due),
        )
        if moved is None or upcoming is None:
            continue
        loaded = policies.policy_of(tx, row["id"])
        recipients = policies.deciders(tx, row, loaded) or [row["owner"]]
        audit.record(tx, row["id"], "reminded", now, detail={"to": recipients})
        notify(tx, row, recipients, "remind", now)
        sent += 1
    return sent


def escalate_due(tx: Tx, now: datetime, limit: int) -> int:
    """Take the escalation steps that are due: each adds its assignees once and tells them."""
    taken = 0
    for policy in _due(tx, "next_escalation_at", now, limit):
        row = _request(tx, policy["request_id"])
        steps: list[list[Any]] = json.loads(policy["escalate"] or "[]")
        step = int(policy["escalation_step"])
        pending = row["status"] == "pending" and step < len(steps)
        following = (
            int(row["created_at"]) + int(steps[step + 1][0])
            if pending and step + 1 < len(steps)
            else None
        )
        moved = sql(tx).one(
            "UPDATE request_policies SET escalation_step = ?, next_escalation_at = ?"
            " WHERE request_id = ? AND escalation_step = ? AND next_escalation_at IS NOT NULL"
            " RETURNING request_id",
            (step + 1 if pending else step, following, row["id"], step),
        )
        if moved is None or not pending:
            continue
        loaded = policies.policy_of(tx, row["id"])
        to = [str(entry) for entry in steps[step][1]]
        policies.add_assignees(tx, row["id"], loaded, to)
        detail = {"step": step + 1, "to": to}
        audit.record(tx, row["id"], "escalated", now, detail=detail)
        notify(tx, row, groups.expand(tx, to), "escalate", now)
        taken += 1
    return taken
