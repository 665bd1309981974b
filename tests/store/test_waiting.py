""" "Waiting for me": one reading of who may answer a request now, the same one answering
applies (docs/governance.md)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from pawflow.errors import Forbidden, InvalidInput, NotFound
from pawflow.store import Question, Store
from pawflow.store.runtime import answering

PEOPLE = ("req", "lee", "lou", "ada", "bob", "carl", "zed")


def _setup(store: Store) -> dict[str, str]:
    with store.unit() as u:
        u.groups.add_members("leads", ["lee", "lou"])
        u.groups.delegate("ada", to="bob", until=store.now() + timedelta(days=1))
    conversation = store.create_conversation("req", title="Deploys").id
    store.share_conversation(conversation, user="req", with_user="carl", access="write")

    def ask(message: str, **policy: object) -> str:
        return store.ask(
            Question("req", conversation, "confirm", message, policy=policy or None)
        ).interaction.id

    return {
        "plain": ask("Plain?"),
        "leads": ask("Leads?", assignees=["group:leads"]),
        "ada": ask("Ada?", assignees=["ada"]),
        "self": ask("Self?", assignees=["req", "lee"]),
        "barred": ask("Barred?", assignees=["req", "lee"], requester_may_answer=False),
        "claimed": ask("Claimed?", assignees=["group:leads", "ada"]),
    }


def _may_answer(store: Store, request_id: str, user: str) -> bool:
    try:
        with store.transaction(write=False) as tx:
            found = answering.read_answering(tx, request_id)
            answering.prepare_answer(tx, found, True, user=user, now=store.now())
    except (Forbidden, NotFound):
        return False
    return True


def test_waiting_for_me_is_what_each_may_answer_and_the_rest_says_for_whom(store: Store) -> None:
    asked = _setup(store)
    with store.unit() as u:
        u.accountability.claim(asked["claimed"], user="lou")
    names = {v: k for k, v in asked.items()}
    for user in PEOPLE:
        with store.unit(write=False) as u:
            waiting = u.accountability.inbox(user=user, which="all")
        answerable = {rid for rid in asked.values() if _may_answer(store, rid, user)}
        if user != "carl":  # a writer of the conversation may answer a plain request, not own it
            assert {w.interaction.id for w in waiting} == answerable, user
    with store.unit(write=False) as u:
        whys = {
            user: {names[w.interaction.id]: w.why for w in u.accountability.inbox(user=user)}
            for user in PEOPLE
        }
    assert whys["req"] == {"plain": "own", "self": "mine"}
    assert whys["lee"] == {"leads": "groups", "self": "mine", "barred": "mine"}
    assert whys["lou"] == {"leads": "groups", "claimed": "claimed"}
    assert whys["bob"] == {"ada": "mine"}  # ada's delegate
    assert whys["ada"] == {"ada": "mine"}  # the claim is lou's
    assert whys["zed"] == {} and whys["carl"] == {}
    with store.unit(write=False) as u:
        others = {
            names[w.interaction.id]: w.waiting_for
            for w in u.accountability.inbox(user="req", which="others")
        }
    assert others == {
        "leads": ["group:leads"],
        "ada": ["ada"],
        "barred": ["req", "lee"],
        "claimed": ["lou"],
    }
    with store.unit(write=False) as u:
        held = u.accountability.inbox(user="ada", which="others")
    assert [(names[w.interaction.id], w.waiting_for) for w in held] == [("claimed", ["lou"])]
    with store.unit(write=False) as u:
        assert u.accountability.inbox(user="zed", which="visible") == []


def test_an_answered_or_expired_request_waits_for_no_one(store: Store) -> None:
    asked = _setup(store)
    store.respond_interaction(asked["leads"], True, user="lee")
    with store.unit(write=False) as u:
        assert [w.why for w in u.accountability.inbox(user="lou")] == ["groups"]
        assert asked["leads"] not in {
            w.interaction.id for w in u.accountability.inbox(user="req", which="visible")
        }


def test_an_unknown_filter_is_refused(store: Store) -> None:
    with pytest.raises(InvalidInput, match="unknown filter"), store.unit(write=False) as u:
        u.accountability.inbox(user="req", which="everything")  # type: ignore[arg-type]
