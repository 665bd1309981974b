-- A quorum's vote is kept under the person it counts for (voter: an assignee, or whom a
-- delegate stands for) and the account that cast it (voted_by): one vote per person, and one
-- per account, on each request. Votes cast before have voted_by NULL (their voter cast them).
ALTER TABLE request_votes ADD COLUMN voted_by TEXT;
CREATE UNIQUE INDEX request_votes_account ON request_votes (request_id, voted_by);

-- An answer link ends with its user's access: revoking the user's tokens revokes the links
-- they have not used.
ALTER TABLE answer_links ADD COLUMN revoked_at INTEGER;
CREATE INDEX answer_links_user ON answer_links (user_id) WHERE used_at IS NULL;
