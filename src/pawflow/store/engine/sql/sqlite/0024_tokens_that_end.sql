-- Tokens that end: a personal access token has an id (shown, listed, revoked by; never the
-- secret), a name, an expiry (NULL: none, as every token made before) and the time it was
-- last used (written at most once a minute). A browser login ends after a while unused
-- (last_seen_at) as well as at its expiry. A disabled user's credentials are all refused.
ALTER TABLE api_tokens RENAME COLUMN label TO name;
ALTER TABLE api_tokens ADD COLUMN id TEXT;
ALTER TABLE api_tokens ADD COLUMN expires_at INTEGER;
ALTER TABLE api_tokens ADD COLUMN last_used_at INTEGER;
UPDATE api_tokens SET id = 'tok_' || substr(token_hash, 1, 16);
CREATE UNIQUE INDEX api_tokens_id ON api_tokens (id);

ALTER TABLE web_sessions ADD COLUMN last_seen_at INTEGER;
UPDATE web_sessions SET last_seen_at = created_at;
CREATE INDEX web_sessions_user ON web_sessions (user_id);

ALTER TABLE users ADD COLUMN disabled_at INTEGER;
