-- Chat turns: one durable queue of message turns and wakeup turns. A turn is leased by one
-- process with a short heartbeat; its reply is written once, keyed by the turn.
CREATE TABLE chat_turns (
    seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    conversation_id TEXT NOT NULL REFERENCES conversations (id),
    agent TEXT,
    kind TEXT NOT NULL CHECK (kind IN ('message', 'wakeup')),
    message_id TEXT UNIQUE,
    wakeup_id TEXT UNIQUE,
    status TEXT NOT NULL CHECK (status IN ('queued', 'running', 'done', 'failed')),
    due_at BIGINT NOT NULL,
    owner TEXT,
    lease_until BIGINT,
    attempts INTEGER NOT NULL DEFAULT 0,
    stage TEXT,
    reply_id TEXT,
    last_error TEXT,
    created_at BIGINT NOT NULL,
    started_at BIGINT,
    finished_at BIGINT
);
CREATE INDEX chat_turns_queued ON chat_turns (due_at) WHERE status = 'queued';
CREATE INDEX chat_turns_leased ON chat_turns (lease_until) WHERE status = 'running';
CREATE INDEX chat_turns_conversation ON chat_turns (conversation_id, seq);
INSERT INTO chat_turns (id, conversation_id, agent, kind, wakeup_id, status, due_at, created_at)
    SELECT 'w-' || id, conversation_id, agent, 'wakeup', id, 'queued',
        CASE WHEN status = 'running' THEN lease_until ELSE due_at END, created_at
    FROM agent_wakeups WHERE status IN ('scheduled', 'running');
