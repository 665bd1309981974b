-- Agents: which agent answers a conversation, scheduled wakeups, and loop checkpoints.
CREATE TABLE agent_assignments (
    conversation_id TEXT PRIMARY KEY REFERENCES conversations (id),
    agent TEXT NOT NULL,
    assigned_at INTEGER NOT NULL
);

CREATE TABLE agent_wakeups (
    id TEXT PRIMARY KEY,
    agent TEXT NOT NULL,
    conversation_id TEXT NOT NULL REFERENCES conversations (id),
    user_id TEXT NOT NULL,
    source TEXT NOT NULL UNIQUE,
    text TEXT NOT NULL,
    data TEXT NOT NULL,
    status TEXT NOT NULL
        CHECK (status IN ('scheduled', 'running', 'done', 'absorbed', 'failed')),
    due_at INTEGER NOT NULL,
    lease_until INTEGER,
    attempts INTEGER NOT NULL DEFAULT 0,
    message_id TEXT,
    tool_started_at INTEGER,
    last_error TEXT,
    created_at INTEGER NOT NULL,
    finished_at INTEGER
);
CREATE INDEX agent_wakeups_due ON agent_wakeups (due_at) WHERE status = 'scheduled';
CREATE INDEX agent_wakeups_leased ON agent_wakeups (lease_until) WHERE status = 'running';
CREATE INDEX agent_wakeups_conversation ON agent_wakeups (conversation_id, created_at);

CREATE TABLE checkpoints (
    run_id TEXT NOT NULL,
    step_id TEXT NOT NULL,
    session_id TEXT,
    agent TEXT NOT NULL,
    halt_reason TEXT NOT NULL,
    payload BLOB NOT NULL,
    pinned INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    PRIMARY KEY (run_id, step_id)
);
CREATE INDEX checkpoints_session ON checkpoints (session_id, created_at)
    WHERE session_id IS NOT NULL;
CREATE INDEX checkpoints_expiry ON checkpoints (expires_at) WHERE pinned = 0;
