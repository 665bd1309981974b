"""A deployed flow's worker runs no task under a lease it cannot trust.

Before each task of a batch the worker checks, by the monotonic clock, that the lease was
renewed recently enough. Here the clock the lease is measured by jumps past two thirds of its
time to live during the third task of a batch of ten, as a process frozen there would see it
on waking. If another process took the deployment meanwhile, the worker runs none of the
seven left and the batch records nothing: the new owner runs it. If nobody did, the worker
renews the lease there and runs the rest.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import timedelta

import pytest

from pawflow.clock import FakeClock
from pawflow.flow import FlowFile, TaskContext, flow_task
from pawflow.flow import deployments as deps
from pawflow.flow.instance import FlowInstance
from pawflow.flow.status import deployment_status
from pawflow.flow.task import FlowScope
from pawflow.store import Store
from pawflow.store.runtime.leases import Hold, LeaseTerms
from pawflow.testing import eventually

TERMS = LeaseTerms(timedelta(seconds=6))
COUNT = 10
FROZEN_AT = 3


class Scene:
    """What the tasks did, and what happens during the third one."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.ran: list[str] = []
        self.during_third: Callable[[], object] = lambda: None


SCENES: dict[str, Scene] = {}


@flow_task("fencedChargeTen")
def charge_ten(flowfile: FlowFile, ctx: TaskContext) -> list[FlowFile]:
    """Ten charges to make, one FlowFile each (a batch of ten for the next task)."""
    return [flowfile.child(update={"charge": str(n)}) for n in range(COUNT)]


@flow_task("fencedChargeOnce")
def charge_once(flowfile: FlowFile, ctx: TaskContext) -> FlowFile:
    scene = SCENES[ctx.runtime.flow_name]
    scene.ran.append(flowfile.id)
    if len(scene.ran) == FROZEN_AT:
        scene.now += TERMS.seconds  # "frozen" past the lease
        scene.during_third()
    return flowfile


FLOW = """
name: fenced-{backend}
queue_capacity: 100
tasks:
  fan:
    type: fencedChargeTen
    next: charge
  charge:
    type: fencedChargeOnce
"""


@pytest.fixture
def running(
    store: Store, backend: str, conversation: str
) -> Iterator[tuple[Scene, FlowInstance, str]]:
    text = FLOW.format(backend=backend)
    deployment, _ = deps.deploy(store, text, conversation_id=conversation)
    scene = SCENES[f"fenced-{backend}"] = Scene()
    target = f"flow:{deployment.id}"
    hold = Hold(TERMS, clock=lambda: scene.now)
    began = hold.begin()
    with store.unit() as u:
        assert u.leases.acquire(target, "this-process", TERMS.ttl)
    hold.renewed(began)
    instance = FlowInstance(
        deployment.id,
        deployment.load(),
        store=store,
        scope=FlowScope("alice", conversation),
        owner="this-process",
        hold=hold,
    )
    instance.start()
    try:
        yield scene, instance, target
    finally:
        instance.stop()


def test_a_worker_whose_deployment_moved_while_it_was_frozen_runs_nothing_more(
    store: Store, clock: FakeClock, running: tuple[Scene, FlowInstance, str]
) -> None:
    scene, instance, target = running

    def taken_over() -> None:
        clock.advance(TERMS.ttl * 2)
        with store.unit() as u:
            assert u.leases.acquire(target, "another-process", TERMS.ttl)

    scene.during_third = taken_over
    instance.inject(FlowFile.create())
    eventually(lambda: instance.lost)
    assert len(scene.ran) == FROZEN_AT  # none of the seven left ran here
    assert instance.endings() == []
    # The batch stays taken in the store, for the new owner to queue again and run.
    assert deployment_status(store, instance.id).tasks["charge"]["running"] == COUNT


def test_a_worker_whose_lease_nobody_took_renews_it_and_runs_the_rest(
    store: Store, clock: FakeClock, running: tuple[Scene, FlowInstance, str]
) -> None:
    scene, instance, target = running
    scene.during_third = lambda: clock.advance("1s")
    instance.inject(FlowFile.create())
    eventually(lambda: len(instance.endings()) == COUNT)
    assert len(scene.ran) == COUNT and not instance.lost
    with store.unit(write=False) as u:
        [lease] = u.leases.held(target)
    assert lease.expires_at == clock.now() + TERMS.ttl  # renewed before the fourth task
