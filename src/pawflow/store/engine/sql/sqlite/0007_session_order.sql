-- Session continuations in the order they were opened, within their session; by run.
ALTER TABLE session_continuations ADD COLUMN seq INTEGER NOT NULL DEFAULT 0;
DROP INDEX session_continuations_session;
CREATE INDEX session_continuations_session ON session_continuations (session_id, seq);
CREATE INDEX session_continuations_run ON session_continuations (run_id)
    WHERE run_id IS NOT NULL;
