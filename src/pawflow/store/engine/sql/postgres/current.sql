-- Users, conversations, uploads, interactions, durable signals and continuations, events.
-- Timestamps are epoch milliseconds; JSON is stored as text.
CREATE TABLE users (
    id TEXT PRIMARY KEY,
    created_at BIGINT NOT NULL
);

CREATE TABLE conversations (
    id TEXT PRIMARY KEY,
    owner TEXT NOT NULL REFERENCES users (id),
    title TEXT NOT NULL DEFAULT '',
    created_at BIGINT NOT NULL
);
CREATE INDEX conversations_owner ON conversations (owner, created_at);

CREATE TABLE conversation_members (
    conversation_id TEXT NOT NULL REFERENCES conversations (id),
    user_id TEXT NOT NULL REFERENCES users (id),
    access TEXT NOT NULL CHECK (access IN ('read', 'write')),
    PRIMARY KEY (conversation_id, user_id)
);
CREATE INDEX conversation_members_user ON conversation_members (user_id);

CREATE TABLE files (
    id TEXT PRIMARY KEY,
    owner TEXT NOT NULL REFERENCES users (id),
    name TEXT NOT NULL,
    size BIGINT NOT NULL,
    media_type TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    content BYTEA NOT NULL,
    created_at BIGINT NOT NULL
);

CREATE TABLE interactions (
    id TEXT PRIMARY KEY,
    contract_version INTEGER NOT NULL DEFAULT 1,
    kind TEXT NOT NULL,
    title TEXT,
    message TEXT NOT NULL,
    options TEXT,
    response_schema TEXT NOT NULL,
    owner TEXT NOT NULL REFERENCES users (id),
    conversation_id TEXT NOT NULL REFERENCES conversations (id),
    requester TEXT NOT NULL,
    signal_id TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('pending', 'answered', 'cancelled', 'expired')),
    answer TEXT,
    answered_by TEXT,
    answered_at BIGINT,
    created_at BIGINT NOT NULL,
    expires_at BIGINT,
    ui_surface TEXT
);
CREATE INDEX interactions_owner ON interactions (owner, status, created_at);
CREATE INDEX interactions_conversation ON interactions (conversation_id, created_at);
CREATE INDEX interactions_due ON interactions (expires_at)
    WHERE status = 'pending' AND expires_at IS NOT NULL;

CREATE TABLE signals (
    signal_id TEXT PRIMARY KEY,
    value TEXT NOT NULL,
    fired_at BIGINT NOT NULL,
    fire_count INTEGER NOT NULL DEFAULT 1
);

CREATE TABLE continuations (
    id TEXT PRIMARY KEY,
    target TEXT NOT NULL,
    signal_id TEXT,
    deadline BIGINT,
    payload BYTEA NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('parked', 'resolved')),
    outcome TEXT CHECK (outcome IN ('signaled', 'timeout', 'elapsed', 'cancelled')),
    value TEXT,
    attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt_at BIGINT,
    last_error TEXT,
    created_at BIGINT NOT NULL,
    resolved_at BIGINT
);
CREATE INDEX continuations_signal ON continuations (signal_id)
    WHERE status = 'parked' AND signal_id IS NOT NULL;
CREATE INDEX continuations_due ON continuations (deadline)
    WHERE status = 'parked' AND deadline IS NOT NULL;
CREATE INDEX continuations_resolved ON continuations (next_attempt_at)
    WHERE status = 'resolved';
CREATE INDEX continuations_target ON continuations (target);

CREATE TABLE events (
    seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    user_id TEXT NOT NULL,
    conversation_id TEXT,
    type TEXT NOT NULL,
    data TEXT NOT NULL,
    created_at BIGINT NOT NULL
);
CREATE INDEX events_user ON events (user_id, seq);

CREATE TABLE messages (
    seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    conversation_id TEXT NOT NULL REFERENCES conversations (id),
    role TEXT NOT NULL CHECK (role IN ('user', 'assistant', 'system', 'notification')),
    author TEXT NOT NULL,
    content TEXT NOT NULL,
    data TEXT,
    created_at BIGINT NOT NULL
);
CREATE INDEX messages_conversation ON messages (conversation_id, seq);

