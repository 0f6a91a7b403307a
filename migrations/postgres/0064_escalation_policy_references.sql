-- What an escalation policy's steps name (docs/monitoring.md): a step's recipients are
-- references as a notification's are, so a contact (or one of its entries), list or
-- group a step names is refused deletion, emptying or un-sharing (409 naming the
-- policy). Deleting the policy drops what it named.
ALTER TABLE recipient_references ADD COLUMN from_escalation_policy_id BIGINT
    REFERENCES escalation_policies (id) ON DELETE CASCADE;
CREATE INDEX recipient_references_from_escalation_policy
    ON recipient_references (from_escalation_policy_id)
    WHERE from_escalation_policy_id IS NOT NULL;

-- Deleting a tenant deletes what its references name and what names them in one statement
-- (ON DELETE CASCADE from tenants). PostgreSQL checks a named contact's or list's key as
-- its cascade comes round, which can be before the referrer's cascade has dropped the
-- reference: the tenant's references go first, straight from the tenant (created last,
-- so its cascade runs after the others have queued their checks). Only the tenant itself
-- can name its records when it is deleted (it has no subtenants then). SQLite counts
-- foreign keys to the end of the statement and needs none of this.
ALTER TABLE recipient_references ADD CONSTRAINT recipient_references_referrer_tenant_fkey
    FOREIGN KEY (referrer_tenant) REFERENCES tenants (code) ON DELETE CASCADE;

-- Existing policies: their steps' references, where the named record exists.
INSERT INTO recipient_references (from_escalation_policy_id, referrer_tenant,
    recipient_type, to_contact_id, to_entry_id, to_list_id, to_group_id)
SELECT DISTINCT r.policy_id, r.tenant_code, r.kind,
    CASE WHEN r.kind IN ('DeviceContact', 'TenantContact') THEN r.contact::BIGINT END,
    CASE WHEN r.kind IN ('DeviceContact', 'TenantContact') THEN r.entry END,
    CASE WHEN r.kind IN ('DeviceList', 'TenantList') THEN r.list::BIGINT END,
    CASE WHEN r.kind = 'ChangeGroup' THEN r.grp::BIGINT END
FROM (
    SELECT p.id AS policy_id, p.tenant_code,
        e->>'Type' AS kind, e->>'ContactId' AS contact, e->>'ContactDetailId' AS entry,
        e->>'ListId' AS list, e->>'GroupId' AS grp
    FROM escalation_policies p,
        jsonb_array_elements(CASE WHEN jsonb_typeof(p.doc::jsonb -> 'Steps') = 'array'
            THEN p.doc::jsonb -> 'Steps' ELSE '[]'::jsonb END) s,
        jsonb_array_elements(CASE WHEN jsonb_typeof(s -> 'Recipients') = 'array'
            THEN s -> 'Recipients' ELSE '[]'::jsonb END) e
) r
WHERE (r.kind IN ('DeviceContact', 'TenantContact') AND r.contact ~ '^[0-9]+$'
        AND EXISTS (SELECT 1 FROM address_book_contacts c WHERE c.id = r.contact::BIGINT))
   OR (r.kind IN ('DeviceList', 'TenantList') AND r.list ~ '^[0-9]+$'
        AND EXISTS (SELECT 1 FROM distribution_lists d WHERE d.id = r.list::BIGINT))
   OR (r.kind = 'ChangeGroup' AND r.grp ~ '^[0-9]+$'
        AND EXISTS (SELECT 1 FROM device_groups g WHERE g.id = r.grp::BIGINT));
