"""Leases: one live owner at a time, renewed by heartbeats, taken over once run out."""

from __future__ import annotations

from datetime import timedelta

from pawflow.clock import FakeClock
from pawflow.store import Store

TTL = timedelta(seconds=15)


def test_one_owner_at_a_time_until_the_lease_runs_out(store: Store, clock: FakeClock) -> None:
    assert store.leases.acquire("flow:d1", "proc-a", TTL)
    assert not store.leases.acquire("flow:d1", "proc-b", TTL)
    clock.advance("10s")
    assert store.leases.acquire("flow:d1", "proc-a", TTL)  # a heartbeat renews it
    clock.advance("10s")
    assert not store.leases.acquire("flow:d1", "proc-b", TTL)
    clock.advance("6s")
    assert store.leases.acquire("flow:d1", "proc-b", TTL)  # the owner went silent: taken over
    assert not store.leases.acquire("flow:d1", "proc-a", TTL)
    [lease] = store.leases.live("flow:")
    assert (lease.name, lease.owner) == ("flow:d1", "proc-b")


def test_release_frees_the_lease_for_the_next_owner(store: Store) -> None:
    assert store.leases.acquire("agent:x", "proc-a", TTL)
    assert not store.leases.release("agent:x", "proc-b")
    assert store.leases.release("agent:x", "proc-a")
    assert store.leases.acquire("agent:x", "proc-b", TTL)


def test_live_leases_match_their_prefix_literally(store: Store) -> None:
    assert store.leases.acquire("flow:a_b", "p", TTL)
    assert store.leases.acquire("flow:aXb", "p", TTL)
    assert store.leases.acquire("agent:y", "p", TTL)
    assert [lease.name for lease in store.leases.live("flow:a_")] == ["flow:a_b"]
    assert len(store.leases.live()) == 3
