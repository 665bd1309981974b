-- Web Push: the server's VAPID key pair (made on the first start, one row), and each user's
-- push subscriptions, one per browser or phone (its endpoint at the push service, and the
-- keys its payloads are encrypted to). A subscription belongs to whoever subscribed the
-- browser last.
CREATE TABLE push_keys (
    id TEXT PRIMARY KEY CHECK (id = 'vapid'),
    private_key TEXT NOT NULL,
    public_key TEXT NOT NULL,
    created_at BIGINT NOT NULL
);

CREATE TABLE push_subscriptions (
    id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL REFERENCES users (id),
    endpoint TEXT NOT NULL UNIQUE,
    p256dh TEXT NOT NULL,
    auth TEXT NOT NULL,
    device TEXT NOT NULL,
    created_at BIGINT NOT NULL
);
CREATE INDEX push_subscriptions_user ON push_subscriptions (user_id);
