"""Durable queues inside one test process: backpressure and counts, takeover, spreading,
a batch's record that takes the next batch, the hop limit of one-shot runs, and what
``pawflow flow list``/``status`` show.

A second ``Store`` on the same database stands for a second server process.
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pawflow import FakeClock, Store, Undeliverable, open_store, telemetry
from pawflow.cli import app
from pawflow.flow import (
    Ending,
    FlowFile,
    FlowService,
    HopLimitReached,
    Property,
    TaskContext,
    flow_task,
)
from pawflow.flow import deployments as deps
from pawflow.flow.definition import parse_flow
from pawflow.flow.engine import run_batch
from pawflow.flow.status import deployment_status
from pawflow.store.unit.runtime import QueuesTable
from pawflow.testing import eventually
from tests.store.test_concurrency import store_url

runner = CliRunner()
GATES: dict[str, threading.Event] = {}


@flow_task("gate", properties=[Property("name", "static", required=True)])
def gate(flowfile: FlowFile, ctx: TaskContext) -> FlowFile:
    """Waits until the test opens the gate named ``name``."""
    GATES[ctx.value("name")].wait(20)
    return flowfile.evolve(update={"gate.attempt": str(ctx.attempt)})


GATED = """
name: gated-{gate}
queue_capacity: 2
tasks:
  pass:
    type: gate
    properties: {{name: {gate}}}
    next: done
  done:
    type: updateAttribute
    properties: {{set: {{through: "yes"}}}}
"""


@pytest.fixture
def other(store: Store, tmp_path: Path, clock: FakeClock) -> Iterator[Store]:
    """The same database as ``store``, opened as another process would."""
    with open_store(store_url(store, tmp_path), clock=clock) as opened:
        yield opened


def counts(store: Store, deployment_id: str) -> dict[str, dict[str, int]]:
    return deployment_status(store, deployment_id).tasks


def test_a_taken_over_deployment_runs_its_work_once_more_and_the_old_owner_records_nothing(
    store: Store, other: Store, clock: FakeClock, conversation: str
) -> None:
    name = f"takeover-{store.dialect}"
    opened = GATES[name] = threading.Event()
    first = FlowService(store, reconcile_interval=None)
    second = FlowService(other, reconcile_interval=None)
    try:
        first.start()
        text = GATED.format(gate=name)
        deployment, _ = deps.deploy(store, text, conversation_id=conversation)
        first.reconcile()
        instance = first.instance(deployment.id)
        assert instance is not None
        sent = [FlowFile.create(attributes={"n": str(i)}) for i in range(3)]
        instance.inject(sent[0])
        eventually(lambda: counts(store, deployment.id)["pass"]["running"] == 1)
        instance.inject(sent[1])
        instance.inject(sent[2])
        # Backpressure counts what the durable queue holds.
        with pytest.raises(Undeliverable, match="backpressure"):
            instance.inject(FlowFile.create())
        assert counts(store, deployment.id) == {
            "pass": {"queued": 2, "running": 1, "parked": 0},
            "done": {"queued": 0, "running": 0, "parked": 0},
        }

        second.start()
        assert second.instance(deployment.id) is None  # the first process holds it
        clock.advance("1m")  # the first process stops renewing its leases, as if it died
        second.reconcile()
        taken = second.instance(deployment.id)
        assert taken is not None
        opened.set()

        def all_three() -> list[Ending] | None:
            found = taken.endings()
            return found if len(found) == 3 else None

        endings = eventually(all_three)
        assert sorted(e.flowfile.id for e in endings) == sorted(f.id for f in sent)
        assert all(e.flowfile.attributes["through"] == "yes" for e in endings)
        attempts = {e.flowfile.id: e.flowfile.attributes["gate.attempt"] for e in endings}
        # The FlowFile that was running when the first process "died" runs again.
        assert attempts == {sent[0].id: "2", sent[1].id: "1", sent[2].id: "1"}
        # The first process's run of it cannot record anything any more.
        eventually(lambda: instance.lost)
        assert instance.endings() == []
        first.reconcile()
        assert first.instance(deployment.id) is None
        assert taken.wait_idle()
        assert all(not any(c.values()) for c in counts(store, deployment.id).values())
    finally:
        opened.set()
        first.stop()
        second.stop()


NOTIFY = """
name: tell-{n}
tasks:
  tell:
    type: notifyUser
    properties: {{message: "{n}"}}
