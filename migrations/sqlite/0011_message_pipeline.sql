-- The message pipeline (issue 7): MO messages, device state, alerts, the delivery outbox
-- and MT messages. Times are BIGINT microseconds since the Unix epoch (UTC).

-- Messages from devices. `message_time` is SentFromDevice, or ReceivedAtServer when the
-- device sent none: what filters, ordering, device state and reports use. The device is
-- named, not referenced: a device's history outlives the device (its tenant's does not).
CREATE TABLE mo_messages (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant_code     TEXT NOT NULL REFERENCES tenants (code) ON DELETE CASCADE,
    device_id       TEXT NOT NULL,
    sequence_number BIGINT,
    sent_at         BIGINT,
    received_at     BIGINT NOT NULL,
    message_time    BIGINT NOT NULL,
    message_type    TEXT,
    latitude        DOUBLE PRECISION,
    longitude       DOUBLE PRECISION,
    speed           DOUBLE PRECISION,
    heading         DOUBLE PRECISION,
    emergency_state TEXT,
    -- The record as the device sent it (no File, no Attachment), as JSON.
    doc             TEXT NOT NULL,
    -- ContainingGeofences, as JSON (NULL: none).
    geofences       TEXT,
    file            TEXT,
    attachment      TEXT,
    etag            TEXT NOT NULL
);
-- A device's retry of a message it already sent is recognised by this key.
CREATE UNIQUE INDEX mo_messages_dedupe ON mo_messages (device_id, sequence_number, sent_at)
    WHERE sequence_number IS NOT NULL AND sent_at IS NOT NULL;
CREATE INDEX mo_messages_device_time ON mo_messages (device_id, message_time, id);
CREATE INDEX mo_messages_tenant_time ON mo_messages (tenant_code, message_time);

-- What the platform knows about a device now, kept by message time (a late message does
-- not move it backwards), updated in the transaction that stores the messages. The row
-- is also the lock that serialises ingest for one device.
CREATE TABLE device_states (
    device_id                 TEXT PRIMARY KEY REFERENCES devices (device_id) ON DELETE CASCADE,
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
    next_check_in_at          BIGINT
);
CREATE INDEX device_states_check_in ON device_states (next_check_in_at)
    WHERE next_check_in_at IS NOT NULL;
INSERT INTO device_states (device_id, tenant_code) SELECT device_id, tenant_code FROM devices;

-- Alerts raised by notifications with RaiseAlert: Open -> Acknowledged -> Resolved.
CREATE TABLE alerts (
    id                 INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant_code        TEXT NOT NULL REFERENCES tenants (code) ON DELETE CASCADE,
    device_id          TEXT NOT NULL,
    notification_id    BIGINT REFERENCES event_notifications (id) ON DELETE SET NULL,
    notification_name  TEXT NOT NULL,
    severity           TEXT NOT NULL,
    status             TEXT NOT NULL,
    raised_at          BIGINT NOT NULL,
    last_match_at      BIGINT NOT NULL,
    match_count        BIGINT NOT NULL,
    latitude           DOUBLE PRECISION,
    longitude          DOUBLE PRECISION,
    -- JSON array of geofence names.
    geofences          TEXT NOT NULL DEFAULT '[]',
    message_id         BIGINT,
    late               BIGINT NOT NULL DEFAULT 0,
    acknowledged_by    TEXT,
    acknowledged_at    BIGINT,
    resolved_by        TEXT,
    resolved_at        BIGINT,
    resolution         TEXT,
    escalation_level   BIGINT NOT NULL DEFAULT 0,
    next_escalation_at BIGINT,
    etag               TEXT NOT NULL
);
-- At most one open (or acknowledged) alert per notification and device: further matches join it.
CREATE UNIQUE INDEX alerts_open ON alerts (notification_id, device_id)
    WHERE status IN ('Open', 'Acknowledged');
CREATE INDEX alerts_tenant ON alerts (tenant_code, raised_at);
CREATE INDEX alerts_escalation ON alerts (next_escalation_at) WHERE next_escalation_at IS NOT NULL;

-- The outbox: one row per resolved target of a match (and, later, per webhook event),
-- written in the transaction that stored the message. Nothing is ever dropped: a target
-- without an address is `NoAddress`, a channel without configuration `NotConfigured`.
CREATE TABLE deliveries (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant_code     TEXT NOT NULL REFERENCES tenants (code) ON DELETE CASCADE,
    channel         TEXT NOT NULL,
    target          TEXT,
    subject         TEXT,
    body            TEXT NOT NULL,
    status          TEXT NOT NULL,
    notification_id BIGINT,
    alert_id        BIGINT,
    message_id      BIGINT,
    mt_message_id   BIGINT,
    device_id       TEXT,
    event_id        TEXT,
    created_at      BIGINT NOT NULL,
    attempts        BIGINT NOT NULL DEFAULT 0,
    next_attempt_at BIGINT,
    lease_owner     TEXT,
    lease_until     BIGINT,
    last_error      TEXT,
    sent_at         BIGINT,
    provider_id     TEXT
);
CREATE INDEX deliveries_tenant ON deliveries (tenant_code, id);
CREATE INDEX deliveries_due ON deliveries (next_attempt_at) WHERE status = 'Pending';
CREATE INDEX deliveries_alert ON deliveries (alert_id);

-- Messages and commands queued for a device (DESIGN.md §4).
CREATE TABLE mt_messages (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant_code     TEXT NOT NULL REFERENCES tenants (code) ON DELETE CASCADE,
    device_id       TEXT NOT NULL REFERENCES devices (device_id) ON DELETE CASCADE,
    kind            TEXT NOT NULL,
    status          TEXT NOT NULL,
    -- Message and Parameters, as JSON.
    doc             TEXT NOT NULL,
    notification_id BIGINT,
    created_at      BIGINT NOT NULL,
    updated_at      BIGINT NOT NULL,
    etag            TEXT NOT NULL
);
CREATE INDEX mt_messages_device ON mt_messages (device_id, status, id);

-- Bumped with every change to geofences or event notifications: ingest caches the rules
-- it evaluates and reloads them when this moves (in any process sharing the database).
INSERT INTO counters (name, value) VALUES ('rules_version', 0);

-- The bump happens in the database, for every write path (cascades included).
CREATE TRIGGER geofences_rules_insert AFTER INSERT ON geofences
BEGIN UPDATE counters SET value = value + 1 WHERE name = 'rules_version'; END;
CREATE TRIGGER geofences_rules_update AFTER UPDATE ON geofences
BEGIN UPDATE counters SET value = value + 1 WHERE name = 'rules_version'; END;
CREATE TRIGGER geofences_rules_delete AFTER DELETE ON geofences
BEGIN UPDATE counters SET value = value + 1 WHERE name = 'rules_version'; END;
CREATE TRIGGER notifications_rules_insert AFTER INSERT ON event_notifications
BEGIN UPDATE counters SET value = value + 1 WHERE name = 'rules_version'; END;
CREATE TRIGGER notifications_rules_update AFTER UPDATE ON event_notifications
BEGIN UPDATE counters SET value = value + 1 WHERE name = 'rules_version'; END;
CREATE TRIGGER notifications_rules_delete AFTER DELETE ON event_notifications
BEGIN UPDATE counters SET value = value + 1 WHERE name = 'rules_version'; END;
