-- The alert's shared record (issue 31): who did what to an alert, and when. One row per
-- step — raised, each further match, each escalation round, acknowledged, each note,
-- resolved — written in the transaction that made the change; deliveries are read from
-- `deliveries` (their status moves on), and the timeline merges both by time.
CREATE TABLE alert_events (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    alert_id     BIGINT NOT NULL REFERENCES alerts (id) ON DELETE CASCADE,
    -- Raised, Matched, Escalated, Acknowledged, Note or Resolved.
    kind         TEXT NOT NULL,
    at           BIGINT NOT NULL,
    -- Who: a username (later `token:<Name>`); NULL for the system.
    actor        TEXT,
    -- Raised/Matched: the message (NULL for a MissedCheckIn) and where the device was.
    message_id   BIGINT,
    latitude     DOUBLE PRECISION,
    longitude    DOUBLE PRECISION,
    -- Matched: the alert's MatchCount after it; Escalated: the round.
    count        BIGINT,
    -- Note, Acknowledged (its Note), Resolved (its Resolution).
    text         TEXT,
    -- Resolved: Genuine, FalseAlarm, Test or Other.
    outcome      TEXT,
    -- Escalated: who was notified, a JSON array of {"Channel", "Target"}.
    notified     TEXT
);
CREATE INDEX alert_events_alert ON alert_events (alert_id, id);

-- Resolve's Outcome (NULL: resolved without one, or not resolved) and the notes so far,
-- which the alert shows so a console seeing it on the stream knows its timeline moved.
ALTER TABLE alerts ADD COLUMN outcome TEXT;
ALTER TABLE alerts ADD COLUMN note_count BIGINT NOT NULL DEFAULT 0;

-- What the alerts raised before this record began already tell: raised, acknowledged,
-- resolved (their individual further matches and escalation rounds were not kept).
INSERT INTO alert_events (alert_id, kind, at, message_id, latitude, longitude)
    SELECT id, 'Raised', raised_at, message_id, latitude, longitude FROM alerts;
INSERT INTO alert_events (alert_id, kind, at, actor)
    SELECT id, 'Acknowledged', acknowledged_at, acknowledged_by FROM alerts
    WHERE acknowledged_at IS NOT NULL;
INSERT INTO alert_events (alert_id, kind, at, actor, text)
    SELECT id, 'Resolved', resolved_at, resolved_by, resolution FROM alerts
    WHERE resolved_at IS NOT NULL;
