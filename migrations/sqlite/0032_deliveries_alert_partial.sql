-- Only deliveries of a match carry an alert; webhook deliveries (one per stored message
-- with MoMessage webhooks on) no longer pay for an index entry of NULL.
DROP INDEX deliveries_alert;
CREATE INDEX deliveries_alert ON deliveries (alert_id) WHERE alert_id IS NOT NULL;
