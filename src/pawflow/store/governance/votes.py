"""A quorum of ``confirm`` votes: who votes for whom, and when the votes decide.

A request whose policy asks for ``required_approvals`` (docs/governance.md) is decided by its
assignees' votes, kept in ``request_votes`` (this module alone writes it): a person has one
vote, cast by them or by a delegate, and an account casts one vote on a request. Enough
approvals answer it yes; its ``reject`` rule says when the noes answer it no.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from pawflow.clock import from_millis, iso, to_millis
from pawflow.errors import AlreadyVoted, Forbidden
from pawflow.store.engine.database import Tx, sql
from pawflow.store.ledger import audit
from pawflow.store.people import groups


def vote(
    tx: Tx,
    row: dict[str, Any],
    policy: dict[str, Any],
    user: str,
    value: bool,
    *,
    people: list[str],
    via: str,
    now: datetime,
) -> tuple[str, bool | None]:
    """Record ``user``'s vote for the person it counts for; that person, and the outcome once
    the quorum decides (None while it waits).

    A vote counts for a person, never for an account: ``user`` themselves when they may
    decide, else the first of those they stand in for (in the order of the assignees) who
    has not voted yet. An account casts one vote on a request, and a person has one vote,
    cast by them or by any delegate: anything more is ``AlreadyVoted``, the vote that stands
    in it, and nothing changes. ``people``: who decides (``policies.deciders``).
    """
    standing = [user] if user in people else []
    standing += [p for p in groups.principals_of(tx, user, now) if p in people and p != user]
    standing.sort(key=lambda person: (person != user, people.index(person)))
    votes = cast(tx, row["id"])
    mine = next((v for v in votes.values() if v["by"] == user), None)
    if mine is not None:
        raise AlreadyVoted(mine)
    principal = next((p for p in standing if p not in votes), None)
    if principal is None:
        if not standing:  # not one of the deciders (the caller checked: never so)
            raise Forbidden("this request waits for others", list(policy["assignees"] or []))
        raise AlreadyVoted(votes[standing[0]])
    voted = sql(tx).one(
        "INSERT INTO request_votes (request_id, voter, voted_by, vote, via, voted_at)"
        " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING RETURNING voter",
        (row["id"], principal, user, json.dumps(value), via, to_millis(now)),
    )
    if voted is None:  # a vote for that person (or by that account) committed meanwhile
        votes = cast(tx, row["id"])
        raise AlreadyVoted(
            votes.get(principal) or next(v for v in votes.values() if v["by"] == user)
        )
    detail: dict[str, Any] = {"vote": value}
    if principal != user:
        detail["for"] = principal
    audit.record(tx, row["id"], "voted", now, actor=user, via=via, detail=detail)
    yes, no = tally(tx, row["id"])
    needed = int(policy["required_approvals"])
    if yes >= needed:
        return principal, True
    pool = max(len(people), needed)
    if policy["reject_rule"] == "first":
        return principal, False if no >= 1 else None
    if no * 2 > pool or pool - no < needed:
        return principal, False
    return principal, None


def cast(tx: Tx, request_id: str) -> dict[str, dict[str, Any]]:
    """The request's votes by the person each counts for, oldest first."""
    rows = sql(tx).all(
        "SELECT voter, voted_by, vote, via, voted_at FROM request_votes WHERE request_id = ?"
        " ORDER BY voted_at, voter",
        (request_id,),
    )
    return {
        str(r["voter"]): {
            "voter": r["voter"],
            "by": r["voted_by"] or r["voter"],  # votes kept before accounts were: their own
            "vote": json.loads(r["vote"]),
            "via": r["via"],
            "at": iso(from_millis(int(r["voted_at"]))),
        }
        for r in rows
    }


def tally(tx: Tx, request_id: str) -> tuple[int, int]:
    rows = sql(tx).all("SELECT vote FROM request_votes WHERE request_id = ?", (request_id,))
    votes = [json.loads(r["vote"]) for r in rows]
    return sum(1 for v in votes if v is True), sum(1 for v in votes if v is not True)
