-- The server: API tokens, browser sessions, one-time sign-in links, event-log retention.
-- Secrets are stored as SHA-256 hex digests, never in the clear.
CREATE TABLE api_tokens (
    token_hash TEXT PRIMARY KEY,
    user_id TEXT NOT NULL REFERENCES users (id),
    label TEXT NOT NULL DEFAULT '',
    created_at INTEGER NOT NULL
);
CREATE INDEX api_tokens_user ON api_tokens (user_id);

CREATE TABLE web_sessions (
    session_hash TEXT PRIMARY KEY,
    user_id TEXT NOT NULL REFERENCES users (id),
    csrf_token TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
);
CREATE INDEX web_sessions_expiry ON web_sessions (expires_at);

CREATE TABLE signin_links (
    token_hash TEXT PRIMARY KEY,
    user_id TEXT NOT NULL REFERENCES users (id),
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
);
CREATE INDEX signin_links_expiry ON signin_links (expires_at);

CREATE TABLE server_state (
    key TEXT PRIMARY KEY,
    value INTEGER NOT NULL
);

CREATE INDEX events_created ON events (created_at);
