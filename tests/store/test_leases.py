"""Leases: one live owner at a time, renewed by heartbeats, taken over once run out; an
epoch for each time one changes hands; a holder trusts its own for two thirds of its time to
live, by its monotonic clock."""

from __future__ import annotations

from datetime import timedelta

import pytest

from pawflow.clock import FakeClock
from pawflow.errors import LeaseLost, StoreUnavailable
from pawflow.store import Store
from pawflow.store.runtime import queues
from pawflow.store.runtime.leases import Hold, LeaseTerms

TTL = timedelta(seconds=15)


def test_one_owner_at_a_time_until_the_lease_runs_out(store: Store, clock: FakeClock) -> None:
    with store.unit() as u:
        assert u.leases.acquire("flow:d1", "proc-a", TTL)
        assert not u.leases.acquire("flow:d1", "proc-b", TTL)
    clock.advance("10s")
    with store.unit() as u:
        assert u.leases.acquire("flow:d1", "proc-a", TTL)  # a heartbeat renews it
    clock.advance("10s")
    with store.unit() as u:
        assert not u.leases.acquire("flow:d1", "proc-b", TTL)
    clock.advance("6s")
    with store.unit() as u:
        assert u.leases.acquire("flow:d1", "proc-b", TTL)  # the owner went silent: taken over
        assert not u.leases.acquire("flow:d1", "proc-a", TTL)
        [lease] = u.leases.held("flow:")
    assert (lease.name, lease.owner) == ("flow:d1", "proc-b")


def test_release_frees_the_lease_for_the_next_owner(store: Store) -> None:
    with store.unit() as u:
        assert u.leases.acquire("agent:x", "proc-a", TTL)
        assert not u.leases.release("agent:x", "proc-b")
        assert u.leases.release("agent:x", "proc-a")
        assert u.leases.acquire("agent:x", "proc-b", TTL)


def test_live_leases_match_their_prefix_literally(store: Store) -> None:
    with store.unit() as u:
        assert u.leases.acquire("flow:a_b", "p", TTL)
        assert u.leases.acquire("flow:aXb", "p", TTL)
        assert u.leases.acquire("agent:y", "p", TTL)
        assert [lease.name for lease in u.leases.held("flow:a_")] == ["flow:a_b"]
        assert len(u.leases.held()) == 3


def test_a_renewal_never_takes_a_lease_anew(store: Store, clock: FakeClock) -> None:
    with store.unit() as u:
        assert u.leases.acquire("flow:d1", "proc-a", TTL)
    clock.advance("20s")  # run out, and nobody took it: still proc-a's to renew
    with store.unit() as u:
        assert u.leases.renew("flow:d1", "proc-a", TTL)
    clock.advance("20s")
    with store.unit() as u:
        assert u.leases.acquire("flow:d1", "proc-b", TTL)
        assert not u.leases.renew("flow:d1", "proc-a", TTL)
        assert u.leases.release("flow:d1", "proc-b")
        assert not u.leases.renew("flow:d1", "proc-a", TTL)  # gone: taking it is acquire's
        assert u.leases.held("flow:") == []


def test_the_epoch_of_a_lease_is_when_it_last_changed_hands(store: Store, clock: FakeClock) -> None:
    with store.unit() as u:
        assert u.leases.acquire("flow:d1", "proc-a", TTL)
    with store.transaction() as tx:
        epoch = queues.fence(tx, "flow:d1", "proc-a")
    clock.advance("5s")
    with store.unit() as u:
        assert u.leases.renew("flow:d1", "proc-a", TTL, epoch)
    with store.transaction() as tx:
        assert queues.fence(tx, "flow:d1", "proc-a", epoch) == epoch  # renewals keep it
    # Another process takes it over and gives it up; proc-a takes it again.
    clock.advance("20s")
    with store.unit() as u:
        assert u.leases.acquire("flow:d1", "proc-b", TTL)
        assert u.leases.release("flow:d1", "proc-b")
    clock.advance("1s")
    with store.unit() as u:
        assert u.leases.acquire("flow:d1", "proc-a", TTL)
        # What proc-a began under the old epoch can neither renew nor write under the new one.
        assert not u.leases.renew("flow:d1", "proc-a", TTL, epoch)
    with pytest.raises(LeaseLost, match="changed hands"), store.transaction() as tx:
        queues.fence(tx, "flow:d1", "proc-a", epoch)
    with store.transaction() as tx:
        assert queues.fence(tx, "flow:d1", "proc-a") != epoch


def test_a_holder_trusts_its_lease_for_two_thirds_of_its_time_to_live() -> None:
    now = [100.0]
    hold = Hold(LeaseTerms(timedelta(seconds=9)), clock=lambda: now[0])
    assert not hold.valid and hold.due  # not held yet
    began = hold.begin()
    now[0] += 0.5  # the renewal's transaction takes its time: counted from its start
    hold.renewed(began)
    assert hold.valid and not hold.due
    now[0] = 103.0
    assert hold.valid and hold.due  # a third gone: time to renew
    now[0] = 105.9
    assert hold.valid
    now[0] = 106.0
    assert not hold.valid  # two thirds: no more work under it until renewed
    hold.renewed(95.0)  # a renewal that began earlier changes nothing
    assert not hold.valid
    assert hold.confirm(lambda: True) and hold.valid  # renewed there
    now[0] = 120.0
    assert not hold.confirm(lambda: False)  # another has it
    assert not hold.valid and hold.age is None
    now[0] = 121.0
    assert not hold.confirm(_unreachable) and hold.age is None


def _unreachable() -> bool:
    raise StoreUnavailable("the database cannot be reached")
