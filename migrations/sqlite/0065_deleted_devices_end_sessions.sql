-- A device's deletion ends its current monitoring session (issue 45). Sessions left
-- current by devices deleted before this are ended now, so no timer stays due for a
-- device the timer worker cannot find.
UPDATE monitoring_sessions
SET ended_at = updated_at, ended_by = 'device deleted', end_kind = 'ForceStop',
    end_reason = 'Device deleted', reminder_due_at = NULL, missed_check_in_due_at = NULL,
    overdue_due_at = NULL, no_motion_due_at = NULL
WHERE ended_at IS NULL
  AND NOT EXISTS (SELECT 1 FROM devices d
                  WHERE d.tenant_code = monitoring_sessions.tenant_code
                    AND d.device_id = monitoring_sessions.device_id);
