"""The tables of governance: a request's claims and details, approval rules, and the
administrator's views."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pawflow.records import ApprovalRule, Interaction
from pawflow.store.governance import accountability as _accountability
from pawflow.store.governance import administration as _administration
from pawflow.store.governance import approvals as _approvals
from pawflow.store.governance.assignments import InboxFilter, Waiting
from pawflow.store.unit.binding import Table, bound

__all__ = ["AccountabilityTable", "AdministrationTable", "ApprovalsTable"]


class AccountabilityTable(Table):
    """A request's claims and hand-overs, its details and who may see it."""

    def details(self, request_id: str, *, user: str) -> dict[str, Any]:
        return _accountability.details(self.tx, request_id, user=user, now=self.now())

    def visible(self, request_id: str, *, user: str) -> Interaction:
        return _accountability.visible(self.tx, request_id, user=user, now=self.now())

    def claim(self, request_id: str, *, user: str, via: str = "api") -> dict[str, Any]:
        return _accountability.claim(self.tx, request_id, user=user, via=via, now=self.now())

    def release(self, request_id: str, *, user: str, via: str = "api") -> dict[str, Any]:
        return _accountability.release(self.tx, request_id, user=user, via=via, now=self.now())

    def reassign(
        self, request_id: str, to: list[str], *, user: str, via: str = "api"
    ) -> dict[str, Any]:
        return _accountability.reassign(self.tx, request_id, to, user=user, via=via, now=self.now())

    def inbox(self, *, user: str, which: InboxFilter = "all") -> list[Waiting]:
        return _accountability.inbox(self.tx, user=user, which=which, now=self.now())


class AdministrationTable(Table):
    """The administrator's views across users (webhooks, rules, outbox)."""

    webhooks = bound(_administration.webhooks)
    remove_webhook = bound(_administration.remove_webhook)
    approval_rules = bound(_administration.approval_rules)

    def revoke_rule(self, rule_id: str, by: str) -> str:
        return _administration.revoke_rule(self.tx, rule_id, by, self.now())

    outbox_counts = bound(_administration.outbox_counts)


class ApprovalsTable(Table):
    """Approval rules of tools and their recorded executions."""

    def add_rule(
        self,
        *,
        agent: str,
        tool: str,
        arguments: Mapping[str, Any],
        scope: str,
        conversation_id: str,
        user: str,
        request_id: str | None,
    ) -> ApprovalRule:
        return _approvals.add_rule(
            self.tx,
            agent=agent,
            tool=tool,
            arguments=arguments,
            scope=scope,
            conversation_id=conversation_id,
            user=user,
            request_id=request_id,
            now=self.now(),
        )

    matching_rule = bound(_approvals.matching_rule)
    list_rules = bound(_approvals.list_rules)

    def revoke_rule(self, rule_id: str, user: str) -> ApprovalRule:
        return _approvals.revoke_rule(self.tx, rule_id, user, self.now())

    def record_execution(
        self, request_id: str, *, tool: str, arguments: Mapping[str, Any], run_id: str | None
    ) -> bool:
        return _approvals.record_execution(
            self.tx, request_id, tool=tool, arguments=arguments, run_id=run_id, now=self.now()
        )

    execution = bound(_approvals.execution)

    def keep_rule(self, record: Interaction, decision: dict[str, Any]) -> None:
        _approvals.keep_rule(self.tx, record, decision, self.now())
