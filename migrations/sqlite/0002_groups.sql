-- Device groups (DESIGN.md §4). Devices, group-level notifications and reports refer to them.
CREATE TABLE device_groups (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant_code TEXT NOT NULL REFERENCES tenants (code) ON DELETE CASCADE,
    name        TEXT NOT NULL,
    doc         TEXT NOT NULL,
    etag        TEXT NOT NULL,
    updated_at  TEXT NOT NULL
);
CREATE INDEX device_groups_tenant ON device_groups (tenant_code, id);
