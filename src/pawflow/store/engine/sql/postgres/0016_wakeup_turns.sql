-- One durable queue for agent work: a wakeup is a turn of kind 'wakeup' that carries its
-- payload (the agent's user, the text shown, the answer's data) and its source (the
-- answer it comes from: one wakeup per source). The rows of agent_wakeups move into
-- chat_turns, verified, and the table goes (see pawflow.store.migrations).
ALTER TABLE chat_turns ADD COLUMN source TEXT;
ALTER TABLE chat_turns ADD COLUMN payload TEXT;
ALTER TABLE chat_turns ADD COLUMN tool_started_at BIGINT;
CREATE UNIQUE INDEX chat_turns_source ON chat_turns (source);
