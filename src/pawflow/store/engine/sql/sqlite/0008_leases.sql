-- Named leases: one live owner at a time for a piece of work (a deployment, an agent),
-- kept by heartbeats and taken over by another process once it expires.
CREATE TABLE leases (
    name TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    acquired_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
);
CREATE INDEX leases_owner ON leases (owner);
