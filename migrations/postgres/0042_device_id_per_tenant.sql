-- A DeviceId is unique within its tenant, no longer across the platform (issue 30, finding
-- 12): a tenant that registered an id first blocked its real owner from provisioning it,
-- and the 409 told that another tenant had it. A device is now keyed by (device_id,
-- tenant_code), and so is everything that names it: its state, its MT messages (foreign
-- keys), the MO dedupe key and the one-open-alert rule. Existing rows are kept as they are
-- (every existing id was unique, so every existing row keys the same device).

-- Children first: their foreign keys hold the old unique constraint.
ALTER TABLE device_states DROP CONSTRAINT device_states_device_id_fkey;
ALTER TABLE mt_messages DROP CONSTRAINT mt_messages_device_id_fkey;

-- Led by device_id: the key of one tenant's device, and the index of a lookup by id
-- across a subtree (collections, reports' DeviceIds).
ALTER TABLE devices DROP CONSTRAINT devices_device_id_key;
ALTER TABLE devices ADD CONSTRAINT devices_device_tenant UNIQUE (device_id, tenant_code);

-- Led by tenant_code: `devices_in_box` and the tenant's cascade read it by tenant.
ALTER TABLE device_states DROP CONSTRAINT device_states_pkey;
ALTER TABLE device_states ADD PRIMARY KEY (tenant_code, device_id);
ALTER TABLE device_states ADD CONSTRAINT device_states_device_fkey
    FOREIGN KEY (device_id, tenant_code) REFERENCES devices (device_id, tenant_code) ON DELETE CASCADE;

ALTER TABLE mt_messages ADD CONSTRAINT mt_messages_device_fkey
    FOREIGN KEY (device_id, tenant_code) REFERENCES devices (device_id, tenant_code) ON DELETE CASCADE;
DROP INDEX mt_messages_device;
CREATE INDEX mt_messages_device ON mt_messages (tenant_code, device_id, status, id);

-- A device's retry is recognised among its own tenant's messages only.
DROP INDEX mo_messages_dedupe;
CREATE UNIQUE INDEX mo_messages_dedupe ON mo_messages (tenant_code, device_id, sequence_number, sent_at)
    WHERE sequence_number IS NOT NULL AND sent_at IS NOT NULL;

-- At most one open (or acknowledged) alert per notification and device of a tenant.
DROP INDEX alerts_open;
CREATE UNIQUE INDEX alerts_open ON alerts (notification_id, tenant_code, device_id)
    WHERE status IN ('Open', 'Acknowledged');
