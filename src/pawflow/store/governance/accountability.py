"""The store's side of accountability: a request's claims, hand-overs, details and who may see
it, each one function in the caller's transaction (``u.accountability`` in a unit).

Groups and delegations are the ``groups`` table's (``u.groups``), the audit trail the
``audit`` table's (``u.audit``); reminders and escalations are taken by ``Store.sweep``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pawflow.errors import NotFound
from pawflow.records import Interaction
from pawflow.store.engine.database import Tx, sql
from pawflow.store.governance import assignments, policies
from pawflow.store.governance.assignments import InboxFilter, Waiting
from pawflow.store.ledger import audit


def details(tx: Tx, request_id: str, *, user: str, now: datetime) -> dict[str, Any]:
    """The request with its policy's state and its audit trail, for its requester and
    for those who may decide it (assignees and their delegates)."""
    return _details(tx, request_id, user, now)


def visible(tx: Tx, request_id: str, *, user: str, now: datetime) -> Interaction:
    """The request, for anyone who may see it: its requester, the members of its
    conversation, its assignees and their delegates (NotFound to anyone else). Whether
    they may answer it is the answer's own check."""
    row = sql(tx).one("SELECT * FROM interactions WHERE id = ?", (request_id,))
    if row is None or (row["owner"] != user and not policies.may_see(tx, row, user, now)):
        raise NotFound()
    return Interaction.from_row(row)


def claim(tx: Tx, request_id: str, *, user: str, via: str = "api", now: datetime) -> dict[str, Any]:
    """Take a request on: other assignees see who handles it until the claim runs out.
    Returns its details, as :func:`details`."""
    assignments.claim(tx, request_id, user=user, via=via, now=now)
    return _details(tx, request_id, user, now)


def release(
    tx: Tx, request_id: str, *, user: str, via: str = "api", now: datetime
) -> dict[str, Any]:
    """Give a claimed request back to all of its assignees; returns its details."""
    assignments.release(tx, request_id, user=user, via=via, now=now)
    return _details(tx, request_id, user, now)


def reassign(
    tx: Tx, request_id: str, to: list[str], *, user: str, via: str = "api", now: datetime
) -> dict[str, Any]:
    """Hand a request to others, within what its requester allowed; returns its details
    (as ``user`` saw it: they may no longer be among those who decide it)."""
    assignments.reassign(tx, request_id, to, user=user, via=via, now=now)
    return _details(tx, request_id, user, now, after_change=True)


def inbox(tx: Tx, *, user: str, which: InboxFilter = "all", now: datetime) -> list[Waiting]:
    """The pending requests waiting for ``user`` (``which="all"``: those they may answer
    now), soonest due first, each with why (:func:`assignments.inbox`)."""
    return assignments.inbox(tx, user, which, now)


def _details(
    tx: Tx, request_id: str, user: str, now: datetime, *, after_change: bool = False
) -> dict[str, Any]:
    row = sql(tx).one("SELECT * FROM interactions WHERE id = ?", (request_id,))
    if row is None:
        raise NotFound()
    if row["owner"] != user and not after_change and not policies.may_see(tx, row, user, now):
        raise NotFound()
    return {
        "interaction": Interaction.from_row(row),
        "policy": policies.summary(tx, row, now),
        "audit": audit.trail(tx, request_id),
    }
