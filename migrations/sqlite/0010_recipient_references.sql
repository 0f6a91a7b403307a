-- What recipients name: one row per reference from a distribution list or an event
-- notification to a contact (optionally one of its entries), a list or a group. The
-- foreign keys make deleting a named record fail inside the deleting transaction, so a
-- reference created meanwhile cannot slip through (DESIGN.md: 409, nothing changed).
-- Referrers cascade: deleting a list or notification drops what it named.
CREATE TABLE recipient_references (
    id                   INTEGER PRIMARY KEY AUTOINCREMENT,
    from_list_id         BIGINT REFERENCES distribution_lists (id) ON DELETE CASCADE,
    from_notification_id BIGINT REFERENCES event_notifications (id) ON DELETE CASCADE,
    -- The referrer's tenant: un-sharing a record a subtenant names is refused too.
    referrer_tenant      TEXT NOT NULL,
    recipient_type       TEXT NOT NULL,
    to_contact_id        BIGINT REFERENCES address_book_contacts (id),
    to_entry_id          TEXT,
    to_list_id           BIGINT REFERENCES distribution_lists (id),
    to_group_id          BIGINT REFERENCES device_groups (id)
);
CREATE INDEX recipient_references_from_list ON recipient_references (from_list_id);
CREATE INDEX recipient_references_from_notification ON recipient_references (from_notification_id);
CREATE INDEX recipient_references_contact ON recipient_references (to_contact_id);
CREATE INDEX recipient_references_list ON recipient_references (to_list_id);
CREATE INDEX recipient_references_group ON recipient_references (to_group_id);

-- Existing lists and notifications: their references, where the named record exists.
INSERT INTO recipient_references (from_list_id, from_notification_id, referrer_tenant,
    recipient_type, to_contact_id, to_entry_id, to_list_id, to_group_id)
SELECT r.list_id, r.notification_id, r.tenant_code, r.kind,
    CASE WHEN r.kind IN ('DeviceContact', 'TenantContact') THEN CAST(r.contact AS INTEGER) END,
    CASE WHEN r.kind IN ('DeviceContact', 'TenantContact') THEN r.entry END,
    CASE WHEN r.kind IN ('DeviceList', 'TenantList') THEN CAST(r.list AS INTEGER) END,
    CASE WHEN r.kind = 'ChangeGroup' THEN CAST(r.grp AS INTEGER) END
FROM (
    SELECT l.id AS list_id, NULL AS notification_id, l.tenant_code,
        json_extract(e.value, '$.Type') AS kind, json_extract(e.value, '$.ContactId') AS contact,
        json_extract(e.value, '$.ContactDetailId') AS entry, json_extract(e.value, '$.ListId') AS list,
        json_extract(e.value, '$.GroupId') AS grp
    FROM distribution_lists l, json_each(l.doc, '$.Recipients') e
    UNION ALL
    SELECT NULL, n.id, n.tenant_code,
        json_extract(e.value, '$.Type'), json_extract(e.value, '$.ContactId'),
        json_extract(e.value, '$.ContactDetailId'), json_extract(e.value, '$.ListId'),
        json_extract(e.value, '$.GroupId')
    FROM event_notifications n, json_each(n.doc, '$.Recipients') e
) r
WHERE (r.kind IN ('DeviceContact', 'TenantContact')
        AND EXISTS (SELECT 1 FROM address_book_contacts c WHERE c.id = CAST(r.contact AS INTEGER)))
   OR (r.kind IN ('DeviceList', 'TenantList')
        AND EXISTS (SELECT 1 FROM distribution_lists d WHERE d.id = CAST(r.list AS INTEGER)))
   OR (r.kind = 'ChangeGroup'
        AND EXISTS (SELECT 1 FROM device_groups g WHERE g.id = CAST(r.grp AS INTEGER)));
