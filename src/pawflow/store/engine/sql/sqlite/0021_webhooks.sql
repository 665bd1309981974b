-- Webhooks: a user's subscriptions to the events of their requests, each with its signing
-- secret (kept as it is: a Standard Webhooks signature needs it), and the log of every
-- delivery, sent by the outbox's dispatcher with the same retry and backoff.
CREATE TABLE webhooks (
    id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL REFERENCES users (id),
    url TEXT NOT NULL,
    events TEXT NOT NULL,
    secret TEXT NOT NULL,
    created_at INTEGER NOT NULL
);
CREATE INDEX webhooks_user ON webhooks (user_id);

CREATE TABLE webhook_deliveries (
    id TEXT PRIMARY KEY,
    webhook_id TEXT NOT NULL REFERENCES webhooks (id),
    request_id TEXT NOT NULL REFERENCES interactions (id),
    event TEXT NOT NULL,
    payload TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('queued', 'sent', 'failed')),
    attempts INTEGER NOT NULL DEFAULT 0,
    next_at INTEGER NOT NULL,
    last_error TEXT,
    response_status INTEGER,
    created_at INTEGER NOT NULL,
    sent_at INTEGER,
    UNIQUE (webhook_id, request_id, event)
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_at) WHERE status = 'queued';
CREATE INDEX webhook_deliveries_log ON webhook_deliveries (webhook_id, created_at);
