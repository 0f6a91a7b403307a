-- Lone-worker monitoring sessions (issue 45, DESIGN §11; docs/monitoring.md): one person
-- at one device, watched from a start to a planned end. A device's current session is
-- its row with `ended_at` NULL (at most one: `monitoring_sessions_current`); the ended
-- rows are the history. Settings are the settled values (domain::monitoring::settings).
-- No key to `devices`: like alerts, a session is a safety record that outlives its
-- device (deleting a device is to end its current session: next, with the session API).
CREATE TABLE monitoring_sessions (
    id                        INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant_code               TEXT NOT NULL REFERENCES tenants (code) ON DELETE CASCADE,
    device_id                 TEXT NOT NULL,
    -- The person watched: the device's user when the session started.
    user_id                   BIGINT REFERENCES users (id) ON DELETE SET NULL,
    started_at                BIGINT NOT NULL,
    -- Who started it: a user, a token (`token:<Name>`), or `device` (MO BeginMonitoring).
    started_by                TEXT NOT NULL,
    -- Start + DurationMinutes, moved by each extension.
    planned_end_at            BIGINT NOT NULL,
    check_in_interval_minutes BIGINT NOT NULL,
    grace_minutes             BIGINT NOT NULL,
    reminder_minutes          BIGINT NOT NULL,
    no_motion_minutes         BIGINT NOT NULL,
    note                      TEXT,
    -- The last confirmed check-in and what confirmed it (a `Confirmation`).
    last_check_in_at          BIGINT,
    last_check_in_kind        TEXT,
    check_in_count            BIGINT NOT NULL DEFAULT 0,
    missed_check_in_count     BIGINT NOT NULL DEFAULT 0,
    -- Timers the workers claim when due (NULL: none owed), from SessionClock::schedule.
    reminder_due_at           BIGINT,
    missed_check_in_due_at    BIGINT,
    overdue_due_at            BIGINT,
    no_motion_due_at          BIGINT,
    ended_at                  BIGINT,
    ended_by                  TEXT,
    -- How it ended: `Normal` (the worker or EndMonitoring), `ForceStop` (an operator).
    end_kind                  TEXT,
    end_reason                TEXT,
    etag                      TEXT NOT NULL,
    updated_at                BIGINT NOT NULL
);
CREATE UNIQUE INDEX monitoring_sessions_current ON monitoring_sessions (tenant_code, device_id)
    WHERE ended_at IS NULL;
CREATE INDEX monitoring_sessions_history ON monitoring_sessions (tenant_code, device_id, started_at);
CREATE INDEX monitoring_sessions_reminder_due ON monitoring_sessions (reminder_due_at)
    WHERE reminder_due_at IS NOT NULL;
CREATE INDEX monitoring_sessions_missed_due ON monitoring_sessions (missed_check_in_due_at)
    WHERE missed_check_in_due_at IS NOT NULL;
CREATE INDEX monitoring_sessions_overdue_due ON monitoring_sessions (overdue_due_at)
    WHERE overdue_due_at IS NOT NULL;
CREATE INDEX monitoring_sessions_no_motion_due ON monitoring_sessions (no_motion_due_at)
    WHERE no_motion_due_at IS NOT NULL;

-- A session's history, oldest first: started, each check-in (with the message that
-- confirmed it), reminder, missed check-in, extension or change, overdue, no motion,
-- end — each with who and when.
CREATE TABLE monitoring_session_events (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id    BIGINT NOT NULL REFERENCES monitoring_sessions (id) ON DELETE CASCADE,
    tenant_code   TEXT NOT NULL REFERENCES tenants (code) ON DELETE CASCADE,
    at            BIGINT NOT NULL,
    kind          TEXT NOT NULL,
    actor         TEXT,
    mo_message_id BIGINT,
    -- What the kind needs besides (a JSON object: the settings changed, the reason).
    detail        TEXT
);
CREATE INDEX monitoring_session_events_session ON monitoring_session_events (session_id, id);
