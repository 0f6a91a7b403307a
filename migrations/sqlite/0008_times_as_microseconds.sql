-- Times become integers: microseconds since the Unix epoch (UTC). RFC 3339 text with a
-- fractional part of varying width did not sort: '…:00.5Z' > '…:00.25Z' but also
-- '…:00Z' > '…:00.9Z'. Integers order exactly on both backends, compare exactly (the MO
-- dedupe key holds a time) and need no parsing. Existing rows are converted.


-- tenants
ALTER TABLE tenants ADD COLUMN updated_at_us BIGINT NOT NULL DEFAULT 0;
UPDATE tenants SET updated_at_us = CAST(strftime('%s', substr(updated_at, 1, 19)) AS INTEGER) * 1000000 + CASE WHEN instr(updated_at, '.') > 0 THEN CAST(substr(substr(updated_at, instr(updated_at, '.') + 1, length(updated_at) - instr(updated_at, '.') - 1) || '000000', 1, 6) AS INTEGER) ELSE 0 END WHERE updated_at IS NOT NULL;
ALTER TABLE tenants DROP COLUMN updated_at;
ALTER TABLE tenants RENAME COLUMN updated_at_us TO updated_at;

-- users
ALTER TABLE users ADD COLUMN failed_window_start_us BIGINT;
UPDATE users SET failed_window_start_us = CAST(strftime('%s', substr(failed_window_start, 1, 19)) AS INTEGER) * 1000000 + CASE WHEN instr(failed_window_start, '.') > 0 THEN CAST(substr(substr(failed_window_start, instr(failed_window_start, '.') + 1, length(failed_window_start) - instr(failed_window_start, '.') - 1) || '000000', 1, 6) AS INTEGER) ELSE 0 END WHERE failed_window_start IS NOT NULL;
ALTER TABLE users DROP COLUMN failed_window_start;
ALTER TABLE users RENAME COLUMN failed_window_start_us TO failed_window_start;
ALTER TABLE users ADD COLUMN last_lockout_us BIGINT;
UPDATE users SET last_lockout_us = CAST(strftime('%s', substr(last_lockout, 1, 19)) AS INTEGER) * 1000000 + CASE WHEN instr(last_lockout, '.') > 0 THEN CAST(substr(substr(last_lockout, instr(last_lockout, '.') + 1, length(last_lockout) - instr(last_lockout, '.') - 1) || '000000', 1, 6) AS INTEGER) ELSE 0 END WHERE last_lockout IS NOT NULL;
ALTER TABLE users DROP COLUMN last_lockout;
ALTER TABLE users RENAME COLUMN last_lockout_us TO last_lockout;
ALTER TABLE users ADD COLUMN last_logged_in_us BIGINT;
UPDATE users SET last_logged_in_us = CAST(strftime('%s', substr(last_logged_in, 1, 19)) AS INTEGER) * 1000000 + CASE WHEN instr(last_logged_in, '.') > 0 THEN CAST(substr(substr(last_logged_in, instr(last_logged_in, '.') + 1, length(last_logged_in) - instr(last_logged_in, '.') - 1) || '000000', 1, 6) AS INTEGER) ELSE 0 END WHERE last_logged_in IS NOT NULL;
ALTER TABLE users DROP COLUMN last_logged_in;
ALTER TABLE users RENAME COLUMN last_logged_in_us TO last_logged_in;
ALTER TABLE users ADD COLUMN profile_updated_at_us BIGINT NOT NULL DEFAULT 0;
UPDATE users SET profile_updated_at_us = CAST(strftime('%s', substr(profile_updated_at, 1, 19)) AS INTEGER) * 1000000 + CASE WHEN instr(profile_updated_at, '.') > 0 THEN CAST(substr(substr(profile_updated_at, instr(profile_updated_at, '.') + 1, length(profile_updated_at) - instr(profile_updated_at, '.') - 1) || '000000', 1, 6) AS INTEGER) ELSE 0 END WHERE profile_updated_at IS NOT NULL;
ALTER TABLE users DROP COLUMN profile_updated_at;
ALTER TABLE users RENAME COLUMN profile_updated_at_us TO profile_updated_at;
ALTER TABLE users ADD COLUMN updated_at_us BIGINT NOT NULL DEFAULT 0;
UPDATE users SET updated_at_us = CAST(strftime('%s', substr(updated_at, 1, 19)) AS INTEGER) * 1000000 + CASE WHEN instr(updated_at, '.') > 0 THEN CAST(substr(substr(updated_at, instr(updated_at, '.') + 1, length(updated_at) - instr(updated_at, '.') - 1) || '000000', 1, 6) AS INTEGER) ELSE 0 END WHERE updated_at IS NOT NULL;
ALTER TABLE users DROP COLUMN updated_at;
ALTER TABLE users RENAME COLUMN updated_at_us TO updated_at;

