-- Foundation: settings, counters, tenants, users (with their profiles).
-- Column types are those sqlx::Any carries: TEXT, BIGINT (booleans 0/1). Times are RFC 3339 UTC text.

CREATE TABLE settings (
    name  TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

CREATE TABLE counters (
    name  TEXT PRIMARY KEY,
    value BIGINT NOT NULL
);
-- Tenant codes are handed out from here: the root is 1000, subtenants 1001, 1002, ...
INSERT INTO counters (name, value) VALUES ('tenant_code', 1000);

CREATE TABLE tenants (
    code        TEXT PRIMARY KEY,
    -- No cascade: a tenant with subtenants cannot be deleted.
    parent_code TEXT REFERENCES tenants (code),
    -- Materialised path '/1000/1001/': a subtree is a prefix match.
    path        TEXT NOT NULL UNIQUE,
    doc         TEXT NOT NULL,
    etag        TEXT NOT NULL,
    updated_at  TEXT NOT NULL
);
CREATE INDEX tenants_parent ON tenants (parent_code);

CREATE TABLE users (
    id                  INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant_code         TEXT NOT NULL REFERENCES tenants (code) ON DELETE CASCADE,
    username            TEXT NOT NULL,
    username_key        TEXT NOT NULL UNIQUE,
    password_hash       TEXT,
    role                TEXT NOT NULL,
    is_disabled         BIGINT NOT NULL DEFAULT 0,
    failed_count        BIGINT NOT NULL DEFAULT 0,
    failed_window_start TEXT,
    last_lockout        TEXT,
    last_logged_in      TEXT,
    doc                 TEXT NOT NULL,
    photo               TEXT,
    profile_doc         TEXT NOT NULL,
    profile_updated_at  TEXT NOT NULL,
    etag                TEXT NOT NULL,
    updated_at          TEXT NOT NULL
);
CREATE INDEX users_tenant ON users (tenant_code, id);
