-- One device per gateway identifier (issue 42; docs/decisions.md, "One device per gateway
-- identifier"). A gateway finds a device by DeviceId, IridiumImei or SecondaryDeviceId
-- across its token's subtree, so an IridiumImei or SecondaryDeviceId (a physical
-- identifier) names one device in the whole installation and is no other device's
-- DeviceId; a DeviceId stays unique per tenant only.
--
-- Each physical identifier is bound here to the one device that has it (the primary key
-- binds it once). A device write also puts a row with no device here for each value it
-- writes, to lock it, and removes it again (`store/gateway_devices.rs`): two writes that
-- could clash take turns, and the second sees the first's device.
CREATE TABLE device_identifiers (
    identifier  TEXT PRIMARY KEY,
    -- The device it names; NULL only inside a device write's transaction.
    tenant_code TEXT,
    device_id   TEXT,
    FOREIGN KEY (device_id, tenant_code) REFERENCES devices (device_id, tenant_code) ON DELETE CASCADE
);
CREATE INDEX device_identifiers_device ON device_identifiers (tenant_code, device_id);

-- Bound from the devices there are: each identifier exactly one device has as a physical
-- identifier and no other device as its DeviceId. Identifiers stored before the rule that
-- name several devices stay unbound: the gateway lookup refuses them as ambiguous, and a
-- write of such a device is refused until it no longer clashes.
INSERT INTO device_identifiers (identifier, tenant_code, device_id)
SELECT c.identifier, c.tenant_code, c.device_id
FROM (
    SELECT p.identifier, MIN(p.tenant_code) AS tenant_code, MIN(p.device_id) AS device_id
    FROM (
        SELECT ((doc::jsonb) ->> 'IridiumImei') AS identifier, tenant_code, device_id FROM devices
        UNION
        SELECT ((doc::jsonb) ->> 'SecondaryDeviceId'), tenant_code, device_id FROM devices
    ) p
    WHERE p.identifier IS NOT NULL AND p.identifier <> ''
    GROUP BY p.identifier
    HAVING COUNT(*) = 1
) c
WHERE NOT EXISTS (
    SELECT 1 FROM devices o
    WHERE o.device_id = c.identifier
      AND NOT (o.tenant_code = c.tenant_code AND o.device_id = c.device_id)
);
