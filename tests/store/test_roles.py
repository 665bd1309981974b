"""Roles, the admins' trail, sign-ins under way and the provider's groups, on both backends."""

from __future__ import annotations

from datetime import timedelta

import pytest

from pawflow.clock import FakeClock
from pawflow.errors import Conflict, NotFound
from pawflow.store import Store
from pawflow.store.governance import administration
from pawflow.store.ledger.conversations import ensure_user
from pawflow.store.people import groups, roles, sign_in


def test_the_first_user_is_the_admin_and_the_next_are_members(store: Store) -> None:
    with store.transaction() as tx:
        for name in ("ada", "bo", "cy"):
            ensure_user(tx, name, store.now())
        assert roles.admins(tx) == ["ada"]
        assert [u.role for u in roles.users(tx)] == ["admin", "member", "member"]
        assert roles.set_role(tx, "bo", "admin", source="provider").role_source == "provider"
        assert roles.admins(tx) == ["ada", "bo"]
        with pytest.raises(NotFound):
            roles.set_role(tx, "nobody", "admin")


def test_the_admins_trail_is_filtered_by_actor_action_target_and_time(
    store: Store, clock: FakeClock
) -> None:
    origin = roles.Origin(address="10.0.0.7", user_agent="ua", via="web")
    with store.transaction() as tx:
        roles.record(tx, "ada", "user.add", clock.now(), target="bo", origin=origin)
    clock.advance(timedelta(hours=1))
    middle = clock.now()
    with store.transaction() as tx:
        roles.record(tx, "bo", "group.add", clock.now(), target="group:x", detail={"n": 1})
    with store.transaction(write=False) as tx:
        every = list(roles.trail(tx, roles.AuditFilter(), batch=1))
        assert [e["action"] for e in every] == ["user.add", "group.add"]
        assert every[0]["address"] == "10.0.0.7" and every[0]["detail"] == {"via": "web"}
        assert every[1]["detail"] == {"n": 1, "via": "cli"}
        assert [e["actor"] for e in roles.trail(tx, roles.AuditFilter(actor="bo"))] == ["bo"]
        assert [e["target"] for e in roles.trail(tx, roles.AuditFilter(target="bo"))] == ["bo"]
        later = roles.AuditFilter(since=middle)
        assert [e["action"] for e in roles.trail(tx, later)] == ["group.add"]
        assert [e["actor"] for e in roles.trail(tx, roles.AuditFilter(until=middle))] == ["ada"]


def test_a_sign_in_under_way_is_used_once_and_not_after_it_expires(
    store: Store, clock: FakeClock
) -> None:
    attempt = sign_in.Attempt("nonce", "verifier")
    soon = clock.now() + timedelta(minutes=10)
    with store.transaction() as tx:
        sign_in.add_attempt(tx, "a", attempt, now=clock.now(), expires_at=soon)
        sign_in.add_attempt(tx, "b", attempt, now=clock.now(), expires_at=soon)
        assert sign_in.use_attempt(tx, "a", now=clock.now()) == attempt
        assert sign_in.use_attempt(tx, "a", now=clock.now()) is None
    clock.advance(timedelta(minutes=11))
    with store.transaction() as tx:
        assert sign_in.use_attempt(tx, "b", now=clock.now()) is None


def test_the_providers_groups_follow_the_claim_and_refuse_hand_edits(store: Store) -> None:
    now = store.now()
    with store.transaction() as tx:
        ensure_user(tx, "ann", now)
        groups.add_members(tx, "local-team", ["ann"], now)
        joined, left = sign_in.sync_groups(
            tx, "ann", ["ops", "bad name!", "ops"], issuer="https://id", now=now
        )
        assert (joined, left) == (["ops"], [])
        assert sign_in.sync_groups(tx, "ann", ["qa"], issuer="https://id", now=now) == (
            ["qa"],
            ["ops"],
        )
        assert groups.groups_of(tx, "ann") == ["local-team", "qa"]
        assert sign_in.is_provider_group(tx, "ops") and not sign_in.is_provider_group(
            tx, "local-team"
        )
        with pytest.raises(Conflict, match="identity provider"):
            groups.add_members(tx, "qa", ["ann"], now)
        with pytest.raises(Conflict, match="identity provider"):
            groups.remove_members(tx, "qa", ["ann"])
        sign_in.link_identity(tx, "https://id", "sub-1", "ann", now=now)
        assert sign_in.identity_user(tx, "https://id", "sub-1") == "ann"
        assert sign_in.identity_user(tx, "https://other", "sub-1") is None


def test_the_admin_listings_reach_every_user(store: Store) -> None:
    with store.transaction() as tx:
        assert administration.outbox_counts(tx) == {}
        assert administration.approval_rules(tx) == []
        assert administration.webhooks(tx) == []
        with pytest.raises(NotFound):
            administration.remove_webhook(tx, "nope")