CREATE TABLE live_clients (
    client_id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL,
    expires_at BIGINT NOT NULL
);
CREATE INDEX live_clients_user ON live_clients (user_id, expires_at);

-- The server: API tokens, browser sessions, one-time sign-in links, event-log retention.
-- Secrets are stored as SHA-256 hex digests, never in the clear.
CREATE TABLE api_tokens (
    token_hash TEXT PRIMARY KEY,
    user_id TEXT NOT NULL REFERENCES users (id),
    label TEXT NOT NULL DEFAULT '',
    created_at BIGINT NOT NULL
);
CREATE INDEX api_tokens_user ON api_tokens (user_id);

CREATE TABLE web_sessions (
    session_hash TEXT PRIMARY KEY,
    user_id TEXT NOT NULL REFERENCES users (id),
    csrf_token TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL
);
CREATE INDEX web_sessions_expiry ON web_sessions (expires_at);

CREATE TABLE signin_links (
    token_hash TEXT PRIMARY KEY,
    user_id TEXT NOT NULL REFERENCES users (id),
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL
);
CREATE INDEX signin_links_expiry ON signin_links (expires_at);

CREATE TABLE server_state (
    key TEXT PRIMARY KEY,
    value BIGINT NOT NULL
);

CREATE INDEX events_created ON events (created_at);

CREATE TABLE agent_assignments (
    conversation_id TEXT PRIMARY KEY REFERENCES conversations (id),
    agent TEXT NOT NULL,
    assigned_at BIGINT NOT NULL
);

CREATE TABLE checkpoints (
    run_id TEXT NOT NULL,
    step_id TEXT NOT NULL,
    session_id TEXT,
    agent TEXT NOT NULL,
    halt_reason TEXT NOT NULL,
    payload BYTEA NOT NULL,
    pinned INTEGER NOT NULL DEFAULT 0,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    PRIMARY KEY (run_id, step_id)
);
CREATE INDEX checkpoints_session ON checkpoints (session_id, created_at)
    WHERE session_id IS NOT NULL;
CREATE INDEX checkpoints_expiry ON checkpoints (expires_at) WHERE pinned = 0;

-- Flows (0004).
CREATE TABLE flow_deployments (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    definition TEXT NOT NULL,
    base_dir TEXT,
    user_id TEXT NOT NULL REFERENCES users (id),
    conversation_id TEXT NOT NULL REFERENCES conversations (id),
    status TEXT NOT NULL CHECK (status IN ('running', 'stopped')),
    status_reason TEXT,
    version INTEGER NOT NULL DEFAULT 1,
    last_error TEXT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    UNIQUE (user_id, conversation_id, name)
);
CREATE INDEX flow_deployments_status ON flow_deployments (status);

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
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    closed_at BIGINT
);
CREATE UNIQUE INDEX session_continuations_one_pending ON session_continuations (session_id)
    WHERE status = 'pending';
CREATE INDEX session_continuations_session ON session_continuations (session_id, created_at);
CREATE INDEX session_continuations_due ON session_continuations (expires_at)
    WHERE status = 'pending';

-- Session continuations in the order they were opened, within their session; by run.
ALTER TABLE session_continuations ADD COLUMN seq INTEGER NOT NULL DEFAULT 0;
DROP INDEX session_continuations_session;
CREATE INDEX session_continuations_session ON session_continuations (session_id, seq);
CREATE INDEX session_continuations_run ON session_continuations (run_id)
    WHERE run_id IS NOT NULL;

CREATE TABLE leases (
    name TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    acquired_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL
);
CREATE INDEX leases_owner ON leases (owner);

