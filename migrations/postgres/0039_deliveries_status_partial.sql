-- /metrics counts the deliveries that are work or need attention by channel and status.
-- The full (status, channel) index it read took an entry for every delivery ever made and
-- moved it when a delivery was sent: one B-tree write more for each of ingest's MoMessage
-- webhook deliveries (one per message) and for each settlement, for rows that are history.
-- Now the Pending ones are counted from the due index, which carries channel and status
-- for it (an index-only read), and the unsent ones that stay (NotConfigured, Failed,
-- Expired) from a partial index of exactly those; Sent and NoAddress rows take no entry.
-- The same partial index serves GET /deliveries?status=Failed (and the other two), which
-- walked the tenant's whole history for a rare status. Statements repeat its predicate
-- word for word: SQLite uses a partial index only then.
DROP INDEX deliveries_status;
CREATE INDEX deliveries_unsent ON deliveries (status, tenant_code, id, channel)
    WHERE status IN ('NotConfigured', 'Failed', 'Expired');
DROP INDEX deliveries_due;
CREATE INDEX deliveries_due ON deliveries (next_attempt_at, channel, status)
    WHERE status = 'Pending';
