-- Tenant configuration: geofences, webhook settings, external links.

CREATE TABLE geofences (
    id                    INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant_code           TEXT NOT NULL REFERENCES tenants (code) ON DELETE CASCADE,
    name                  TEXT NOT NULL,
    -- Names are unique within a tenant, case-insensitively (notification expressions
    -- may name a geofence).
    name_key              TEXT NOT NULL,
    geofence_type         TEXT NOT NULL,
    -- 1: visible (read-only) in every descendant tenant.
    applies_to_subtenants BIGINT NOT NULL DEFAULT 0,
    doc                   TEXT NOT NULL,
    etag                  TEXT NOT NULL,
    updated_at            TEXT NOT NULL,
    UNIQUE (tenant_code, name_key)
);
CREATE INDEX geofences_inherited ON geofences (applies_to_subtenants, tenant_code);

-- One row per tenant that has saved settings. The password is kept as given: delivery
-- needs the plain secret (Basic, Bearer, HMAC key).
CREATE TABLE webhook_settings (
    tenant_code TEXT PRIMARY KEY REFERENCES tenants (code) ON DELETE CASCADE,
    doc         TEXT NOT NULL,
    password    TEXT,
    etag        TEXT NOT NULL,
    updated_at  TEXT NOT NULL
);

CREATE TABLE external_links (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant_code TEXT NOT NULL REFERENCES tenants (code) ON DELETE CASCADE,
    sort_order  BIGINT NOT NULL,
    doc         TEXT NOT NULL,
    updated_at  TEXT NOT NULL
);
CREATE INDEX external_links_tenant ON external_links (tenant_code, sort_order, id);
