"""One door: ``Store.unit()`` binds the store's tables to one transaction and its clock."""

from __future__ import annotations

from datetime import timedelta

import pytest

from pawflow.clock import FakeClock
from pawflow.store import Store, Unit

TTL = timedelta(seconds=15)


def test_what_a_unit_does_commits_together(store: Store, clock: FakeClock) -> None:
    with store.unit() as u:
        assert u.now() == clock.now()
        assert u.leases.acquire("flow:d1", "proc-a", TTL)
        assert u.leases.acquire("flow:d2", "proc-a", TTL)
    with store.unit(write=False) as u:
        assert [lease.name for lease in u.leases.held("flow:")] == ["flow:d1", "flow:d2"]


def test_a_unit_that_raises_leaves_nothing_behind(store: Store) -> None:
    with pytest.raises(RuntimeError), store.unit() as u:
        assert u.leases.acquire("flow:d1", "proc-a", TTL)
        raise RuntimeError("changed my mind")
    with store.unit(write=False) as u:
        assert u.leases.get("flow:d1") is None


def test_a_unit_within_an_open_transaction_commits_with_it(store: Store) -> None:
    with pytest.raises(RuntimeError), store.unit() as outer:
        with store.unit(tx=outer.tx) as inner:
            assert inner.leases.acquire("flow:d1", "proc-a", TTL)
        assert outer.leases.get("flow:d1") is not None  # the same transaction sees it
        raise RuntimeError("roll back both")
    with store.unit(write=False) as u:
        assert u.leases.get("flow:d1") is None


def test_tables_of_one_unit_share_its_transaction(store: Store) -> None:
    with store.unit() as u:
        conversation = u.conversations.create_conversation(
            u.conversations.ensure_user("ada"), "notes"
        )
        assert u.turns.assigned_agent(conversation.id) is None
        u.turns.assign_agent(conversation.id, "scribe")
        assert u.turns.assigned_agent(conversation.id) == "scribe"
    with store.unit(write=False) as u:
        assert u.turns.assigned_agent(conversation.id) == "scribe"


def test_a_unit_on_a_handed_transaction_runs_at_the_instant_it_is_given(
    store: Store, clock: FakeClock
) -> None:
    then = clock.now() - timedelta(hours=1)
    with store.transaction() as tx:
        assert Unit(tx, then).leases.acquire("flow:d1", "proc-a", TTL)
        lease = Unit(tx, clock.now).leases.get("flow:d1")
    assert lease is not None and lease.expires_at == then + TTL
