-- Durable FlowFile queues: a FlowFile of a deployed flow waiting for a task (queued), taken
-- by the process that runs the deployment (running), or parked on a continuation (parked).
-- A row goes only when the task's outcome is recorded, in the transaction that queues what
-- the task emitted.
CREATE TABLE flow_queue (
    id INTEGER PRIMARY KEY,
    target TEXT NOT NULL,
    task TEXT NOT NULL,
    flowfile_id TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('queued', 'running', 'parked')),
    payload BLOB NOT NULL,
    hops INTEGER NOT NULL DEFAULT 0,
    attempts INTEGER NOT NULL DEFAULT 0,
    owner TEXT,
    continuation_id TEXT,
    created_at INTEGER NOT NULL,
    taken_at INTEGER
);
CREATE INDEX flow_queue_target ON flow_queue (target, id);
CREATE UNIQUE INDEX flow_queue_continuation ON flow_queue (continuation_id)
    WHERE continuation_id IS NOT NULL;