"""


def test_deployments_spread_over_processes_and_move_when_one_dies(
    store: Store, other: Store, clock: FakeClock, conversation: str
) -> None:
    for n in range(4):
        deps.deploy(store, NOTIFY.format(n=n), conversation_id=conversation)
    first = FlowService(store, reconcile_interval=None)
    second = FlowService(other, reconcile_interval=None)
    try:
        first.start()
        assert len(first.executors.ids()) == 4  # alone, it runs everything
        second.start()
        assert second.executors.ids() == []  # everything is held
        first.reconcile()  # two live processes: it gives up what is above its share
        second.reconcile()
        mine, theirs = set(first.executors.ids()), set(second.executors.ids())
        assert len(mine) == len(theirs) == 2 and not mine & theirs
        with store.unit(write=False) as u:
            holders = {lease.name: lease.owner for lease in u.leases.held("flow:")}
        assert holders == {
            **{f"flow:{d}": first.owner for d in mine},
            **{f"flow:{d}": second.owner for d in theirs},
        }

        clock.advance("1m")  # the first process is gone: its leases run out
        second.reconcile()
        assert set(second.executors.ids()) == mine | theirs
        first.heartbeat()  # back from a long pause: it finds its leases taken and stops
        assert first.executors.ids() == []
    finally:
        first.stop()
        second.stop()


RUNS: Counter[str] = Counter()


@flow_task("noteAttempt")
def note_attempt(flowfile: FlowFile, ctx: TaskContext) -> FlowFile:
    RUNS[flowfile.id] += 1
    return flowfile.evolve(update={"attempt": str(ctx.attempt)})


PAIRS = """
name: pairs-{backend}
tasks:
  note: {{type: noteAttempt, batch: 2}}
"""


def test_a_failed_record_puts_back_the_batch_it_took_with_it_uncounted(
    store: Store, conversation: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    takes = 0
    take = QueuesTable.take

    def second_take_fails(table: QueuesTable, ids: Sequence[int], owner: str) -> int:
        nonlocal takes
        takes += 1
        if takes == 2:  # the first batch's record, taking the second batch
            raise RuntimeError("the disk hiccupped")
        return take(table, ids, owner)

    monkeypatch.setattr(QueuesTable, "take", second_take_fails)
    with FlowService(store, reconcile_interval=None) as service:
        text = PAIRS.format(backend=store.dialect)
        deployment, _ = deps.deploy(store, text, conversation_id=conversation)
        service.reconcile()
        instance = service.instance(deployment.id)
        assert instance is not None
        sent = [FlowFile.create(attributes={"n": str(i)}) for i in range(4)]
        instance.inject_many(sent)

        def all_four() -> list[Ending] | None:
            found = instance.endings()
            return found if len(found) == 4 else None

        endings = eventually(all_four, timeout=20)
        attempts = {e.flowfile.id: e.flowfile.attributes["attempt"] for e in endings}
        first, second = [f.id for f in sent[:2]], [f.id for f in sent[2:]]
        # The first batch ran, was not recorded, and ran again as a new attempt; the second
        # was taken by that record, so its take was undone with it and counted once.
        assert attempts == {**dict.fromkeys(first, "2"), **dict.fromkeys(second, "1")}
        assert [RUNS[i] for i in first + second] == [2, 2, 1, 1]
        assert takes == 4  # the first batch and, with its record, the second; twice
        assert instance.wait_idle()
        assert counts(store, deployment.id) == {"note": {"queued": 0, "running": 0, "parked": 0}}


LOGGED: list[dict[str, str]] = []


@flow_task("noteLogIds")
def note_log_ids(flowfile: FlowFile, ctx: TaskContext) -> FlowFile:
    LOGGED.append(telemetry.log_ids())
    return flowfile


NOTED = """
name: noted-{backend}
tasks:
  first: {{type: noteLogIds, next: second}}
  second: {{type: noteLogIds}}
