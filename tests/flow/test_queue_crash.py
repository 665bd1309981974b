"""Durable queues: a server killed with SIGKILL at random points skips no FlowFile.

100 FlowFiles flow through a deployment (record → ask → wait for the answer → record) while
the process running it kills itself at a random statement, five times. Every FlowFile reaches
the end; a task runs twice on a FlowFile only where that FlowFile was running at a kill, and
then with a new attempt number; each question is asked once; each resume happens once.

A 300-way fan-out where every item asks, killed once 60 questions exist, asks each item
once. A task declared with outside effects, killed mid-batch, runs again on one FlowFile.
"""

from __future__ import annotations

import contextlib
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Iterator
from pathlib import Path

import pytest

from pawflow import NotFound, NotPending, Store
from pawflow.flow import FlowFile
from pawflow.flow import deployments as deps
from pawflow.store.engine.database import sql
from pawflow.testing import eventually, temporary_store
from tests.store.test_concurrency import store_url

pytestmark = pytest.mark.slow

HERE = Path(__file__).parent
ROOT = HERE.parent.parent
ROUNDS = 5
PER_ROUND = 20
VISITS = (
    "CREATE TABLE IF NOT EXISTS visits (flowfile_id TEXT NOT NULL, task TEXT NOT NULL,"
    " attempt INTEGER NOT NULL, pid INTEGER NOT NULL)"
)

FLOW = """
name: crash-through
queue_capacity: 1000
imports: [queue_tasks.py]
tasks:
  first:
    type: recordVisit
    next: ask
  ask:
    type: requestConfirmation
    properties: {message: "Go ${uuid}?"}
    next: wait
  wait:
    type: durableWait
    next: last
  last:
    type: recordVisit
"""


@pytest.fixture
def real_store(backend: str, tmp_path: Path) -> Iterator[Store]:
    """A store on the wall clock, which the child processes share."""
    with temporary_store(backend, tmp_path) as opened:
        yield opened


