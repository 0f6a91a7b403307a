-- The live stream's recent announcements (src/store/stream_feed.rs), written in the
-- announcing transaction beside its notification: a process that missed notifications
-- (its listening connection was cut, or it started later) reads them back here, so
-- `Last-Event-ID` resumes without a gap on any process. `first_id` is the part's first
-- event id; `body` its JSON (the notification's). Pruned to the last ~20,000 events.
CREATE TABLE stream_announcements (
    first_id BIGINT PRIMARY KEY,
    body     TEXT NOT NULL
);
