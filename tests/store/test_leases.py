"""Leases: one live owner at a time, renewed by heartbeats, taken over once run out."""

from __future__ import annotations

from datetime import timedelta

from pawflow.clock import FakeClock
from pawflow.store import Store

TTL = timedelta(seconds=15)


def test_one_owner_at_a_time_until_the_lease_runs_out(store: Store, clock: FakeClock) -> None:
    assert store.acquire_lease("flow:d1", "proc-a", TTL)
    assert not store.acquire_lease("flow:d1", "proc-b", TTL)
    clock.advance("10s")
    assert store.acquire_lease("flow:d1", "proc-a", TTL)  # a heartbeat renews it
    clock.advance("10s")
    assert not store.acquire_lease("flow:d1", "proc-b", TTL)
    clock.advance("6s")
    assert store.acquire_lease("flow:d1", "proc-b", TTL)  # the owner went silent: taken over
    assert not store.acquire_lease("flow:d1", "proc-a", TTL)
    [lease] = store.live_leases("flow:")
    assert (lease.name, lease.owner) == ("flow:d1", "proc-b")


def test_release_frees_the_lease_for_the_next_owner(store: Store) -> None:
    assert store.acquire_lease("agent:x", "proc-a", TTL)
    assert not store.release_lease("agent:x", "proc-b")
    assert store.release_lease("agent:x", "proc-a")
    assert store.acquire_lease("agent:x", "proc-b", TTL)


def test_live_leases_match_their_prefix_literally(store: Store) -> None:
    assert store.acquire_lease("flow:a_b", "p", TTL)
    assert store.acquire_lease("flow:aXb", "p", TTL)
    assert store.acquire_lease("agent:y", "p", TTL)
    assert [lease.name for lease in store.live_leases("flow:a_")] == ["flow:a_b"]
    assert len(store.live_leases()) == 3
