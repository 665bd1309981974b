-- Roles: every user is a member, some are admins too; role_source says who made them admin
-- ('local': the first user, the CLI or an admin; 'provider': the identity provider's admin
-- group, which takes the role back when it leaves that group).
ALTER TABLE users ADD COLUMN role TEXT NOT NULL DEFAULT 'member' CHECK (role IN ('admin', 'member'));
ALTER TABLE users ADD COLUMN role_source TEXT NOT NULL DEFAULT 'local';
ALTER TABLE users ADD COLUMN email TEXT;

-- Who an identity provider's subject is here (single sign-on, OpenID Connect).
CREATE TABLE oidc_identities (
    issuer TEXT NOT NULL,
    subject TEXT NOT NULL,
    user_id TEXT NOT NULL REFERENCES users (id),
    created_at INTEGER NOT NULL,
    last_signin_at INTEGER NOT NULL,
    PRIMARY KEY (issuer, subject)
);
CREATE INDEX oidc_identities_user ON oidc_identities (user_id);

-- A sign-in under way at the provider: its state (kept as a digest) is used once.
CREATE TABLE oidc_attempts (
    state_hash TEXT PRIMARY KEY,
    nonce TEXT NOT NULL,
    code_verifier TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
);

-- Groups the identity provider keeps: their members follow its groups claim at each sign-in
-- and are not edited by hand.
CREATE TABLE provider_groups (
    name TEXT PRIMARY KEY,
    issuer TEXT NOT NULL,
    synced_at INTEGER NOT NULL
);

-- Settings an admin changes while the server runs (link sign-in on or off).
CREATE TABLE server_options (
    name TEXT PRIMARY KEY,
    value TEXT NOT NULL,
    changed_by TEXT,
    changed_at INTEGER NOT NULL
);

-- What admins did: who, what, to what, when and from where (append-only).
CREATE TABLE admin_audit (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    at INTEGER NOT NULL,
    actor TEXT NOT NULL,
    action TEXT NOT NULL,
    target TEXT,
    detail TEXT,
    address TEXT,
    user_agent TEXT
);
CREATE INDEX admin_audit_at ON admin_audit (at, seq);
CREATE INDEX admin_audit_actor ON admin_audit (actor, seq);
