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
    PRIMARY KEY (request_id, voter)
);

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
