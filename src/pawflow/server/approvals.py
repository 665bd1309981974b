"""Tool approvals over HTTP: the approval rules, and what an approved call ran with.

``list_approval_rules`` lists the "always allow" rules the caller may see (their own, and
those of conversations they are in; ``conversation_id`` narrows to the rules that apply
there); ``revoke_approval_rule`` ends one — its maker or a writer of its conversation may.
``get_tool_approval`` shows one approval request as a whole: the proposed arguments, the
approved (possibly edited) ones, who decided, the digest of what they saw, and the
arguments the tool was run with. A rule or request the caller may not see is 404, exactly
like one that does not exist.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, TypeVar

from fastapi import APIRouter, Body, Depends, Request
from pydantic import BaseModel, StrictBool

from pawflow.errors import NotFound
from pawflow.interactions.tool_approval import is_tool_approval
from pawflow.records import ApprovalRule, Interaction, ToolExecution
from pawflow.server import models as m
from pawflow.server.auth import Principal, caller
from pawflow.server.bodies import StrictJSONRoute
from pawflow.server.context import context_of
from pawflow.server.routes import action_route

router = APIRouter(prefix="/api/actions", route_class=StrictJSONRoute, tags=["approvals"])

Caller = Annotated[Principal, Depends(caller)]
_Handler = TypeVar("_Handler", bound=Callable[..., BaseModel])
_STATUSES = (400, 401, 404, 413, 422, 429, 503)


class ListApprovalRules(m.Body):
    conversation_id: m.Id | None = None
    agent: m.Name | None = None
    include_revoked: StrictBool = False


class RuleRef(m.Body):
    rule_id: m.Id


class ApprovalRules(BaseModel):
    rules: list[ApprovalRule]


class ApprovalRuleEnvelope(BaseModel):
    rule: ApprovalRule


class ToolApproval(BaseModel):
    """One approval request: what was proposed, decided and run."""

    interaction: Interaction
    tool: str
    proposed: dict[str, Any]
    decision: str | None = None
    approved: dict[str, Any] | None = None
    """The arguments approved (as proposed, or edited); None unless approved or edited."""
    decided_by: str | None = None
    digest: str | None = None
    """The digest of what the reviewer saw (the tool, description, proposed arguments and
    schema), stored with the decision."""
    executed: ToolExecution | None = None
    """What the tool was run with; None until it ran."""


def _action(name: str, response: type[BaseModel], summary: str) -> Callable[[_Handler], _Handler]:
    return action_route(router, name, response, summary, _STATUSES)


@_action("list_approval_rules", ApprovalRules, "List the tool approval rules the caller sees")
def list_approval_rules(
    principal: Caller,
    request: Request,
    body: Annotated[ListApprovalRules, Body()] = ListApprovalRules(),  # noqa: B008
) -> ApprovalRules:
    store = context_of(request).store
    with store.unit(write=False) as u:
        found = u.approvals.list_rules(
            principal.user,
            conversation_id=body.conversation_id,
            agent=body.agent,
            include_revoked=body.include_revoked,
        )
    return ApprovalRules(rules=found)


@_action("revoke_approval_rule", ApprovalRuleEnvelope, "Revoke a tool approval rule")
def revoke_approval_rule(
    body: RuleRef, principal: Caller, request: Request
) -> ApprovalRuleEnvelope:
    store = context_of(request).store
    with store.unit() as u:
        rule = u.approvals.revoke_rule(body.rule_id, principal.user)
    return ApprovalRuleEnvelope(rule=rule)


@_action("get_tool_approval", ToolApproval, "Read a tool approval: proposed, approved, run")
def get_tool_approval(body: m.RequestRef, principal: Caller, request: Request) -> ToolApproval:
    store = context_of(request).store
    record = store.get_interaction(body.request_id, user=principal.user)
    surface = record.ui_surface or {}
    if not is_tool_approval(surface):
        raise NotFound()
    with store.unit(write=False) as u:
        executed = u.approvals.execution(record.id)
    answer = record.answer if isinstance(record.answer, dict) else {}
    return ToolApproval(
        interaction=record,
        tool=str(surface.get("tool")),
        proposed=dict(surface.get("arguments") or {}),
        decision=answer.get("decision"),
        approved=answer.get("arguments") if answer.get("decision") in ("approve", "edit") else None,
        decided_by=answer.get("by"),
        digest=answer.get("digest"),
        executed=executed,
    )
