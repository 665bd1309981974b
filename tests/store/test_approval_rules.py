"""Approval rules on both backends: a rule allows one call where it applies, is seen and
revoked by its maker or a writer of its conversation, and is unknown to anyone else."""

from __future__ import annotations

import pytest

from pawflow.errors import InvalidAnswer, NotFound
from pawflow.interactions.tool_approval import make_surface
from pawflow.records import Requester
from pawflow.store import Question, Store
from pawflow.store.governance import approvals

CALL = {"environment": "staging", "version": "1.2"}


def test_a_rule_allows_the_same_call_where_it_applies(store: Store) -> None:
    here = store.create_conversation("alice", "here").id
    there = store.create_conversation("alice", "there").id
    with store.transaction() as tx:
        rule = approvals.add_rule(
            tx,
            agent="ops",
            tool="deploy",
            arguments={"version": "1.2", "environment": "staging"},  # key order is not kept
            scope="conversation",
            conversation_id=here,
            user="alice",
            request_id=None,
            now=store.now(),
        )

    def allowed(conversation: str, arguments: dict[str, str], agent: str = "ops") -> bool:
        with store.transaction(write=False) as tx:
            found = approvals.matching_rule(
                tx,
                agent=agent,
                tool="deploy",
                arguments=arguments,
                conversation_id=conversation,
                user="alice",
            )
        return found is not None

    assert allowed(here, CALL)
    assert not allowed(there, CALL)
    assert not allowed(here, {**CALL, "environment": "production"})
    assert not allowed(here, CALL, agent="other")
    with store.transaction() as tx:
        approvals.add_rule(
            tx,
            agent="ops",
            tool="deploy",
            arguments=CALL,
            scope="agent",
            conversation_id=here,
            user="alice",
            request_id=None,
            now=store.now(),
        )
    assert allowed(there, CALL)

    with store.transaction(write=False) as tx:
        assert [r.id for r in approvals.list_rules(tx, "alice", conversation_id=there)] != []
        assert approvals.list_rules(tx, "bob") == []
        with pytest.raises(NotFound):
            approvals.list_rules(tx, "bob", conversation_id=here)
    with store.transaction() as tx, pytest.raises(NotFound):
        approvals.revoke_rule(tx, rule.id, "bob", store.now())
    with store.transaction() as tx:
        revoked = approvals.revoke_rule(tx, rule.id, "alice", store.now())
    assert revoked.revoked_by == "alice" and revoked.revoked_at is not None
    with store.transaction(write=False) as tx:
        assert rule.id not in [r.id for r in approvals.list_rules(tx, "alice")]
        assert rule.id in [r.id for r in approvals.list_rules(tx, "alice", include_revoked=True)]


def test_a_writer_of_the_conversation_sees_and_revokes_its_rules(store: Store) -> None:
    shared = store.create_conversation("alice", "shared").id
    store.share_conversation(shared, user="alice", with_user="bob", access="write")
    with store.transaction() as tx:
        rule = approvals.add_rule(
            tx,
            agent="ops",
            tool="deploy",
            arguments=CALL,
            scope="conversation",
            conversation_id=shared,
            user="alice",
            request_id=None,
            now=store.now(),
        )
        assert [r.id for r in approvals.list_rules(tx, "bob")] == [rule.id]
        assert approvals.revoke_rule(tx, rule.id, "bob", store.now()).revoked_by == "bob"


def test_an_always_allow_is_kept_with_the_decision_that_asked_for_it(store: Store) -> None:
    chat = store.create_conversation("alice", "deploys").id
    surface = make_surface(
        tool="deploy",
        agent="ops",
        description="Deploy.",
        arguments=CALL,
        schema={"type": "object", "properties": {"environment": {"enum": ["staging"]}}},
    )
    asked = store.ask(
        Question(
            "alice",
            chat,
            "confirm",
            "Allow ops to run deploy?",
            ui_surface=surface,
            requester=Requester(type="agent", name="ops"),
        )
    ).interaction
    with pytest.raises(InvalidAnswer) as refused:
        store.respond_interaction(
            asked.id,
            {"decision": "edit", "arguments": {"environment": "prod"}, "always": "agent"},
            user="alice",
        )
    assert [e.path for e in refused.value.errors] == ["arguments.environment"]
    with store.transaction(write=False) as tx:
        assert approvals.list_rules(tx, "alice") == []
    done = store.respond_interaction(
        asked.id, {"decision": "approve", "always": "conversation"}, user="alice"
    )
    assert done.answer["by"] == "alice" and done.answer["digest"].startswith("sha256:")
    with store.transaction(write=False) as tx:
        [rule] = approvals.list_rules(tx, "alice")
    assert (rule.agent, rule.tool, rule.scope, rule.conversation_id, rule.request_id) == (
        "ops",
        "deploy",
        "conversation",
        chat,
        asked.id,
    )
    assert rule.arguments == CALL