-- device_groups
ALTER TABLE device_groups ADD COLUMN updated_at_us BIGINT NOT NULL DEFAULT 0;
UPDATE device_groups SET updated_at_us = CAST(strftime('%s', substr(updated_at, 1, 19)) AS INTEGER) * 1000000 + CASE WHEN instr(updated_at, '.') > 0 THEN CAST(substr(substr(updated_at, instr(updated_at, '.') + 1, length(updated_at) - instr(updated_at, '.') - 1) || '000000', 1, 6) AS INTEGER) ELSE 0 END WHERE updated_at IS NOT NULL;
ALTER TABLE device_groups DROP COLUMN updated_at;
ALTER TABLE device_groups RENAME COLUMN updated_at_us TO updated_at;

-- devices
ALTER TABLE devices ADD COLUMN updated_at_us BIGINT NOT NULL DEFAULT 0;
UPDATE devices SET updated_at_us = CAST(strftime('%s', substr(updated_at, 1, 19)) AS INTEGER) * 1000000 + CASE WHEN instr(updated_at, '.') > 0 THEN CAST(substr(substr(updated_at, instr(updated_at, '.') + 1, length(updated_at) - instr(updated_at, '.') - 1) || '000000', 1, 6) AS INTEGER) ELSE 0 END WHERE updated_at IS NOT NULL;
ALTER TABLE devices DROP COLUMN updated_at;
ALTER TABLE devices RENAME COLUMN updated_at_us TO updated_at;

-- deleted_devices
ALTER TABLE deleted_devices ADD COLUMN deleted_at_us BIGINT NOT NULL DEFAULT 0;
UPDATE deleted_devices SET deleted_at_us = CAST(strftime('%s', substr(deleted_at, 1, 19)) AS INTEGER) * 1000000 + CASE WHEN instr(deleted_at, '.') > 0 THEN CAST(substr(substr(deleted_at, instr(deleted_at, '.') + 1, length(deleted_at) - instr(deleted_at, '.') - 1) || '000000', 1, 6) AS INTEGER) ELSE 0 END WHERE deleted_at IS NOT NULL;
ALTER TABLE deleted_devices DROP COLUMN deleted_at;
ALTER TABLE deleted_devices RENAME COLUMN deleted_at_us TO deleted_at;

-- address_book_contacts
ALTER TABLE address_book_contacts ADD COLUMN updated_at_us BIGINT NOT NULL DEFAULT 0;
UPDATE address_book_contacts SET updated_at_us = CAST(strftime('%s', substr(updated_at, 1, 19)) AS INTEGER) * 1000000 + CASE WHEN instr(updated_at, '.') > 0 THEN CAST(substr(substr(updated_at, instr(updated_at, '.') + 1, length(updated_at) - instr(updated_at, '.') - 1) || '000000', 1, 6) AS INTEGER) ELSE 0 END WHERE updated_at IS NOT NULL;
ALTER TABLE address_book_contacts DROP COLUMN updated_at;
ALTER TABLE address_book_contacts RENAME COLUMN updated_at_us TO updated_at;

