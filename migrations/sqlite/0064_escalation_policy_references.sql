-- What an escalation policy's steps name (docs/monitoring.md): a step's recipients are
-- references as a notification's are, so a contact (or one of its entries), list or
-- group a step names is refused deletion, emptying or un-sharing (409 naming the
-- policy). Deleting the policy drops what it named.
ALTER TABLE recipient_references ADD COLUMN from_escalation_policy_id BIGINT
    REFERENCES escalation_policies (id) ON DELETE CASCADE;
CREATE INDEX recipient_references_from_escalation_policy
    ON recipient_references (from_escalation_policy_id)
    WHERE from_escalation_policy_id IS NOT NULL;

-- Existing policies: their steps' references, where the named record exists.
INSERT INTO recipient_references (from_escalation_policy_id, referrer_tenant,
    recipient_type, to_contact_id, to_entry_id, to_list_id, to_group_id)
SELECT DISTINCT r.policy_id, r.tenant_code, r.kind,
    CASE WHEN r.kind IN ('DeviceContact', 'TenantContact') THEN CAST(r.contact AS INTEGER) END,
    CASE WHEN r.kind IN ('DeviceContact', 'TenantContact') THEN r.entry END,
    CASE WHEN r.kind IN ('DeviceList', 'TenantList') THEN CAST(r.list AS INTEGER) END,
    CASE WHEN r.kind = 'ChangeGroup' THEN CAST(r.grp AS INTEGER) END
FROM (
    SELECT p.id AS policy_id, p.tenant_code,
        json_extract(e.value, '$.Type') AS kind, json_extract(e.value, '$.ContactId') AS contact,
        json_extract(e.value, '$.ContactDetailId') AS entry, json_extract(e.value, '$.ListId') AS list,
        json_extract(e.value, '$.GroupId') AS grp
    FROM escalation_policies p, json_each(p.doc, '$.Steps') s, json_each(s.value, '$.Recipients') e
) r
WHERE (r.kind IN ('DeviceContact', 'TenantContact')
        AND EXISTS (SELECT 1 FROM address_book_contacts c WHERE c.id = CAST(r.contact AS INTEGER)))
   OR (r.kind IN ('DeviceList', 'TenantList')
        AND EXISTS (SELECT 1 FROM distribution_lists d WHERE d.id = CAST(r.list AS INTEGER)))
   OR (r.kind = 'ChangeGroup'
        AND EXISTS (SELECT 1 FROM device_groups g WHERE g.id = CAST(r.grp AS INTEGER)));