CREATE TABLE chat_turns (
    seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    conversation_id TEXT NOT NULL REFERENCES conversations (id),
    agent TEXT,
    kind TEXT NOT NULL CHECK (kind IN ('message', 'wakeup')),
    message_id TEXT UNIQUE,
    wakeup_id TEXT UNIQUE,
    status TEXT NOT NULL CHECK (status IN ('queued', 'running', 'done', 'failed')),
    due_at BIGINT NOT NULL,
    owner TEXT,
    lease_until BIGINT,
    attempts INTEGER NOT NULL DEFAULT 0,
    stage TEXT,
    reply_id TEXT,
    last_error TEXT,
    created_at BIGINT NOT NULL,
    started_at BIGINT,
    finished_at BIGINT
);
CREATE INDEX chat_turns_queued ON chat_turns (due_at) WHERE status = 'queued';
CREATE INDEX chat_turns_leased ON chat_turns (lease_until) WHERE status = 'running';
CREATE INDEX chat_turns_conversation ON chat_turns (conversation_id, seq);

-- Pages half filled: a row's updates are written beside it, touching no index (0030).
CREATE TABLE flow_queue (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    target TEXT NOT NULL,
    task TEXT NOT NULL,
    flowfile_id TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('queued', 'running', 'parked')),
    payload BYTEA NOT NULL,
    hops INTEGER NOT NULL DEFAULT 0,
    attempts INTEGER NOT NULL DEFAULT 0,
    owner TEXT,
    continuation_id TEXT,
    created_at BIGINT NOT NULL,
    taken_at BIGINT
) WITH (fillfactor = 50);
CREATE INDEX flow_queue_target ON flow_queue (target, id);
CREATE UNIQUE INDEX flow_queue_continuation ON flow_queue (continuation_id)
    WHERE continuation_id IS NOT NULL;

-- Which answered request refers to which upload (downloads are authorized through it).
CREATE TABLE file_links (
    file_id TEXT NOT NULL REFERENCES files (id),
    interaction_id TEXT NOT NULL REFERENCES interactions (id),
    PRIMARY KEY (file_id, interaction_id)
);

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
DROP INDEX events_user;
CREATE UNIQUE INDEX events_user_seq ON events (user_id, user_seq);
CREATE TABLE event_counters (
    user_id TEXT PRIMARY KEY,
    last_seq BIGINT NOT NULL
);

-- An interaction's events name it (ref) instead of carrying a copy of its JSON.
ALTER TABLE events ADD COLUMN ref TEXT;

-- Where an answer came from (channel, and a chat message's seq); the pending ones by
-- conversation.
ALTER TABLE interactions ADD COLUMN answered_via TEXT;
ALTER TABLE interactions ADD COLUMN answered_seq BIGINT;
CREATE INDEX interactions_pending ON interactions (conversation_id, created_at)
    WHERE status = 'pending';

-- An idempotency key per owner: asking again with it finds the first request.
ALTER TABLE interactions ADD COLUMN idempotency_key TEXT;
CREATE UNIQUE INDEX interactions_idempotency ON interactions (owner, idempotency_key)
    WHERE idempotency_key IS NOT NULL;

-- The ask's trace context (a W3C traceparent): the answer and the resume link to it.
ALTER TABLE interactions ADD COLUMN trace_context TEXT;

-- A wakeup is a turn that carries its payload and its source (one wakeup per source).
ALTER TABLE chat_turns ADD COLUMN source TEXT;
ALTER TABLE chat_turns ADD COLUMN payload TEXT;
ALTER TABLE chat_turns ADD COLUMN tool_started_at BIGINT;
CREATE UNIQUE INDEX chat_turns_source ON chat_turns (source);

-- Where each user is reached, the outbox of notifications, and answer links.
CREATE TABLE user_channels (
    user_id TEXT PRIMARY KEY REFERENCES users (id),
    email TEXT,
    slack TEXT,
    notify_url TEXT,
    notify TEXT,
    updated_at BIGINT NOT NULL
);

CREATE TABLE outbox (
    id TEXT PRIMARY KEY,
    request_id TEXT NOT NULL REFERENCES interactions (id),
    channel TEXT NOT NULL,
    recipient TEXT NOT NULL REFERENCES users (id),
    address TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('queued', 'sent', 'failed', 'skipped')),
    attempts INTEGER NOT NULL DEFAULT 0,
    next_at BIGINT NOT NULL,
    idempotency_key TEXT NOT NULL UNIQUE,
    external_ref TEXT,
    last_error TEXT,
    settle TEXT NOT NULL DEFAULT 'none' CHECK (settle IN ('none', 'due', 'done')),
    created_at BIGINT NOT NULL,
    sent_at BIGINT,
    UNIQUE (request_id, channel, recipient)
);
CREATE INDEX outbox_due ON outbox (next_at) WHERE status = 'queued';
CREATE INDEX outbox_settle ON outbox (next_at) WHERE settle = 'due';

