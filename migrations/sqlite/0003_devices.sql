-- Devices and the deleted-devices log (DESIGN.md §4).
CREATE UNIQUE INDEX device_groups_name ON device_groups (tenant_code, name);

CREATE TABLE devices (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    -- Chosen by the client; unique across the platform.
    device_id   TEXT NOT NULL UNIQUE,
    tenant_code TEXT NOT NULL REFERENCES tenants (code) ON DELETE CASCADE,
    -- A group with devices cannot be deleted (checked, and enforced here).
    group_id    BIGINT REFERENCES device_groups (id),
    -- Deleting a user unassigns their devices.
    user_id     BIGINT REFERENCES users (id) ON DELETE SET NULL,
    device_type TEXT NOT NULL,
    status      TEXT NOT NULL,
    doc         TEXT NOT NULL,
    etag        TEXT NOT NULL,
    updated_at  TEXT NOT NULL
);
CREATE INDEX devices_tenant ON devices (tenant_code, id);
CREATE INDEX devices_group ON devices (group_id);

CREATE TABLE deleted_devices (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant_code TEXT NOT NULL REFERENCES tenants (code) ON DELETE CASCADE,
    device_id   TEXT NOT NULL,
    doc         TEXT NOT NULL,
    deleted_at  TEXT NOT NULL
);
CREATE INDEX deleted_devices_tenant ON deleted_devices (tenant_code, device_id);
