"""Tasks for the durable-queue tests, imported by their flows (``imports: [queue_tasks.py]``).

``recordVisit`` writes each visit (FlowFile, task, attempt, process) in a transaction of its
own, before the task's outcome is recorded, so a task that runs again after a crash shows as
a second visit. ``pause`` is a slow task.
"""

from __future__ import annotations

import os
import time

from pawflow.flow import FlowFile, Property, TaskContext, flow_task

VISITS = (
    "CREATE TABLE IF NOT EXISTS visits (flowfile_id TEXT NOT NULL, task TEXT NOT NULL,"
    " attempt INTEGER NOT NULL, pid INTEGER NOT NULL)"
)


@flow_task("recordVisit")
def record_visit(flowfile: FlowFile, ctx: TaskContext) -> FlowFile:
    with ctx.store.transaction() as tx:
        tx.execute(VISITS)
        tx.execute(
            "INSERT INTO visits (flowfile_id, task, attempt, pid) VALUES (?, ?, ?, ?)",
            (flowfile.id, ctx.task.id, ctx.attempt, os.getpid()),
        )
    return flowfile


@flow_task("pause", properties=[Property("seconds", default="0")])
def pause(flowfile: FlowFile, ctx: TaskContext) -> FlowFile:
    """Takes ``seconds`` (a slow task, so that FlowFiles wait in its queue)."""
    time.sleep(float(ctx.prop("seconds") or 0))
    return flowfile
