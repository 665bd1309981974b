-- Where an answer came from: its channel (chat, button, cli, mcp, api, …) and, for a typed
-- chat message, that message's seq. The newest pending request of a conversation is what
-- the conversation waits on: an index finds it without reading the answered ones.
ALTER TABLE interactions ADD COLUMN answered_via TEXT;
ALTER TABLE interactions ADD COLUMN answered_seq INTEGER;
CREATE INDEX interactions_pending ON interactions (conversation_id, created_at)
    WHERE status = 'pending';
