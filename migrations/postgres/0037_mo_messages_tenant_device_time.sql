-- A device's messages by time, under its tenant: one index instead of two. Every query of
-- a device's messages names its tenant, and the tenant's foreign key (ON DELETE CASCADE)
-- needs an index that leads with `tenant_code`; `(device_id, message_time, id)` served the
-- first and `(tenant_code, message_time)` only the second (the queries kept off it). Each
-- stored message wrote both: one B-tree entry fewer per message on the ingest path.
CREATE INDEX mo_messages_tenant_device_time ON mo_messages (tenant_code, device_id, message_time, id);
DROP INDEX mo_messages_device_time;
DROP INDEX mo_messages_tenant_time;
