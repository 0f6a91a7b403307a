-- API tokens and browser sessions (issue 31, DESIGN §8). Secrets are stored only as their
-- SHA-256 (hex); a lookup is by that hash.

-- A token belongs to its tenant, not to its creator: it outlives the creator's account
-- (created_by is the creator's username as it was). Revoked tokens are kept, so a
-- refusal can say "revoked"; only live ones are listed.
CREATE TABLE api_tokens (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant_code  TEXT NOT NULL REFERENCES tenants (code) ON DELETE CASCADE,
    name         TEXT NOT NULL,
    secret_hash  TEXT NOT NULL UNIQUE,
    prefix       TEXT NOT NULL,
    -- Permission names, comma-separated.
    permissions  TEXT NOT NULL,
    created_by   TEXT NOT NULL,
    created_at   BIGINT NOT NULL,
    expires_at   BIGINT,
    last_used_at BIGINT,
    revoked_at   BIGINT
);
-- A live token's name is what its actions are recorded as: one per tenant.
CREATE UNIQUE INDEX api_tokens_live_name ON api_tokens (tenant_code, name)
    WHERE revoked_at IS NULL;

-- A session ends when the user goes (cascade), and is deleted when it is logged out or
-- when the user's password, role or disabled state changes.
CREATE TABLE sessions (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    id_hash      TEXT NOT NULL UNIQUE,
    user_id      BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at   BIGINT NOT NULL,
    -- Written at most every few seconds to a minute (idle timeout), not per request.
    last_seen_at BIGINT NOT NULL,
    -- The absolute end (created_at + --session-max-hours).
    expires_at   BIGINT NOT NULL
);
CREATE INDEX sessions_user ON sessions (user_id);
