-- Cross-tenant collections (issue 10): named sets of devices from any tenants the owner
-- can access, used by reports as CollectionId. Device ids are kept as named (a device
-- deleted later simply matches nothing).
CREATE TABLE collections (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant_code TEXT NOT NULL REFERENCES tenants (code) ON DELETE CASCADE,
    name        TEXT NOT NULL,
    -- DeviceIds, as a JSON array.
    device_ids  TEXT NOT NULL,
    etag        TEXT NOT NULL,
    updated_at  BIGINT NOT NULL
);
CREATE INDEX collections_tenant ON collections (tenant_code, id);
