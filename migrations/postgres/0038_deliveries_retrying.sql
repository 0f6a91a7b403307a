-- Deliveries waiting for a retry after a failed attempt, by receiver (channel and target).
-- When a receiver that was failing answers again, the delivery worker brings its waiting
-- retries forward to now (`Store::release_waiting_retries`) instead of leaving each to
-- its own backoff, which after a long outage runs hours past the recovery. A delivery
-- enters only when an attempt fails for a retry (`last_error` set while `Pending`): new
-- deliveries and first attempts that succeed take no entry.
CREATE INDEX deliveries_retrying ON deliveries (channel, target)
    WHERE status = 'Pending' AND last_error IS NOT NULL;
