-- Approval rules: a tool call an agent may make again without asking ("always allow"),
-- in one conversation or wherever the agent acts for the user who allowed it.
CREATE TABLE approval_rules (
    id TEXT PRIMARY KEY,
    agent TEXT NOT NULL,
    tool TEXT NOT NULL,
    arguments TEXT NOT NULL,
    scope TEXT NOT NULL CHECK (scope IN ('conversation', 'agent')),
    conversation_id TEXT REFERENCES conversations (id),
    user_id TEXT NOT NULL,
    request_id TEXT,
    created_at INTEGER NOT NULL,
    revoked_at INTEGER,
    revoked_by TEXT
);
CREATE INDEX approval_rules_live ON approval_rules (agent, tool) WHERE revoked_at IS NULL;
CREATE INDEX approval_rules_user ON approval_rules (user_id, created_at);

-- The arguments an approved tool call was run with, by its approval request.
CREATE TABLE tool_executions (
    request_id TEXT PRIMARY KEY REFERENCES interactions (id),
    tool TEXT NOT NULL,
    arguments TEXT NOT NULL,
    run_id TEXT,
    executed_at INTEGER NOT NULL
);
