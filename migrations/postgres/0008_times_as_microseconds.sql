-- Times become integers: microseconds since the Unix epoch (UTC). RFC 3339 text with a
-- fractional part of varying width did not sort: '…:00.5Z' > '…:00.25Z' but also
-- '…:00Z' > '…:00.9Z'. Integers order exactly on both backends, compare exactly (the MO
-- dedupe key holds a time) and need no parsing. Existing rows are converted.

ALTER TABLE tenants
    ALTER COLUMN updated_at TYPE BIGINT USING (extract(epoch FROM updated_at::timestamptz) * 1000000)::BIGINT;
ALTER TABLE users
    ALTER COLUMN failed_window_start TYPE BIGINT USING (extract(epoch FROM failed_window_start::timestamptz) * 1000000)::BIGINT,
    ALTER COLUMN last_lockout TYPE BIGINT USING (extract(epoch FROM last_lockout::timestamptz) * 1000000)::BIGINT,
    ALTER COLUMN last_logged_in TYPE BIGINT USING (extract(epoch FROM last_logged_in::timestamptz) * 1000000)::BIGINT,
    ALTER COLUMN profile_updated_at TYPE BIGINT USING (extract(epoch FROM profile_updated_at::timestamptz) * 1000000)::BIGINT,
    ALTER COLUMN updated_at TYPE BIGINT USING (extract(epoch FROM updated_at::timestamptz) * 1000000)::BIGINT;
ALTER TABLE device_groups
    ALTER COLUMN updated_at TYPE BIGINT USING (extract(epoch FROM updated_at::timestamptz) * 1000000)::BIGINT;
ALTER TABLE devices
    ALTER COLUMN updated_at TYPE BIGINT USING (extract(epoch FROM updated_at::timestamptz) * 1000000)::BIGINT;
ALTER TABLE deleted_devices
    ALTER COLUMN deleted_at TYPE BIGINT USING (extract(epoch FROM deleted_at::timestamptz) * 1000000)::BIGINT;
ALTER TABLE address_book_contacts
    ALTER COLUMN updated_at TYPE BIGINT USING (extract(epoch FROM updated_at::timestamptz) * 1000000)::BIGINT;
ALTER TABLE distribution_lists
    ALTER COLUMN updated_at TYPE BIGINT USING (extract(epoch FROM updated_at::timestamptz) * 1000000)::BIGINT;
ALTER TABLE geofences
    ALTER COLUMN updated_at TYPE BIGINT USING (extract(epoch FROM updated_at::timestamptz) * 1000000)::BIGINT;
ALTER TABLE webhook_settings
    ALTER COLUMN updated_at TYPE BIGINT USING (extract(epoch FROM updated_at::timestamptz) * 1000000)::BIGINT;
ALTER TABLE external_links
    ALTER COLUMN updated_at TYPE BIGINT USING (extract(epoch FROM updated_at::timestamptz) * 1000000)::BIGINT;
ALTER TABLE event_notifications
    ALTER COLUMN updated_at TYPE BIGINT USING (extract(epoch FROM updated_at::timestamptz) * 1000000)::BIGINT;
