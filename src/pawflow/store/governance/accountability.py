"""The store's side of accountability: groups, delegations, claims, the assignees' inbox and
the audit trail, reached as ``store.accountability``. Every method is one transaction."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime
from typing import Any

from pawflow.errors import NotFound
from pawflow.records import Interaction
from pawflow.store.engine.database import Database, Tx, sql
from pawflow.store.governance import assignments, policies
from pawflow.store.ledger import audit
from pawflow.store.people import groups

SWEEP_BATCH = 500


class Accountability:
    """Groups, delegations, claims, the inbox and the audit trail (``store.accountability``)."""

    def __init__(self, db: Database, now: Callable[[], datetime]) -> None:
        self.db = db
        self.now = now

    # -- groups and delegations ------------------------------------------------------------

    def add_to_group(self, name: str, users: Iterable[str]) -> list[str]:
        """Add users to a group (made on first use); returns its members."""
        with self.db.transaction() as tx:
            return groups.add_members(tx, name, users, self.now())

    def remove_from_group(self, name: str, users: Iterable[str] = ()) -> list[str]:
        """Take users out of a group (everyone, when none is named); returns who is left."""
        with self.db.transaction() as tx:
            return groups.remove_members(tx, name, users)

    def list_groups(self) -> dict[str, list[str]]:
        """Every group and its members."""
        with self.db.transaction(write=False) as tx:
            return groups.all_groups(tx)

    def delegate(self, principal: str, *, to: str, until: datetime) -> dict[str, str]:
        """Let ``to`` answer for ``principal`` until ``until``."""
        with self.db.transaction() as tx:
            return groups.delegate(tx, principal, to, until, self.now())

    def revoke_delegation(self, principal: str, *, to: str) -> None:
        """End a delegation now; NotFound if there is none."""
        with self.db.transaction() as tx:
            groups.revoke_delegation(tx, principal, to)

    def list_delegations(self) -> list[dict[str, str]]:
        """The delegations in force."""
        with self.db.transaction(write=False) as tx:
            return groups.delegations(tx, self.now())

    # -- a request's policy, claims and trail ----------------------------------------------

    def interaction_details(self, request_id: str, *, user: str) -> dict[str, Any]:
        """The request with its policy's state and its audit trail, for its requester and
        for those who may decide it (assignees and their delegates)."""
        now = self.now()
        with self.db.transaction(write=False) as tx:
            return _details(tx, request_id, user, now)

    def visible_interaction(self, request_id: str, *, user: str) -> Interaction:
        """The request, for anyone who may see it: its requester, the members of its
        conversation, its assignees and their delegates (NotFound to anyone else). Whether
        they may answer it is the answer's own check."""
        now = self.now()
        with self.db.transaction(write=False) as tx:
            row = sql(tx).one("SELECT * FROM interactions WHERE id = ?", (request_id,))
            if row is None or (row["owner"] != user and not policies.may_see(tx, row, user, now)):
                raise NotFound()
            return Interaction.from_row(row)

    def claim_interaction(self, request_id: str, *, user: str, via: str = "api") -> dict[str, Any]:
        """Take a request on: other assignees see who handles it until the claim runs out."""
        return self._change(assignments.claim, request_id, user=user, via=via)

    def release_interaction(
        self, request_id: str, *, user: str, via: str = "api"
    ) -> dict[str, Any]:
        """Give a claimed request back to all of its assignees."""
        return self._change(assignments.release, request_id, user=user, via=via)

    def reassign_interaction(
        self, request_id: str, to: list[str], *, user: str, via: str = "api"
    ) -> dict[str, Any]:
        """Hand a request to others, within what its requester allowed."""
        now = self.now()
        with self.db.transaction() as tx:
            assignments.reassign(tx, request_id, to, user=user, via=via, now=now)
            return _details(tx, request_id, user, now, after_change=True)

    def _change(self, step: Any, request_id: str, *, user: str, via: str) -> dict[str, Any]:
        now = self.now()
        with self.db.transaction() as tx:
            step(tx, request_id, user=user, via=via, now=now)
            return _details(tx, request_id, user, now)

    def inbox(
        self, *, user: str, which: assignments.InboxFilter = "all"
    ) -> list[assignments.Waiting]:
        """The pending requests waiting for ``user`` (``which="all"``: those they may answer
        now), soonest due first, each with why (:func:`assignments.inbox`)."""
        now = self.now()
        with self.db.transaction(write=False) as tx:
            return assignments.inbox(tx, user, which, now)

    def audit_since(self, start: datetime) -> list[dict[str, Any]]:
        """Every audit step recorded at or after ``start``, oldest first (for an export)."""
        with self.db.transaction(write=False) as tx:
            return list(audit.since(tx, start))

    def sweep_accountability(self) -> dict[str, int]:
        """Send the reminders and take the escalation steps that are due."""
        counts = {"escalated": 0, "reminded": 0}
        now = self.now()
        for name, step in (  # escalate first: a reminder due then reaches the newcomers too
            ("escalated", assignments.escalate_due),
            ("reminded", assignments.remind_due),
        ):
            while True:
                with self.db.transaction() as tx:
                    done = step(tx, now, SWEEP_BATCH)
                counts[name] += done
                if done < SWEEP_BATCH:
                    break
        return counts


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
