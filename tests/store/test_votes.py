"""A quorum counts people, not accounts (docs/governance.md#quorum), on both backends: a vote
is recorded under the assignee it counts for, a delegate's under the person she stands for,
the account that cast it kept beside it; a second vote for the same person changes nothing
and is refused with the vote that stands."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from pawflow.errors import AlreadyVoted, Conflict
from pawflow.records import Interaction
from pawflow.store import Question, Store


def _ask(store: Store, assignees: list[str], needed: int = 2, **policy: Any) -> Interaction:
    room = store.create_conversation("req", "Releases")
    return store.ask(
        Question(
            "req",
            room.id,
            "confirm",
            "Ship release 42?",
            policy={"assignees": assignees, "required_approvals": needed, **policy},
        )
    ).interaction


def _delegate(store: Store, principal: str, to: str) -> None:
    with store.unit() as u:
        u.groups.delegate(principal, to=to, until=store.now() + timedelta(days=2))


def _policy(store: Store, asked: Interaction) -> dict[str, Any]:
    with store.unit(write=False) as u:
        details = u.accountability.details(asked.id, user="req")
    policy: dict[str, Any] = details["policy"]
    return policy


@pytest.mark.parametrize("alice_first", [True, False], ids=["alice-first", "bob-first"])
def test_an_assignee_and_her_delegate_are_one_vote(store: Store, alice_first: bool) -> None:
    asked = _ask(store, ["alice", "dave"])
    _delegate(store, "alice", "bob")
    first, second = ("alice", "bob") if alice_first else ("bob", "alice")
    assert store.respond_interaction(asked.id, True, user=first).status == "pending"
    with pytest.raises(AlreadyVoted) as refused:
        store.respond_interaction(asked.id, True, user=second)
    assert isinstance(refused.value, Conflict)  # a 409 over HTTP
    assert refused.value.vote["voter"] == "alice"
    assert refused.value.vote["by"] == first
    assert refused.value.vote["vote"] is True
    policy = _policy(store, asked)
    assert policy["progress"] == "1 of 2 approvals"
    assert [(v["voter"], v["by"]) for v in policy["votes"]] == [("alice", first)]
    assert store.get_interaction(asked.id, user="req").status == "pending"
    done = store.respond_interaction(asked.id, True, user="dave")  # dave's vote decides
    assert (done.status, done.answer) == ("answered", True)


def test_the_trail_says_who_voted_for_whom(store: Store) -> None:
    asked = _ask(store, ["alice", "dave"])
    _delegate(store, "alice", "bob")
    store.respond_interaction(asked.id, True, user="bob")
    store.respond_interaction(asked.id, True, user="dave")
    with store.unit(write=False) as u:
        trail = u.accountability.details(asked.id, user="req")["audit"]
    votes = [(s["actor"], s["detail"]) for s in trail if s["action"] == "voted"]
    assert votes == [("bob", {"vote": True, "for": "alice"}), ("dave", {"vote": True})]
    policy = _policy(store, asked)
    assert [(v["voter"], v["by"]) for v in policy["votes"]] == [("alice", "bob"), ("dave", "dave")]


def test_a_repeated_vote_changes_nothing_and_says_what_stands(store: Store) -> None:
    asked = _ask(store, ["ann", "ben", "cat"], reject="majority")
    store.respond_interaction(asked.id, False, user="ann")
    with pytest.raises(AlreadyVoted) as refused:
        store.respond_interaction(asked.id, True, user="ann")  # a change of mind is no vote
    assert (refused.value.vote["voter"], refused.value.vote["vote"]) == ("ann", False)
    assert "ann" in refused.value.message and "no" in refused.value.message
    policy = _policy(store, asked)
    assert [(v["voter"], v["vote"]) for v in policy["votes"]] == [("ann", False)]


def test_a_delegate_for_two_casts_one_vote(store: Store) -> None:
    """Bob stands for alice and dave: his one account casts one vote, for the first of them
    (in the order of the assignees) who has not voted; never two of the K votes."""
    asked = _ask(store, ["alice", "dave", "erin"])
    _delegate(store, "dave", "bob")
    _delegate(store, "alice", "bob")
    store.respond_interaction(asked.id, True, user="bob")
    with pytest.raises(AlreadyVoted) as refused:
        store.respond_interaction(asked.id, True, user="bob")
    assert (refused.value.vote["voter"], refused.value.vote["by"]) == ("alice", "bob")
    assert _policy(store, asked)["progress"] == "1 of 2 approvals"
    # alice voted herself first: bob's vote counts for dave
    again = _ask(store, ["alice", "dave", "erin"])
    store.respond_interaction(again.id, True, user="alice")
    store.respond_interaction(again.id, True, user="bob")
    done = store.get_interaction(again.id, user="req")
    assert (done.status, done.answer, done.answered_by) == ("answered", True, "bob")
    votes = _policy(store, again)["votes"]
    assert [(v["voter"], v["by"]) for v in votes] == [("alice", "alice"), ("dave", "bob")]


def test_an_assignee_who_is_also_a_delegate_votes_once(store: Store) -> None:
    asked = _ask(store, ["alice", "bob"])
    _delegate(store, "alice", "bob")
    store.respond_interaction(asked.id, True, user="bob")  # for himself, first
    with pytest.raises(AlreadyVoted):
        store.respond_interaction(asked.id, True, user="bob")  # not again, for alice
    votes = _policy(store, asked)["votes"]
    assert [(v["voter"], v["by"]) for v in votes] == [("bob", "bob")]
    done = store.respond_interaction(asked.id, True, user="alice")
    assert done.status == "answered"
