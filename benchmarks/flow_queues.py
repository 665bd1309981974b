"""FlowFiles per second through a three-task flow: durable queues against in-memory queues.

In memory: a one-shot run (``run_batch``) of the FlowFiles, as deployed flows ran before.
Durable: a deployed instance on SQLite (and on a throwaway PostgreSQL database when the
server is there), from handing it the same FlowFiles (one transaction) until the last one has
left the flow; every task boundary is then a row in the store, taken and passed on in
transactions. The goal: durable queues at least 0.6x as fast as in-memory ones, the ratio
taken over pairs of runs back to back.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

from common import Run, postgres_db

from pawflow import open_store
from pawflow.flow import FlowFile, FlowService, parse_flow, run_batch
from pawflow.flow import deployments as deps

FLOWFILES = 5000
GOAL = 0.6
"""The least share of the in-memory rate the durable queues are to reach."""
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


def durable(url: str, count: int = FLOWFILES) -> float:
    """Seconds for ``count`` FlowFiles queued in the store at ``url`` through a deployed
    instance."""
    with open_store(url) as store:
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


HELD = 60
FAN_IN = """
name: fan-in
queue_capacity: {capacity}
tasks:
  wait:
    type: durableWait
    properties: {{signal_id: go}}
    next: done
  done: {{type: updateAttribute, properties: {{set: {{done: "1"}}}}}}
"""


def resumed_by_one_answer(path: Path, capacity: int, count: int = HELD) -> float:
    """Seconds from one signal resuming ``count`` parked FlowFiles until all have ended,
    into queues of ``capacity`` (backpressure holds back what does not fit)."""
    with open_store(f"sqlite:///{path}") as store:
        conversation = store.create_conversation("bench").id
        text = FAN_IN.format(capacity=capacity)
        deployment, _ = deps.deploy(store, text, conversation_id=conversation)
        service = FlowService(store, reconcile_interval=None)
        service.start()
        instance = service.instance(deployment.id)
        if instance is None:
            raise SystemExit("the deployment did not start")
        for flowfile in _flowfiles(count):
            instance.inject(flowfile)
            while not instance.engine.wait_until_idle(60) or instance.engine.queued():
                pass
        target = instance.engine.target
        while store.pending_continuations(target) < count:
            time.sleep(0.001)
        started = time.perf_counter()
        store.notify_signal("go", "now")
        deadline = started + 600
        while sum(instance.engine.ended.values()) < count:
            if time.perf_counter() > deadline:
                raise SystemExit("held FlowFiles did not all end within 10 minutes")
            time.sleep(0.001)
        elapsed = time.perf_counter() - started
        service.stop()
        return elapsed


def backpressure(root: Path) -> tuple[float, float]:
    tiny = resumed_by_one_answer(root / "tiny.db", 3)
    roomy = resumed_by_one_answer(root / "roomy.db", 10_000)
    print(
        f"{HELD} FlowFiles resumed by one answer, queue_capacity 3: {tiny:.2f} s"
        "  (goal: at most 2 s)"
    )
    print(f"the same, queue_capacity 10000: {roomy:.3f} s  (goal: about 0.02 s)")
    return tiny, roomy


def report(
    root: Path, pairs: int = 5, *, postgres: bool = False
) -> dict[str, tuple[float, float, float]]:
    """Runs in pairs, back to back, so that both sides see the same machine load: for each
    backend, the ratio durable : in-memory (the median over the pairs), and the best
    FlowFiles/s of the durable queues and of the in-memory ones."""
    memory: list[float] = []
    stored: dict[str, list[float]] = {"sqlite": []}
    if postgres:
        stored["postgres"] = []
    for n in range(pairs):
        memory.append(in_memory())
        stored["sqlite"].append(durable(f"sqlite:///{root / f'queues{n}.db'}"))
        if postgres:
            with postgres_db() as url:
                stored["postgres"].append(durable(url))
    fastest = FLOWFILES / min(memory)
    print(f"three-task flow, in-memory queues: {fastest:,.0f} FlowFiles/s")
    found = {}
    for backend, name in (("sqlite", "SQLite"), ("postgres", "PostgreSQL")):
        if backend not in stored:
            continue
        took = stored[backend]
        ratio = statistics.median(m / s for m, s in zip(memory, took, strict=True))
        found[backend] = (ratio, FLOWFILES / min(took), fastest)
        print(f"three-task flow, durable queues ({name}): {found[backend][1]:,.0f} FlowFiles/s")
        print(
            f"ratio durable ({name}) : in-memory (median of {pairs} pairs):"
            f" {ratio:.2f}  (goal: at least {GOAL})"
        )
    return found


def section(run: Run) -> None:
    run.heading("Flows: durable queues against in-memory ones")
    found = report(run.scratch, pairs=run.n(5, 1), postgres=run.postgres)
    for backend, (ratio, rate, memory) in found.items():
        measured = f"{ratio:.2f}x ({rate:,.0f} vs {memory:,.0f} FlowFiles/s)"
        run.row(f"flows_{backend}", measured, ratio >= GOAL)
    if not run.postgres:
        run.row("flows_postgres", "no PostgreSQL reachable", None)
    tiny, roomy = backpressure(run.scratch)
    run.row("backpressure", f"{tiny:.2f} s (queue_capacity 10000: {roomy:.3f} s)", tiny <= 2)


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as scratch:
        report(Path(scratch))
        backpressure(Path(scratch))
