-- A request may carry an idempotency key: asking again with the same key, as the same
-- owner, finds the first request instead of publishing a second one.
ALTER TABLE interactions ADD COLUMN idempotency_key TEXT;
CREATE UNIQUE INDEX interactions_idempotency ON interactions (owner, idempotency_key)
    WHERE idempotency_key IS NOT NULL;
