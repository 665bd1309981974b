"""A tool approval with a policy (``approval: {assignees, on_expire, …}`` in agents.yaml):
it waits for its assignees, and a default nobody gave reads as a policy's, not a person's."""

from __future__ import annotations

import dataclasses
from datetime import timedelta

import pytest

from pawflow.agent import AgentSpec, ScriptedModel
from pawflow.agent.config import ToolConfig
from pawflow.agent.tools import Tool
from pawflow.chat.service import ChatService
from pawflow.clock import FakeClock
from pawflow.errors import Forbidden, InvalidInput
from pawflow.interactions.tool_approval import make_surface
from pawflow.records import Conversation
from pawflow.store import Question, Store
from tests.agent.conftest import HELPER_SCRIPT, USER, Deleter, say

POLICY = {"assignees": ["ada"], "expires_in": "3d", "on_expire": {"answer": False}}


@pytest.fixture
def helper(deleter: Deleter) -> AgentSpec:
    tool = Tool.from_function(deleter.delete_files, consequential=True)
    return AgentSpec(
        name="helper",
        instructions="You help.",
        model=ScriptedModel(HELPER_SCRIPT),
        tools=[dataclasses.replace(tool, approval_policy=POLICY)],
    )


def test_the_default_nobody_gave_reads_as_the_policys(
    store: Store, service: ChatService, conversation: Conversation, deleter: Deleter
) -> None:
    service.assign(conversation.id, "helper")
    say(store, service, conversation.id, "clean up the temp files")
    [request] = store.list_interactions(user=USER, status="pending")
    with pytest.raises(Forbidden):  # it waits for ada, not for the one who asked
        store.respond_interaction(request.id, True, user=USER)
    assert isinstance(store.clock, FakeClock)
    store.clock.advance(timedelta(days=3, seconds=1))
    assert store.sweep()["expired"] == 1  # the sweep also runs the agent's wakeup
    record = store.get_interaction(request.id, user=USER)
    assert (record.answer, record.answered_by, record.answered_via) == (
        False,
        None,
        "policy:on_expire",
    )
    [wakeup] = service.wakeups_of(conversation.id)
    assert "No one answered" in wakeup.text
    assert "within 3 days; the default `false` was applied" in wakeup.text
    assert wakeup.data["answered_via"] == "policy:on_expire"
    assert deleter.calls == []


def test_a_bad_approval_policy_fails_the_load() -> None:
    assert ToolConfig.model_validate({"name": "x", "approval": POLICY}).approval_policy() == POLICY
    with pytest.raises(InvalidInput):
        ToolConfig.model_validate(
            {"name": "x", "approval": {"assigness": ["ada"]}}
        ).approval_policy()


def test_a_quorum_on_a_tool_call_counts_decisions(store: Store) -> None:
    conversation = store.create_conversation(USER, "Quorum").id
    surface = make_surface(
        tool="delete_files", agent="helper", description="Delete.", arguments={}, schema={}
    )
    policy = {"assignees": ["ada", "bob", "cy"], "required_approvals": 2, "reject": "majority"}
    asks = [
        store.ask(
            Question(USER, conversation, "confirm", "Allow?", ui_surface=surface, policy=policy)
        ).interaction
        for _ in range(2)
    ]
    store.respond_interaction(asks[0].id, {"decision": "approve"}, user="ada")
    store.respond_interaction(asks[0].id, {"decision": "approve"}, user="bob")
    store.respond_interaction(asks[1].id, {"decision": "reject"}, user="ada")
    store.respond_interaction(asks[1].id, {"decision": "reject"}, user="bob")
    approved, rejected = (store.get_interaction(a.id, user=USER) for a in asks)
    assert approved.answer["decision"] == "approve"
    assert rejected.answer["decision"] == "reject"


def test_a_quorum_takes_votes_not_edits_and_the_deciding_no_keeps_its_reason(
    store: Store,
) -> None:
    conversation = store.create_conversation(USER, "Quorum").id
    surface = make_surface(
        tool="delete_files",
        agent="helper",
        description="Delete.",
        arguments={"path": "/tmp"},
        schema={"type": "object", "properties": {"path": {"type": "string"}}},
    )
    policy = {"assignees": ["ada", "bob", "cy"], "required_approvals": 2, "reject": "majority"}
    ask = store.ask(
        Question(USER, conversation, "confirm", "Allow?", ui_surface=surface, policy=policy)
    ).interaction
    for decision in (
        {"decision": "edit", "arguments": {"path": "/var/tmp"}},
        {"decision": "respond", "text": "done by hand"},
    ):
        with pytest.raises(InvalidInput) as refused:
            store.respond_interaction(ask.id, decision, user="ada")
        assert [e.path for e in refused.value.errors] == ["decision"]
        assert "needs 2 approvals" in refused.value.message
    assert store.get_interaction(ask.id, user=USER).status == "pending"  # no vote was taken
    store.respond_interaction(ask.id, {"decision": "reject", "reason": "not yet"}, user="ada")
    store.respond_interaction(ask.id, {"decision": "reject", "reason": "use dist/"}, user="bob")
    record = store.get_interaction(ask.id, user=USER)
    assert record.answer["decision"] == "reject"
    assert record.answer["reason"] == "use dist/"
    assert record.answer["by"] == "bob"
