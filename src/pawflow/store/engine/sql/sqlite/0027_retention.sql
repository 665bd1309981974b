-- What the retention sweep forgets, found by age without reading what it keeps: finished A2A
-- tasks by their last update, settled A2A pushes, webhook deliveries and notifications by
-- when they were written (a queued one is never pruned).
CREATE INDEX a2a_tasks_finished ON a2a_tasks (updated_at)
    WHERE state IN ('TASK_STATE_COMPLETED', 'TASK_STATE_FAILED', 'TASK_STATE_CANCELED',
                    'TASK_STATE_REJECTED');
CREATE INDEX a2a_push_deliveries_settled ON a2a_push_deliveries (created_at)
    WHERE status <> 'queued';
CREATE INDEX webhook_deliveries_settled ON webhook_deliveries (created_at)
    WHERE status <> 'queued';
CREATE INDEX outbox_settled ON outbox (created_at) WHERE status <> 'queued';
-- A notification's answer links, found when it is forgotten (they stay, no longer naming it).
CREATE INDEX answer_links_outbox ON answer_links (outbox_id);
