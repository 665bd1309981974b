-- Session continuations: what each conversation is waiting on, and who asked.
CREATE TABLE session_continuations (
    id TEXT PRIMARY KEY,
    session_id TEXT NOT NULL,
    owner TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('question', 'approval', 'choice')),
    origin TEXT NOT NULL CHECK (origin IN ('explicit', 'inferred')),
    question TEXT NOT NULL,
    run_id TEXT,
    step_id TEXT,
    intent TEXT,
    payload TEXT,
    status TEXT NOT NULL
        CHECK (status IN ('pending', 'answered', 'superseded', 'expired', 'withdrawn')),
    reply TEXT,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    closed_at INTEGER
);
CREATE UNIQUE INDEX session_continuations_one_pending ON session_continuations (session_id)
    WHERE status = 'pending';
CREATE INDEX session_continuations_session ON session_continuations (session_id, created_at);
CREATE INDEX session_continuations_due ON session_continuations (expires_at)
    WHERE status = 'pending';
