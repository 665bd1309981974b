"""A task for the durable-queue tests: records each visit (FlowFile, task, attempt, process).

Each visit is written in a transaction of its own, before the task's outcome is recorded,
so a task that runs again after a crash shows as a second visit.
"""

from __future__ import annotations

import os

from pawflow.flow import FlowFile, TaskContext, flow_task

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