CREATE TABLE answer_links (
    token_hash TEXT PRIMARY KEY,
    request_id TEXT NOT NULL REFERENCES interactions (id),
    user_id TEXT NOT NULL REFERENCES users (id),
    outbox_id TEXT REFERENCES outbox (id),
    created_at BIGINT NOT NULL,
    expires_at BIGINT,
    used_at BIGINT,
    revoked_at BIGINT
);
CREATE INDEX answer_links_request ON answer_links (request_id);
CREATE INDEX answer_links_user ON answer_links (user_id) WHERE used_at IS NULL;
-- Approval rules: a tool call an agent may make again without asking ("always allow"),
-- in one conversation or wherever the agent acts for the user who allowed it.
CREATE TABLE approval_rules (
    id TEXT PRIMARY KEY,
    agent TEXT NOT NULL,
    tool TEXT NOT NULL,
    arguments TEXT NOT NULL,
    scope TEXT NOT NULL CHECK (scope IN ('conversation', 'agent')),
    conversation_id TEXT REFERENCES conversations (id),
    user_id TEXT NOT NULL,
    request_id TEXT,
    created_at BIGINT NOT NULL,
    revoked_at BIGINT,
    revoked_by TEXT
);
CREATE INDEX approval_rules_live ON approval_rules (agent, tool) WHERE revoked_at IS NULL;
CREATE INDEX approval_rules_user ON approval_rules (user_id, created_at);

-- The arguments an approved tool call was run with, by its approval request.
CREATE TABLE tool_executions (
    request_id TEXT PRIMARY KEY REFERENCES interactions (id),
    tool TEXT NOT NULL,
    arguments TEXT NOT NULL,
    run_id TEXT,
    executed_at BIGINT NOT NULL
);


-- Accountability: groups of users, delegations, who a request waits for and what happens
-- when nobody answers, the votes of a quorum, and an append-only audit trail per request.
CREATE TABLE user_groups (
    name TEXT NOT NULL,
    member TEXT NOT NULL,
    added_at BIGINT NOT NULL,
    PRIMARY KEY (name, member)
);
CREATE INDEX user_groups_member ON user_groups (member);

CREATE TABLE delegations (
    principal TEXT NOT NULL,
    delegate TEXT NOT NULL,
    until_at BIGINT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (principal, delegate)
);
CREATE INDEX delegations_delegate ON delegations (delegate, until_at);

CREATE TABLE request_policies (
    request_id TEXT PRIMARY KEY REFERENCES interactions (id),
    assignees TEXT NOT NULL,
    reassign_to TEXT,
    requester_may_answer INTEGER NOT NULL DEFAULT 1,
    required_approvals INTEGER,
    reject_rule TEXT NOT NULL DEFAULT 'first',
    on_expire TEXT,
    extended INTEGER NOT NULL DEFAULT 0,
    claim_ttl_ms BIGINT,
    claimed_by TEXT,
    claim_expires_at BIGINT,
    remind_every_ms BIGINT,
    next_remind_at BIGINT,
    escalate TEXT,
    escalation_step INTEGER NOT NULL DEFAULT 0,
    next_escalation_at BIGINT
);
CREATE INDEX request_policies_remind ON request_policies (next_remind_at)
    WHERE next_remind_at IS NOT NULL;
