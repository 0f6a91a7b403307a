-- What a matched notification sends, due, in due order: people's deliveries (e-mail, SMS,
-- voice, MT) and, since this migration, the notification's own webhook event
-- (`EventNotification`, marked by its `notification_id`). The delivery worker's alerting
-- loop claims from here, so neither waits behind a backlog of other webhook deliveries.
-- Other webhook deliveries, the bulk of the table, take no entry.
DROP INDEX deliveries_due_people;
CREATE INDEX deliveries_due_alerting ON deliveries (next_attempt_at)
    WHERE status = 'Pending' AND (channel <> 'Webhook' OR notification_id IS NOT NULL);
