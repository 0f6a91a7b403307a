-- Escalation policies (issue 45 §3): the ordered steps an unacknowledged alert goes
-- through. `doc` holds Description and Steps; the queried parts are columns.
CREATE TABLE escalation_policies (
    id                    INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant_code           TEXT NOT NULL REFERENCES tenants (code) ON DELETE CASCADE,
    name                  TEXT NOT NULL,
    -- Names are unique within a tenant, case-insensitively.
    name_key              TEXT NOT NULL,
    -- 1: usable (read-only) by every descendant tenant's notifications.
    applies_to_subtenants BIGINT NOT NULL DEFAULT 0,
    -- 1: the policy of the tenant's alerts whose notification names none.
    is_tenant_default     BIGINT NOT NULL DEFAULT 0,
    doc                   TEXT NOT NULL,
    etag                  TEXT NOT NULL,
    updated_at            BIGINT NOT NULL,
    UNIQUE (tenant_code, name_key)
);
CREATE INDEX escalation_policies_inherited ON escalation_policies (applies_to_subtenants, tenant_code);
-- At most one default per tenant (the store unmarks the previous one first).
CREATE UNIQUE INDEX escalation_policies_default ON escalation_policies (tenant_code)
    WHERE is_tenant_default = 1;

-- The policy a notification names (also in its document). No cascade: the store refuses
-- to delete a policy in use (409 naming the notifications); the key is the safety net.
ALTER TABLE event_notifications ADD COLUMN escalation_policy_id BIGINT
    REFERENCES escalation_policies (id);
CREATE INDEX event_notifications_escalation_policy ON event_notifications (escalation_policy_id)
    WHERE escalation_policy_id IS NOT NULL;