CREATE INDEX request_policies_escalate ON request_policies (next_escalation_at)
    WHERE next_escalation_at IS NOT NULL;

CREATE TABLE request_votes (
    request_id TEXT NOT NULL REFERENCES interactions (id),
    voter TEXT NOT NULL,
    vote TEXT NOT NULL,
    via TEXT,
    voted_at BIGINT NOT NULL,
    voted_by TEXT,
    PRIMARY KEY (request_id, voter)
);
CREATE UNIQUE INDEX request_votes_account ON request_votes (request_id, voted_by);

CREATE TABLE request_audit (
    seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    request_id TEXT NOT NULL,
    at BIGINT NOT NULL,
    action TEXT NOT NULL,
    actor TEXT,
    via TEXT,
    detail TEXT
);
CREATE INDEX request_audit_request ON request_audit (request_id, seq);
CREATE INDEX request_audit_at ON request_audit (at, seq);

-- MCP elicitation rounds: each client reply (accept, decline, cancel); a 2026 round's id is
-- the nonce of its requestState, which makes the state single-use.
CREATE TABLE mcp_rounds (
    id TEXT PRIMARY KEY,
    interaction_id TEXT NOT NULL REFERENCES interactions (id) ON DELETE CASCADE,
    user_id TEXT NOT NULL,
    action TEXT NOT NULL,
    created_at BIGINT NOT NULL
);
CREATE INDEX mcp_rounds_interaction ON mcp_rounds (interaction_id, created_at);

-- Webhooks: subscriptions to the events of a user's requests, and their deliveries.
CREATE TABLE webhooks (
    id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL REFERENCES users (id),
    url TEXT NOT NULL,
    events TEXT NOT NULL,
    secret TEXT NOT NULL,
    created_at BIGINT NOT NULL
);
CREATE INDEX webhooks_user ON webhooks (user_id);

CREATE TABLE webhook_deliveries (
    id TEXT PRIMARY KEY,
    webhook_id TEXT NOT NULL REFERENCES webhooks (id),
    request_id TEXT NOT NULL REFERENCES interactions (id),
    event TEXT NOT NULL,
    payload TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('queued', 'sent', 'failed')),
    attempts INTEGER NOT NULL DEFAULT 0,
    next_at BIGINT NOT NULL,
    last_error TEXT,
    response_status INTEGER,
    created_at BIGINT NOT NULL,
    sent_at BIGINT,
    UNIQUE (webhook_id, request_id, event)
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_at) WHERE status = 'queued';
CREATE INDEX webhook_deliveries_log ON webhook_deliveries (webhook_id, created_at);

-- A2A tasks, their push-notification configs, and the pushes on their way.
CREATE TABLE a2a_tasks (
    id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL REFERENCES users (id),
    agent TEXT NOT NULL,
    context_id TEXT NOT NULL,
    state TEXT NOT NULL,
    task TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE INDEX a2a_tasks_user ON a2a_tasks (user_id, agent, updated_at);

CREATE TABLE a2a_push_configs (
    task_id TEXT NOT NULL,
    id TEXT NOT NULL,
    user_id TEXT NOT NULL REFERENCES users (id),
    url TEXT NOT NULL,
    token TEXT,
    auth_scheme TEXT,
    auth_credentials TEXT,
    config TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (task_id, id)
);

CREATE TABLE a2a_push_deliveries (
    id TEXT PRIMARY KEY,
    task_id TEXT NOT NULL,
    config_id TEXT NOT NULL,
    event TEXT NOT NULL,
    payload TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('queued', 'sent', 'failed')),
    attempts INTEGER NOT NULL DEFAULT 0,
    next_at BIGINT NOT NULL,
    last_error TEXT,
    response_status INTEGER,
    created_at BIGINT NOT NULL,
    sent_at BIGINT
);
CREATE INDEX a2a_push_deliveries_due ON a2a_push_deliveries (next_at) WHERE status = 'queued';
CREATE INDEX a2a_push_deliveries_log ON a2a_push_deliveries (task_id, created_at);

