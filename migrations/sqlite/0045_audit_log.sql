-- The audit log: who changed what, from where, written in the transaction of the change.
-- No foreign key to tenants: tenant codes are never reused, and what happened in a
-- deleted tenant stays readable (under an ancestor, by path) until retention prunes it.
CREATE TABLE audit_log (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant_code   TEXT NOT NULL,
    -- The tenant's materialised path (it never changes): ancestors list by prefix.
    tenant_path   TEXT NOT NULL,
    at            BIGINT NOT NULL,
    actor         TEXT NOT NULL,
    client        TEXT,
    action        TEXT NOT NULL,
    resource_type TEXT NOT NULL,
    resource_id   TEXT
);
CREATE INDEX audit_log_tenant ON audit_log (tenant_code, id);
CREATE INDEX audit_log_at ON audit_log (at);