"""


def test_a_deployed_flows_tasks_log_with_its_deployment_id(store: Store, conversation: str) -> None:
    """Every line a task of a deployment logs names the deployment, a batch of them as one;
    a one-shot run's name none, and nothing is left named once the batch is done."""
    LOGGED.clear()
    text = NOTED.format(backend=store.dialect)
    with FlowService(store, reconcile_interval=None) as service:
        deployment, _ = deps.deploy(store, text, conversation_id=conversation)
        service.reconcile()
        instance = service.instance(deployment.id)
        assert instance is not None
        instance.inject_many([FlowFile.create(attributes={"n": str(i)}) for i in range(5)])
        eventually(lambda: len(instance.endings()) == 5 or None, timeout=20)
    assert [{"deployment_id": deployment.id}] * 10 == LOGGED
    LOGGED.clear()
    run_batch(parse_flow(text), [FlowFile.create()])
    assert LOGGED == [{}, {}]
    assert "deployment_id" not in telemetry.log_ids()


LOOP = """
name: forever
tasks:
  again:
    type: updateAttribute
    properties: {set: {x: "1"}}
    next: again
"""


def test_a_one_shot_run_refuses_a_flow_that_loops_without_end(tmp_path: Path) -> None:
    with pytest.raises(HopLimitReached, match="passed 50 tasks"):
        run_batch(parse_flow(LOOP), max_hops=50)
    flow = tmp_path / "loop.yaml"
    flow.write_text(LOOP)
    result = runner.invoke(app, ["flow", "run", str(flow), "--max-hops", "20", "-q"])
    assert result.exit_code == 1
    assert "passed 20 tasks without leaving the flow" in result.output
    assert "--max-hops" in result.output
    # Within the limit, it ends.
    text = LOOP.replace("next: again", "next: {}")
    (tmp_path / "once.yaml").write_text(text)
    assert runner.invoke(app, ["flow", "run", str(tmp_path / "once.yaml"), "-q"]).exit_code == 0


WAIT = """
name: waiter
tasks:
  stamp:
    type: updateAttribute
    properties: {set: {stamped: "yes"}}
    next: wait
  wait:
    type: durableWait
    properties: {signal_id: never}
"""


def test_list_and_status_show_the_counts_per_task(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'p.db'}"
    with open_store(db) as store, FlowService(store, reconcile_interval=None) as service:
        conversation = store.create_conversation("alice").id
        deployment, _ = deps.deploy(store, WAIT, conversation_id=conversation)
        service.reconcile()
        for _ in range(2):
            deps.inject(store, deployment.id, FlowFile.create())
        eventually(lambda: counts(store, deployment.id)["wait"]["parked"] == 2)
        result = runner.invoke(app, ["flow", "status", deployment.id, "--db", db])
        assert result.exit_code == 0, result.output
        assert f"runs in: {service.owner}" in result.stdout
        assert "stamp       0        0       0" in result.stdout
        assert "wait        0        0       2" in result.stdout
    # No process runs it now: what is handed over waits, counted as such.
    with open_store(db) as store:
        deps.inject(store, deployment.id, FlowFile.create())
    result = runner.invoke(app, ["flow", "list", "--db", db])
    assert "    wait: 0 queued, 0 running, 2 parked" in result.stdout
    assert "    1 handed over, not queued yet" in result.stdout
    [listed] = json.loads(runner.invoke(app, ["flow", "list", "--db", db, "--json"]).stdout)
    assert listed["tasks"]["wait"] == {"queued": 0, "running": 0, "parked": 2}
    assert (listed["runner"], listed["incoming"]) == (None, 1)
    result = runner.invoke(app, ["flow", "status", "nope", "--db", db])
    assert result.exit_code == 1
    assert "not found" in result.output
