-- Which answered request refers to which upload: a download is allowed to whoever may read
-- such a request, found through this index (never by what an answer looks like).
CREATE TABLE file_links (
    file_id TEXT NOT NULL REFERENCES files (id),
    interaction_id TEXT NOT NULL REFERENCES interactions (id),
    PRIMARY KEY (file_id, interaction_id)
);
INSERT INTO file_links (file_id, interaction_id)
SELECT f.id, i.id FROM interactions AS i
    JOIN files AS f ON f.owner = i.answered_by AND f.id = (
        CASE WHEN jsonb_typeof(i.answer::jsonb) = 'object' THEN i.answer::jsonb ->> 'id' END
    )
WHERE i.status = 'answered' AND i.kind = 'file'
ON CONFLICT DO NOTHING;
INSERT INTO file_links (file_id, interaction_id)
SELECT f.id, i.id FROM interactions AS i
    CROSS JOIN LATERAL jsonb_each(
        CASE WHEN jsonb_typeof(i.answer::jsonb) = 'object' THEN i.answer::jsonb
        ELSE '{}'::jsonb END
    ) AS field
    JOIN files AS f ON f.owner = i.answered_by AND f.id = (
        CASE WHEN jsonb_typeof(field.value) = 'object' THEN field.value ->> 'id' END
    )
WHERE i.status = 'answered' AND i.kind = 'form'
ON CONFLICT DO NOTHING;

-- A shared conversation is offered first; the invited user joins by accepting.
CREATE TABLE conversation_invitations (
    conversation_id TEXT NOT NULL REFERENCES conversations (id),
    user_id TEXT NOT NULL,
    access TEXT NOT NULL CHECK (access IN ('read', 'write')),
    invited_by TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (conversation_id, user_id)
);
CREATE INDEX conversation_invitations_user ON conversation_invitations (user_id, created_at);

-- Event ids count each user's own events, so they tell nothing of anyone else's.
ALTER TABLE events ADD COLUMN user_seq BIGINT NOT NULL DEFAULT 0;
UPDATE events SET user_seq = numbered.n
FROM (SELECT seq, row_number() OVER (PARTITION BY user_id ORDER BY seq) AS n FROM events)
    AS numbered
WHERE numbered.seq = events.seq;
DROP INDEX events_user;
CREATE UNIQUE INDEX events_user_seq ON events (user_id, user_seq);
CREATE TABLE event_counters (
    user_id TEXT PRIMARY KEY,
    last_seq BIGINT NOT NULL
);
INSERT INTO event_counters (user_id, last_seq)
SELECT user_id, max(user_seq) FROM events GROUP BY user_id;
