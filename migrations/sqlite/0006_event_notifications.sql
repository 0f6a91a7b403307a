-- Event notifications, tenant level (group_id NULL) or group level.
CREATE TABLE event_notifications (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant_code TEXT NOT NULL REFERENCES tenants (code) ON DELETE CASCADE,
    -- A group's notifications go with the group.
    group_id    BIGINT REFERENCES device_groups (id) ON DELETE CASCADE,
    doc         TEXT NOT NULL,
    etag        TEXT NOT NULL,
    updated_at  TEXT NOT NULL
);
CREATE INDEX event_notifications_tenant ON event_notifications (tenant_code, group_id, id);
