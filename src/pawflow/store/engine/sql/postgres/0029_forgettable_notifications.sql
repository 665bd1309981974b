-- A notification notes when its request settled, so the retention sweep finds what it may
-- forget by that instant and never reads the notifications of requests still pending.
ALTER TABLE outbox ADD COLUMN settled_at BIGINT;
UPDATE outbox SET settled_at = (
    SELECT i.answered_at FROM interactions AS i
    WHERE i.id = outbox.request_id AND i.status <> 'pending'
);
CREATE INDEX outbox_forgettable ON outbox (settled_at)
    WHERE settled_at IS NOT NULL AND status <> 'queued';
DROP INDEX outbox_settled;