-- distribution_lists
ALTER TABLE distribution_lists ADD COLUMN updated_at_us BIGINT NOT NULL DEFAULT 0;
UPDATE distribution_lists SET updated_at_us = CAST(strftime('%s', substr(updated_at, 1, 19)) AS INTEGER) * 1000000 + CASE WHEN instr(updated_at, '.') > 0 THEN CAST(substr(substr(updated_at, instr(updated_at, '.') + 1, length(updated_at) - instr(updated_at, '.') - 1) || '000000', 1, 6) AS INTEGER) ELSE 0 END WHERE updated_at IS NOT NULL;
ALTER TABLE distribution_lists DROP COLUMN updated_at;
ALTER TABLE distribution_lists RENAME COLUMN updated_at_us TO updated_at;

-- geofences
ALTER TABLE geofences ADD COLUMN updated_at_us BIGINT NOT NULL DEFAULT 0;
UPDATE geofences SET updated_at_us = CAST(strftime('%s', substr(updated_at, 1, 19)) AS INTEGER) * 1000000 + CASE WHEN instr(updated_at, '.') > 0 THEN CAST(substr(substr(updated_at, instr(updated_at, '.') + 1, length(updated_at) - instr(updated_at, '.') - 1) || '000000', 1, 6) AS INTEGER) ELSE 0 END WHERE updated_at IS NOT NULL;
ALTER TABLE geofences DROP COLUMN updated_at;
ALTER TABLE geofences RENAME COLUMN updated_at_us TO updated_at;

-- webhook_settings
ALTER TABLE webhook_settings ADD COLUMN updated_at_us BIGINT NOT NULL DEFAULT 0;
UPDATE webhook_settings SET updated_at_us = CAST(strftime('%s', substr(updated_at, 1, 19)) AS INTEGER) * 1000000 + CASE WHEN instr(updated_at, '.') > 0 THEN CAST(substr(substr(updated_at, instr(updated_at, '.') + 1, length(updated_at) - instr(updated_at, '.') - 1) || '000000', 1, 6) AS INTEGER) ELSE 0 END WHERE updated_at IS NOT NULL;
ALTER TABLE webhook_settings DROP COLUMN updated_at;
ALTER TABLE webhook_settings RENAME COLUMN updated_at_us TO updated_at;

-- external_links
ALTER TABLE external_links ADD COLUMN updated_at_us BIGINT NOT NULL DEFAULT 0;
UPDATE external_links SET updated_at_us = CAST(strftime('%s', substr(updated_at, 1, 19)) AS INTEGER) * 1000000 + CASE WHEN instr(updated_at, '.') > 0 THEN CAST(substr(substr(updated_at, instr(updated_at, '.') + 1, length(updated_at) - instr(updated_at, '.') - 1) || '000000', 1, 6) AS INTEGER) ELSE 0 END WHERE updated_at IS NOT NULL;
ALTER TABLE external_links DROP COLUMN updated_at;
ALTER TABLE external_links RENAME COLUMN updated_at_us TO updated_at;

-- event_notifications
ALTER TABLE event_notifications ADD COLUMN updated_at_us BIGINT NOT NULL DEFAULT 0;
UPDATE event_notifications SET updated_at_us = CAST(strftime('%s', substr(updated_at, 1, 19)) AS INTEGER) * 1000000 + CASE WHEN instr(updated_at, '.') > 0 THEN CAST(substr(substr(updated_at, instr(updated_at, '.') + 1, length(updated_at) - instr(updated_at, '.') - 1) || '000000', 1, 6) AS INTEGER) ELSE 0 END WHERE updated_at IS NOT NULL;
ALTER TABLE event_notifications DROP COLUMN updated_at;
ALTER TABLE event_notifications RENAME COLUMN updated_at_us TO updated_at;
