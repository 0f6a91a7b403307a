-- A device event shows the device as its transaction left it (src/store/stream_feed.rs):
-- the log row of the part that carries it holds that record as JSON. Not notified (it
-- could overflow a notification's payload); the relay reads it from here.
ALTER TABLE stream_announcements ADD COLUMN device TEXT;
