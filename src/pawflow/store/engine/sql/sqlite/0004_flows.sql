-- Flows: deployed flow definitions, each run as a continuous instance by the server.
-- The deploying user and the conversation are the scope the flow's requests publish into.
CREATE TABLE flow_deployments (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    definition TEXT NOT NULL,
    base_dir TEXT,
    user_id TEXT NOT NULL REFERENCES users (id),
    conversation_id TEXT NOT NULL REFERENCES conversations (id),
    status TEXT NOT NULL CHECK (status IN ('running', 'stopped')),
    status_reason TEXT,
    version INTEGER NOT NULL DEFAULT 1,
    last_error TEXT,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    UNIQUE (user_id, conversation_id, name)
);
CREATE INDEX flow_deployments_status ON flow_deployments (status);
