-- A DeviceId is unique within its tenant, no longer across the platform (issue 30, finding
-- 12): a tenant that registered an id first blocked its real owner from provisioning it,
-- and the 409 told that another tenant had it. A device is now keyed by (device_id,
-- tenant_code), and so is everything that names it: its state, its MT messages (foreign
-- keys), the MO dedupe key and the one-open-alert rule. Existing rows are kept as they are
-- (every existing id was unique, so every existing row keys the same device).
--
-- SQLite cannot change a table's constraints: devices, device_states and mt_messages are
-- rebuilt (create new, copy, drop, rename, index), inside this migration's transaction.
-- Foreign keys are on and cannot be turned off inside a transaction, so the order matters:
-- the new children reference the new devices table; the old children are dropped before
-- the old devices table (dropping a parent deletes its rows first, which would cascade);
-- renaming `devices_new` rewrites the new children's references to `devices`.

CREATE TABLE devices_new (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    -- Chosen by the client; unique within the tenant (`devices_device_tenant`).
    device_id   TEXT NOT NULL,
    tenant_code TEXT NOT NULL REFERENCES tenants (code) ON DELETE CASCADE,
    -- A group with devices cannot be deleted (checked, and enforced here).
    group_id    BIGINT REFERENCES device_groups (id),
    -- Deleting a user unassigns their devices.
    user_id     BIGINT REFERENCES users (id) ON DELETE SET NULL,
    device_type TEXT NOT NULL,
    status      TEXT NOT NULL,
    doc         TEXT NOT NULL,
    etag        TEXT NOT NULL,
    updated_at  BIGINT NOT NULL DEFAULT 0
);
-- Led by device_id: the key of one tenant's device, and the index of a lookup by id
-- across a subtree (collections, reports' DeviceIds). Made before the children refer to it.
CREATE UNIQUE INDEX devices_device_tenant ON devices_new (device_id, tenant_code);
INSERT INTO devices_new (id, device_id, tenant_code, group_id, user_id, device_type, status, doc, etag, updated_at)
    SELECT id, device_id, tenant_code, group_id, user_id, device_type, status, doc, etag, updated_at
    FROM devices;

CREATE TABLE device_states_new (
    device_id                 TEXT NOT NULL,
    tenant_code               TEXT NOT NULL REFERENCES tenants (code) ON DELETE CASCADE,
    last_message_time         BIGINT,
    last_message_id           BIGINT,
    latitude                  DOUBLE PRECISION,
    longitude                 DOUBLE PRECISION,
    speed                     DOUBLE PRECISION,
    heading                   DOUBLE PRECISION,
    altitude                  DOUBLE PRECISION,
    gps_at                    BIGINT,
    emergency_state           TEXT,
    battery                   DOUBLE PRECISION,
    -- JSON array of {"GeofenceId", "GeofenceName"}.
    geofences                 TEXT NOT NULL DEFAULT '[]',
    check_in_interval_minutes BIGINT,
    check_in_paused           BIGINT NOT NULL DEFAULT 0,
    -- When the scheduler owes a MissedCheckIn (NULL: no schedule).
    next_check_in_at          BIGINT,
    -- Led by tenant_code: `devices_in_box` and the tenant's cascade read it by tenant.
    PRIMARY KEY (tenant_code, device_id),
    FOREIGN KEY (device_id, tenant_code) REFERENCES devices_new (device_id, tenant_code) ON DELETE CASCADE
);
INSERT INTO device_states_new (device_id, tenant_code, last_message_time, last_message_id, latitude,
        longitude, speed, heading, altitude, gps_at, emergency_state, battery, geofences,
        check_in_interval_minutes, check_in_paused, next_check_in_at)
    SELECT device_id, tenant_code, last_message_time, last_message_id, latitude,
        longitude, speed, heading, altitude, gps_at, emergency_state, battery, geofences,
        check_in_interval_minutes, check_in_paused, next_check_in_at
    FROM device_states;

CREATE TABLE mt_messages_new (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant_code     TEXT NOT NULL REFERENCES tenants (code) ON DELETE CASCADE,
    device_id       TEXT NOT NULL,
    kind            TEXT NOT NULL,
    status          TEXT NOT NULL,
    -- Message and Parameters, as JSON.
    doc             TEXT NOT NULL,
    notification_id BIGINT,
    created_at      BIGINT NOT NULL,
    updated_at      BIGINT NOT NULL,
    etag            TEXT NOT NULL,
    FOREIGN KEY (device_id, tenant_code) REFERENCES devices_new (device_id, tenant_code) ON DELETE CASCADE
);
INSERT INTO mt_messages_new (id, tenant_code, device_id, kind, status, doc, notification_id,
        created_at, updated_at, etag)
    SELECT id, tenant_code, device_id, kind, status, doc, notification_id,
        created_at, updated_at, etag
    FROM mt_messages;

-- AUTOINCREMENT never hands out an id again, not even a deleted row's: the new tables go
-- on from where the old ones were (MT message ids are in the API and in deliveries).
DELETE FROM sqlite_sequence WHERE name IN ('devices_new', 'mt_messages_new');
INSERT INTO sqlite_sequence (name, seq)
    SELECT name || '_new', seq FROM sqlite_sequence WHERE name IN ('devices', 'mt_messages');

DROP TABLE device_states;
DROP TABLE mt_messages;
DROP TABLE devices;
ALTER TABLE devices_new RENAME TO devices;
ALTER TABLE device_states_new RENAME TO device_states;
ALTER TABLE mt_messages_new RENAME TO mt_messages;

CREATE INDEX devices_tenant ON devices (tenant_code, id);
CREATE INDEX devices_group ON devices (group_id);
CREATE INDEX device_states_check_in ON device_states (next_check_in_at)
    WHERE next_check_in_at IS NOT NULL;
CREATE INDEX mt_messages_device ON mt_messages (tenant_code, device_id, status, id);

-- A device's retry is recognised among its own tenant's messages only.
DROP INDEX mo_messages_dedupe;
CREATE UNIQUE INDEX mo_messages_dedupe ON mo_messages (tenant_code, device_id, sequence_number, sent_at)
    WHERE sequence_number IS NOT NULL AND sent_at IS NOT NULL;

-- At most one open (or acknowledged) alert per notification and device of a tenant.
DROP INDEX alerts_open;
CREATE UNIQUE INDEX alerts_open ON alerts (notification_id, tenant_code, device_id)
    WHERE status IN ('Open', 'Acknowledged');
