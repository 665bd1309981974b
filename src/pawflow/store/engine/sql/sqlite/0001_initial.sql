-- Users, conversations, uploads, interactions, durable signals and continuations, events.
-- Timestamps are epoch milliseconds; JSON is stored as text.
CREATE TABLE users (
    id TEXT PRIMARY KEY,
    created_at INTEGER NOT NULL
);

CREATE TABLE conversations (
    id TEXT PRIMARY KEY,
    owner TEXT NOT NULL REFERENCES users (id),
    title TEXT NOT NULL DEFAULT '',
    created_at INTEGER NOT NULL
);
CREATE INDEX conversations_owner ON conversations (owner, created_at);

CREATE TABLE conversation_members (
    conversation_id TEXT NOT NULL REFERENCES conversations (id),
    user_id TEXT NOT NULL REFERENCES users (id),
    access TEXT NOT NULL CHECK (access IN ('read', 'write')),
    PRIMARY KEY (conversation_id, user_id)
);
CREATE INDEX conversation_members_user ON conversation_members (user_id);

CREATE TABLE files (
    id TEXT PRIMARY KEY,
    owner TEXT NOT NULL REFERENCES users (id),
    name TEXT NOT NULL,
    size INTEGER NOT NULL,
    media_type TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    content BLOB NOT NULL,
    created_at INTEGER NOT NULL
);

CREATE TABLE interactions (
    id TEXT PRIMARY KEY,
    contract_version INTEGER NOT NULL DEFAULT 1,
    kind TEXT NOT NULL,
    title TEXT,
    message TEXT NOT NULL,
    options TEXT,
    response_schema TEXT NOT NULL,
    owner TEXT NOT NULL REFERENCES users (id),
    conversation_id TEXT NOT NULL REFERENCES conversations (id),
    requester TEXT NOT NULL,
    signal_id TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('pending', 'answered', 'cancelled', 'expired')),
    answer TEXT,
    answered_by TEXT,
    answered_at INTEGER,
    created_at INTEGER NOT NULL,
    expires_at INTEGER,
    ui_surface TEXT
);
CREATE INDEX interactions_owner ON interactions (owner, status, created_at);
CREATE INDEX interactions_conversation ON interactions (conversation_id, created_at);
CREATE INDEX interactions_due ON interactions (expires_at)
    WHERE status = 'pending' AND expires_at IS NOT NULL;

CREATE TABLE signals (
    signal_id TEXT PRIMARY KEY,
    value TEXT NOT NULL,
    fired_at INTEGER NOT NULL,
    fire_count INTEGER NOT NULL DEFAULT 1
);

CREATE TABLE continuations (
    id TEXT PRIMARY KEY,
    target TEXT NOT NULL,
    signal_id TEXT,
    deadline INTEGER,
    payload BLOB NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('parked', 'resolved')),
    outcome TEXT CHECK (outcome IN ('signaled', 'timeout', 'elapsed', 'cancelled')),
    value TEXT,
    attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt_at INTEGER,
    last_error TEXT,
    created_at INTEGER NOT NULL,
    resolved_at INTEGER
);
CREATE INDEX continuations_signal ON continuations (signal_id)
    WHERE status = 'parked' AND signal_id IS NOT NULL;
CREATE INDEX continuations_due ON continuations (deadline)
    WHERE status = 'parked' AND deadline IS NOT NULL;
CREATE INDEX continuations_resolved ON continuations (next_attempt_at)
    WHERE status = 'resolved';
CREATE INDEX continuations_target ON continuations (target);

CREATE TABLE events (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id TEXT NOT NULL,
    conversation_id TEXT,
    type TEXT NOT NULL,
    data TEXT NOT NULL,
    created_at INTEGER NOT NULL
);
CREATE INDEX events_user ON events (user_id, seq);
