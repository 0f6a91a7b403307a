-- Live stream event ids, shared by every process on this database: reserved under an
-- advisory lock just before an announcing transaction commits (src/store/stream_feed.rs),
-- so they grow in commit order. SQLite has no counterpart: one process numbers its own.
CREATE SEQUENCE stream_event_ids;
