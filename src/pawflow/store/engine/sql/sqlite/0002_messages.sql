-- Conversation messages and the clients that are live right now (for notifications).
CREATE TABLE messages (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    conversation_id TEXT NOT NULL REFERENCES conversations (id),
    role TEXT NOT NULL CHECK (role IN ('user', 'assistant', 'system', 'notification')),
    author TEXT NOT NULL,
    content TEXT NOT NULL,
    data TEXT,
    created_at INTEGER NOT NULL
);
CREATE INDEX messages_conversation ON messages (conversation_id, seq);

CREATE TABLE live_clients (
    client_id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL,
    expires_at INTEGER NOT NULL
);
CREATE INDEX live_clients_user ON live_clients (user_id, expires_at);
