-- Reaching people where they are. Each user says where they can be reached (an address per
-- channel) and which channels to use; each new request writes, in its own transaction, one
-- outbox row per channel and recipient, which a dispatcher sends, retries and, once the
-- request is settled, updates. Answer links are capabilities bound to one request and one
-- user, stored as SHA-256 digests, spent by the answer they carry.
CREATE TABLE user_channels (
    user_id TEXT PRIMARY KEY REFERENCES users (id),
    email TEXT,
    slack TEXT,
    notify_url TEXT,
    notify TEXT,
    updated_at BIGINT NOT NULL
);

CREATE TABLE outbox (
    id TEXT PRIMARY KEY,
    request_id TEXT NOT NULL REFERENCES interactions (id),
    channel TEXT NOT NULL,
    recipient TEXT NOT NULL REFERENCES users (id),
    address TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('queued', 'sent', 'failed', 'skipped')),
    attempts INTEGER NOT NULL DEFAULT 0,
    next_at BIGINT NOT NULL,
    idempotency_key TEXT NOT NULL UNIQUE,
    external_ref TEXT,
    last_error TEXT,
    settle TEXT NOT NULL DEFAULT 'none' CHECK (settle IN ('none', 'due', 'done')),
    created_at BIGINT NOT NULL,
    sent_at BIGINT,
    UNIQUE (request_id, channel, recipient)
);
CREATE INDEX outbox_due ON outbox (next_at) WHERE status = 'queued';
CREATE INDEX outbox_settle ON outbox (next_at) WHERE settle = 'due';

CREATE TABLE answer_links (
    token_hash TEXT PRIMARY KEY,
    request_id TEXT NOT NULL REFERENCES interactions (id),
    user_id TEXT NOT NULL REFERENCES users (id),
    outbox_id TEXT REFERENCES outbox (id),
    created_at BIGINT NOT NULL,
    expires_at BIGINT,
    used_at BIGINT
);
CREATE INDEX answer_links_request ON answer_links (request_id);