def spawn(url: str, kill_after: int, **env: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.flow.queue_child", url, str(kill_after)],
        cwd=ROOT,
        env={**os.environ, **env},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def answer_everything(store: Store) -> None:
    for question in store.list_interactions(user="alice", status="pending"):
        with contextlib.suppress(NotPending, NotFound):
            store.respond_interaction(question.id, True, user="alice")


def wait_for_exit(child: subprocess.Popen[bytes], store: Store, timeout: float) -> int:
    """Answer questions as they come until the child has died (it kills itself)."""
    deadline = time.monotonic() + timeout
    while True:
        answer_everything(store)
        try:
            return child.wait(timeout=0.05)
        except subprocess.TimeoutExpired:
            assert time.monotonic() < deadline, "the child did not reach its kill point"


@pytest.mark.timeout(240)
def test_sigkill_at_random_points_skips_no_flowfile(real_store: Store, tmp_path: Path) -> None:
    store = real_store
    url = store_url(store, tmp_path)
    with store.transaction() as tx:
        sql(tx).execute(VISITS)
    conversation = store.create_conversation("alice").id
    deployment, _ = deps.deploy(store, FLOW, conversation_id=conversation, base_dir=HERE)
    target = f"flow:{deployment.id}"
    rng = random.Random(11)
    sent: list[str] = []
    running_at_kills: set[tuple[str, str]] = set()

    for _ in range(ROUNDS):
        for _ in range(PER_ROUND):
            flowfile = FlowFile.create(attributes={"n": str(len(sent))})
            deps.inject(store, deployment.id, flowfile)
            sent.append(flowfile.id)
        child = spawn(url, rng.randint(100, 600))
        assert wait_for_exit(child, store, timeout=60) == -signal.SIGKILL
        with store.transaction(write=False) as tx:
            running = sql(tx).all(
                "SELECT flowfile_id, task FROM flow_queue WHERE target = ? AND status = 'running'",
                (target,),
            )
        # One worker: what runs at a kill is one batch, of one task.
        assert len({row["task"] for row in running}) <= 1
        running_at_kills |= {(row["flowfile_id"], row["task"]) for row in running}

    child = spawn(url, 0)
    try:

        def all_through() -> bool:
            answer_everything(store)
            with store.transaction(write=False) as tx:
                ended = sql(tx).one(
                    "SELECT count(DISTINCT flowfile_id) AS n FROM visits WHERE task = 'last'"
                )
                left = sql(tx).one(
                    "SELECT count(*) AS n FROM flow_queue WHERE target = ?", (target,)
                )
            assert ended is not None and left is not None
            return bool(ended["n"] == len(sent) and left["n"] == 0)

        eventually(all_through, timeout=90, interval=0.05)
    finally:
        child.kill()
        child.wait(timeout=30)

    with store.transaction(write=False) as tx:
        visits = sql(tx).all("SELECT flowfile_id, task, attempt FROM visits")
    attempts: dict[tuple[str, str], list[int]] = defaultdict(list)
    for visit in visits:
        attempts[(visit["flowfile_id"], visit["task"])].append(visit["attempt"])
    for task in ("first", "last"):
        assert {ff for ff, t in attempts if t == task} == set(sent), f"a FlowFile skipped {task}"
    for (flowfile_id, task), seen in attempts.items():
        # A repeat is always a new attempt at a task that was running at a kill.
        assert len(seen) == len(set(seen)), (flowfile_id, task, seen)
        if len(seen) > 1:
            assert (flowfile_id, task) in running_at_kills, (flowfile_id, task, seen)

    asked: dict[str, int] = defaultdict(int)
    for question in store.list_interactions(user="alice"):
        asked[question.message.removeprefix("Go ").removesuffix("?")] += 1
    assert set(asked) == set(sent)
    assert set(asked.values()) == {1}  # a re-run finds the question it asked
    assert store.pending_continuations(target) == 0
    assert running_at_kills, "no kill hit a running task: the test proved nothing"


FAN_OUT = 300
FAN_FLOW = f"""
name: fan-out-ask
queue_capacity: 1000
imports: [queue_tasks.py]
tasks:
  split:
    type: fanOut
    properties: {{count: "{FAN_OUT}"}}
    next: ask
  ask:
    type: requestConfirmation
    properties: {{message: "Item ${{item}}?"}}
"""


def rows_of(store: Store, target: str, status: str | None = None) -> int:
    with store.transaction(write=False) as tx:
        row = sql(tx).one(
            "SELECT count(*) AS n FROM flow_queue WHERE target = ?"
            + ("" if status is None else " AND status = ?"),
            (target,) if status is None else (target, status),
        )
    assert row is not None
    return int(row["n"])


@pytest.mark.timeout(180)
def test_a_crash_while_a_fan_out_asks_asks_each_item_once(
    real_store: Store, tmp_path: Path
) -> None:
    store = real_store
    url = store_url(store, tmp_path)
    conversation = store.create_conversation("alice").id
    deployment, _ = deps.deploy(store, FAN_FLOW, conversation_id=conversation, base_dir=HERE)
    target = f"flow:{deployment.id}"
    deps.inject(store, deployment.id, FlowFile.create())

    child = spawn(url, 0, PAWFLOW_TEST_KILL_AT_QUESTIONS="60")
    assert child.wait(timeout=90) == -signal.SIGKILL
    # The kill cut a batch of questions short: those FlowFiles are asked for again.
    assert len(store.list_interactions(user="alice")) >= 60
    assert rows_of(store, target, "running") > 0

    child = spawn(url, 0)
    try:
        eventually(lambda: rows_of(store, target) == 0, timeout=120, interval=0.1)
    finally:
        child.kill()
        child.wait(timeout=30)
    asked = Counter(question.message for question in store.list_interactions(user="alice"))
    assert len(asked) == FAN_OUT
    assert {message: n for message, n in asked.items() if n > 1} == {}


SIDE_EFFECTS = 40
KILL_AT_VISIT = 10


@pytest.mark.parametrize(
    ("declared", "run_again"),
    [
        ("type: recordVisit, side_effects: true", 1),
        ("type: recordVisit, batch: 1", 1),
        ("type: chargeCard", 1),  # @flow_task("chargeCard", side_effects=True)
        ("type: recordVisit", KILL_AT_VISIT),  # undeclared: the batch taken runs again
    ],
)
@pytest.mark.timeout(120)
def test_a_task_with_outside_effects_runs_again_on_one_flowfile_after_a_crash(
    real_store: Store, tmp_path: Path, declared: str, run_again: int
) -> None:
    store = real_store
    url = store_url(store, tmp_path)
    with store.transaction() as tx:
        sql(tx).execute(VISITS)
    conversation = store.create_conversation("alice").id
    flow = f"""
name: effects
imports: [queue_tasks.py]
tasks:
  split: {{type: fanOut, properties: {{count: "{SIDE_EFFECTS}"}}, next: charge}}
  charge: {{{declared}}}
"""
    deployment, _ = deps.deploy(store, flow, conversation_id=conversation, base_dir=HERE)
    target = f"flow:{deployment.id}"
    deps.inject(store, deployment.id, FlowFile.create())

    # All 40 are queued together; the kill comes right after the 10th FlowFile's effect,
    # before its outcome is recorded.
    child = spawn(url, 0, PAWFLOW_TEST_KILL_AT_VISIT=str(KILL_AT_VISIT))
    assert child.wait(timeout=60) == -signal.SIGKILL
    child = spawn(url, 0)
    try:
        eventually(lambda: rows_of(store, target) == 0, timeout=60, interval=0.05)
    finally:
        child.kill()
        child.wait(timeout=30)
    with store.transaction(write=False) as tx:
        visits = Counter(
            row["flowfile_id"] for row in sql(tx).all("SELECT flowfile_id FROM visits")
        )
    assert len(visits) == SIDE_EFFECTS
    assert len([n for n in visits.values() if n > 1]) == run_again
