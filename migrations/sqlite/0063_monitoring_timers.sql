-- The monitoring timer worker (issue 45; docs/monitoring.md "Timers"). A timer fires
-- once per due time: `*_fired_for` is the due time it last fired for, so a write that
-- recomputes the schedule (a change of note, an extension that leaves the time as it
-- was) does not arm it again for the same time. No motion counts from an anchor: the
-- position the device was at when it last moved more than 25 m (or the session's
-- first fix), and when.
ALTER TABLE monitoring_sessions ADD COLUMN reminder_fired_for BIGINT;
ALTER TABLE monitoring_sessions ADD COLUMN missed_check_in_fired_for BIGINT;
ALTER TABLE monitoring_sessions ADD COLUMN overdue_fired_for BIGINT;
ALTER TABLE monitoring_sessions ADD COLUMN no_motion_fired_for BIGINT;
ALTER TABLE monitoring_sessions ADD COLUMN motion_anchor_latitude DOUBLE PRECISION;
ALTER TABLE monitoring_sessions ADD COLUMN motion_anchor_longitude DOUBLE PRECISION;
ALTER TABLE monitoring_sessions ADD COLUMN motion_anchor_at BIGINT;
-- The last message (any at all) at or after the anchor: no motion needs the device to
-- keep reporting (a device that says nothing is `Silent`, or misses its check-in).
ALTER TABLE monitoring_sessions ADD COLUMN motion_reported_at BIGINT;

-- The device's standing check-in schedule counts from its last confirmed check-in (a
-- person's act, never an automatic report): kept so one arriving out of order cannot
-- move the schedule back.
ALTER TABLE device_states ADD COLUMN last_check_in_at BIGINT;

-- `Silent`: the device sent nothing at all for its `SilentAfterMinutes` (a device or
-- tenant property). Due once per silence: every message moves it on; fired, it is NULL
-- until the next message.
ALTER TABLE device_states ADD COLUMN silent_due_at BIGINT;
CREATE INDEX device_states_silent_due ON device_states (silent_due_at)
    WHERE silent_due_at IS NOT NULL;
