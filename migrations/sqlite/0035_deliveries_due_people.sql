-- People's deliveries (e-mail, SMS, voice, MT) due, in due order: the delivery worker's
-- loop for people claims from here, so an alert's message is never queued behind a
-- backlog of webhook deliveries (a receiver that hangs until its timeout, an outage's
-- retries). Webhook deliveries, the bulk of the table, take no entry.
CREATE INDEX deliveries_due_people ON deliveries (next_attempt_at)
    WHERE status = 'Pending' AND channel <> 'Webhook';
