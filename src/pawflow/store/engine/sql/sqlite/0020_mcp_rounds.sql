-- The rounds of MCP elicitation: one row per answer a client gave to an elicitation (its
-- action: accept, decline or cancel). A 2026 round's id is the nonce sealed in its
-- requestState, so a state can be used once: a second use finds the row and is refused.
CREATE TABLE mcp_rounds (
    id TEXT PRIMARY KEY,
    interaction_id TEXT NOT NULL REFERENCES interactions (id) ON DELETE CASCADE,
    user_id TEXT NOT NULL,
    action TEXT NOT NULL,
    created_at INTEGER NOT NULL
);
CREATE INDEX mcp_rounds_interaction ON mcp_rounds (interaction_id, created_at);
