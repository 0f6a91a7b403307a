-- The delivery worker (issue 8). A delivery's retries run until `--retry-max-hours` after
-- it was queued: `queued_at` is that time, reset when an operator re-queues it
-- (POST /deliveries/{id}/retry); NULL means `created_at`.
ALTER TABLE deliveries ADD COLUMN queued_at BIGINT;
-- /metrics counts the queue by status and channel.
CREATE INDEX deliveries_status ON deliveries (status, channel);
