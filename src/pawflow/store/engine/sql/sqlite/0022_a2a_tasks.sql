-- A2A tasks, kept in the store so they outlive the process: each its user's and its agent's,
-- the task itself as the SDK's JSON. Their push-notification configs, and each push on its
-- way to one config, sent by the outbox's dispatcher like a webhook delivery.
CREATE TABLE a2a_tasks (
    id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL REFERENCES users (id),
    agent TEXT NOT NULL,
    context_id TEXT NOT NULL,
    state TEXT NOT NULL,
    task TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
);
CREATE INDEX a2a_tasks_user ON a2a_tasks (user_id, agent, updated_at);

CREATE TABLE a2a_push_configs (
    task_id TEXT NOT NULL,
    id TEXT NOT NULL,
    user_id TEXT NOT NULL REFERENCES users (id),
    url TEXT NOT NULL,
    token TEXT,
    auth_scheme TEXT,
    auth_credentials TEXT,
    config TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (task_id, id)
);

CREATE TABLE a2a_push_deliveries (
    id TEXT PRIMARY KEY,
    task_id TEXT NOT NULL,
    config_id TEXT NOT NULL,
    event TEXT NOT NULL,
    payload TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('queued', 'sent', 'failed')),
    attempts INTEGER NOT NULL DEFAULT 0,
    next_at INTEGER NOT NULL,
    last_error TEXT,
    response_status INTEGER,
    created_at INTEGER NOT NULL,
    sent_at INTEGER
);
CREATE INDEX a2a_push_deliveries_due ON a2a_push_deliveries (next_at) WHERE status = 'queued';
CREATE INDEX a2a_push_deliveries_log ON a2a_push_deliveries (task_id, created_at);
