-- Device gateways (issue 35) find a device by its IridiumImei or SecondaryDeviceId, which
-- live in `doc`: each lookup is one index seek on the same expression the statement uses
-- (`store/gateway_devices.rs`), led by the value so a lookup across a subtree is one seek.
CREATE INDEX devices_iridium_imei ON devices (json_extract(doc, '$.IridiumImei'), tenant_code);
CREATE INDEX devices_secondary_id ON devices (json_extract(doc, '$.SecondaryDeviceId'), tenant_code);