-- 0024: tokens that end (ids, names, expiry, last use), idle logins, disabled users.
ALTER TABLE api_tokens RENAME COLUMN label TO name;
ALTER TABLE api_tokens ADD COLUMN id TEXT;
ALTER TABLE api_tokens ADD COLUMN expires_at BIGINT;
ALTER TABLE api_tokens ADD COLUMN last_used_at BIGINT;
CREATE UNIQUE INDEX api_tokens_id ON api_tokens (id);

ALTER TABLE web_sessions ADD COLUMN last_seen_at BIGINT;
CREATE INDEX web_sessions_user ON web_sessions (user_id);

ALTER TABLE users ADD COLUMN disabled_at BIGINT;

-- 0025: Web Push: the server's VAPID key pair and each user's subscriptions, one per device.
CREATE TABLE push_keys (
    id TEXT PRIMARY KEY CHECK (id = 'vapid'),
    private_key TEXT NOT NULL,
    public_key TEXT NOT NULL,
    created_at BIGINT NOT NULL
);

CREATE TABLE push_subscriptions (
    id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL REFERENCES users (id),
    endpoint TEXT NOT NULL UNIQUE,
    p256dh TEXT NOT NULL,
    auth TEXT NOT NULL,
    device TEXT NOT NULL,
    created_at BIGINT NOT NULL
);
CREATE INDEX push_subscriptions_user ON push_subscriptions (user_id);

-- 0026: roles (every user a member, some admins; who made them so) and their email.
ALTER TABLE users ADD COLUMN role TEXT NOT NULL DEFAULT 'member' CHECK (role IN ('admin', 'member'));
ALTER TABLE users ADD COLUMN role_source TEXT NOT NULL DEFAULT 'local';
ALTER TABLE users ADD COLUMN email TEXT;

-- Who an identity provider's subject is here (single sign-on, OpenID Connect).
CREATE TABLE oidc_identities (
    issuer TEXT NOT NULL,
    subject TEXT NOT NULL,
    user_id TEXT NOT NULL REFERENCES users (id),
    created_at BIGINT NOT NULL,
    last_signin_at BIGINT NOT NULL,
    PRIMARY KEY (issuer, subject)
);
CREATE INDEX oidc_identities_user ON oidc_identities (user_id);

-- A sign-in under way at the provider: its state (kept as a digest) is used once.
CREATE TABLE oidc_attempts (
    state_hash TEXT PRIMARY KEY,
    nonce TEXT NOT NULL,
    code_verifier TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL
);

-- Groups the identity provider keeps: their members follow its groups claim at each sign-in
-- and are not edited by hand.
CREATE TABLE provider_groups (
    name TEXT PRIMARY KEY,
    issuer TEXT NOT NULL,
    synced_at BIGINT NOT NULL
);

-- Settings an admin changes while the server runs (link sign-in on or off).
CREATE TABLE server_options (
    name TEXT PRIMARY KEY,
    value TEXT NOT NULL,
    changed_by TEXT,
    changed_at BIGINT NOT NULL
);

-- What admins did: who, what, to what, when and from where (append-only).
CREATE TABLE admin_audit (
    seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at BIGINT NOT NULL,
    actor TEXT NOT NULL,
    action TEXT NOT NULL,
    target TEXT,
    detail TEXT,
    address TEXT,
    user_agent TEXT
);
CREATE INDEX admin_audit_at ON admin_audit (at, seq);
CREATE INDEX admin_audit_actor ON admin_audit (actor, seq);

-- 0027: indexes the retention sweep finds finished A2A tasks and settled deliveries by.
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

-- 0028: the event log and the audit trail are found by age through their sequence.
DROP INDEX events_created;
DROP INDEX request_audit_at;

-- 0029: a notification notes when its request settled (what the retention sweep goes by).
ALTER TABLE outbox ADD COLUMN settled_at BIGINT;
CREATE INDEX outbox_forgettable ON outbox (settled_at)
    WHERE settled_at IS NOT NULL AND status <> 'queued';
DROP INDEX outbox_settled;
