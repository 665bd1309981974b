"""Tasks for the durable-queue tests, imported by their flows (``imports: [queue_tasks.py]``).

``recordVisit`` writes each visit (FlowFile, task, attempt, process) in a transaction of its
own, before the task's outcome is recorded, so a task that runs again after a crash shows as
a second visit; in a process started with ``PAWFLOW_TEST_KILL_AT_VISIT=N`` it kills itself
(SIGKILL) right after the N-th visit is written, before the task's outcome is, and with
``PAWFLOW_TEST_STOP_AT_VISIT=N`` it freezes itself (SIGSTOP, once) there instead, until
sent SIGCONT.
``chargeCard`` is the same visit, from a task declared with outside effects. ``fanOut``
emits ``count`` children of its FlowFile, each with its ``item`` number. ``pause`` is a slow
task.
"""

from __future__ import annotations

import os
import signal
import threading
import time

from pawflow.flow import FlowFile, Property, TaskContext, flow_task
from pawflow.store.engine.database import sql

VISITS = (
    "CREATE TABLE IF NOT EXISTS visits (flowfile_id TEXT NOT NULL, task TEXT NOT NULL,"
    " attempt INTEGER NOT NULL, pid INTEGER NOT NULL)"
)
_FROZEN = threading.Event()


@flow_task("recordVisit")
def record_visit(flowfile: FlowFile, ctx: TaskContext) -> FlowFile:
    visit(flowfile, ctx)
    return flowfile


@flow_task("chargeCard", side_effects=True)
def charge_card(flowfile: FlowFile, ctx: TaskContext) -> FlowFile:
    """A visit, as ``recordVisit`` writes it, by a task with outside effects."""
    visit(flowfile, ctx)
    return flowfile


def visit(flowfile: FlowFile, ctx: TaskContext) -> None:
    with ctx.store.transaction() as tx:
        sql(tx).execute(VISITS)
        sql(tx).execute(
            "INSERT INTO visits (flowfile_id, task, attempt, pid) VALUES (?, ?, ?, ?)",
            (flowfile.id, ctx.task.id, ctx.attempt, os.getpid()),
        )
        visits = sql(tx).one("SELECT count(*) AS n FROM visits")
    kill_at = int(os.environ.get("PAWFLOW_TEST_KILL_AT_VISIT") or 0)
    if kill_at and visits is not None and visits["n"] >= kill_at:
        os.kill(os.getpid(), signal.SIGKILL)
    stop_at = int(os.environ.get("PAWFLOW_TEST_STOP_AT_VISIT") or 0)
    if stop_at and visits is not None and visits["n"] >= stop_at and not _FROZEN.is_set():
        _FROZEN.set()
        # Sent to this thread, it stops here at once (the whole process with it); sent to the
        # process, another thread takes it and this one runs on a moment.
        signal.pthread_kill(threading.get_ident(), signal.SIGSTOP)


@flow_task("fanOut", properties=[Property("count", default="2")])
def fan_out(flowfile: FlowFile, ctx: TaskContext) -> list[FlowFile]:
    return [flowfile.child(update={"item": str(n)}) for n in range(int(ctx.prop("count") or 0))]


@flow_task("pause", properties=[Property("seconds", default="0")])
def pause(flowfile: FlowFile, ctx: TaskContext) -> FlowFile:
    """Takes ``seconds`` (a slow task, so that FlowFiles wait in its queue)."""
    time.sleep(float(ctx.prop("seconds") or 0))
    return flowfile
