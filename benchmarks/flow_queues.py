"""FlowFiles per second through a three-task flow: durable queues against in-memory queues.

In memory: a one-shot run (``run_batch``) of the FlowFiles, as deployed flows ran before.
Durable: a deployed instance on SQLite, from handing it the same FlowFiles (one transaction)
until the last one has left the flow; every task boundary is then a row in the store, taken
and passed on in transactions.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

from common import Run

from pawflow import open_store
from pawflow.flow import FlowFile, FlowService, parse_flow, run_batch
from pawflow.flow import deployments as deps

FLOWFILES = 5000
FLOW = """
name: three-steps
queue_capacity: 100000
tasks:
  one:
    type: updateAttribute
    properties: {set: {one: "1"}}
    next: two
  two:
    type: updateAttribute
    properties: {set: {two: "${one}2"}}
    next: three
  three:
    type: updateAttribute
    properties: {set: {three: "${two}3"}}
"""


def _flowfiles(count: int) -> list[FlowFile]:
    return [FlowFile.create(f"payload {n}", {"n": str(n)}) for n in range(count)]


def in_memory(count: int = FLOWFILES) -> float:
    """Seconds for ``count`` FlowFiles through the flow on in-memory queues."""
    flowfiles = _flowfiles(count)
    started = time.perf_counter()
    result = run_batch(parse_flow(FLOW), flowfiles)
    elapsed = time.perf_counter() - started
    if len(result.endings) != count:
        raise SystemExit(f"only {len(result.endings)} of {count} FlowFiles ended")
    return elapsed


def durable(path: Path, count: int = FLOWFILES) -> float:
    """Seconds for ``count`` FlowFiles queued in the store through a deployed instance."""
    with open_store(f"sqlite:///{path}") as store:
        conversation = store.create_conversation("bench").id
        deployment, _ = deps.deploy(store, FLOW, conversation_id=conversation)
        flowfiles = _flowfiles(count)
        service = FlowService(store, reconcile_interval=None)
        service.start()
        instance = service.instance(deployment.id)
        if instance is None:
            raise SystemExit("the deployment did not start")
        started = time.perf_counter()
        instance.inject_many(flowfiles)
        while not instance.engine.wait_until_idle(60) or instance.engine.queued():
            pass
        elapsed = time.perf_counter() - started
        ended = sum(instance.engine.ended.values())
        service.stop()
        if ended != count:
            raise SystemExit(f"only {ended} of {count} FlowFiles ended")
        return elapsed


def report(root: Path, pairs: int = 5) -> None:
    """Runs in pairs, back to back, so that both sides see the same machine load."""
    memory, stored = [], []
    for n in range(pairs):
        memory.append(in_memory())
        stored.append(durable(root / f"queues{n}.db"))
    ratio = statistics.median(m / s for m, s in zip(memory, stored, strict=True))
    print(f"three-task flow, in-memory queues: {FLOWFILES / min(memory):,.0f} FlowFiles/s")
    print(f"three-task flow, durable queues (SQLite): {FLOWFILES / min(stored):,.0f} FlowFiles/s")
    print(f"ratio durable : in-memory (median of {pairs} pairs): {ratio:.2f}  (goal: at least 0.5)")


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as scratch:
        report(Path(scratch))


def section(run: Run) -> None:
    run.heading("Flows: durable queues against in-memory ones")
    report(run.scratch, pairs=run.n(5, 1))
