//! What recipients name (table `recipient_references`, migrations 0010 and 0064). Lists,
//! notifications and escalation policies (their steps' recipients) record their
//! references in the transaction that writes them, after finding (and on PostgreSQL
//! share-locking) what they name; contacts, lists and groups refuse to be deleted, lose
//! a named entry or stop being shared while named.

use std::collections::HashSet;

use sqlx::{FromRow, Row};

use super::{Store, StoreError, StoreResult, Tx};
use crate::domain::address_book::Contact;
use crate::domain::ids::{
    ContactId, DistributionListId, EscalationPolicyId, GroupId, NotificationId, TenantCode,
};
use crate::domain::recipient::{
    ContactTarget, RecipientReference, RecipientTarget, RecipientType, ReferencedRecords,
    check_references,
};
use crate::domain::tenant::TenantNode;
use crate::domain::validation::Validator;

/// A list or contact found for a reference: id, owner, document.
#[derive(sqlx::FromRow)]
struct OwnerDocRow {
    id: i64,
    tenant_code: String,
    doc: String,
}

/// The first list, notification or escalation policy naming a record (one of the
/// three is not null).
#[derive(sqlx::FromRow)]
struct ReferrerRow {
    list_id: Option<i64>,
    list_doc: Option<String>,
    notification_id: Option<i64>,
    notification_doc: Option<String>,
    policy_id: Option<i64>,
    policy_name: Option<String>,
}

/// What a device-synced list names: a contact or a list.
#[derive(sqlx::FromRow)]
struct SyncedRow {
    to_contact_id: Option<i64>,
    to_list_id: Option<i64>,
}

/// A record whose recipients name other records.
#[derive(Debug, Clone, Copy)]
pub(super) enum Referrer {
    List(DistributionListId),
    Notification(NotificationId),
    /// An escalation policy: what its steps' recipients name.
    EscalationPolicy(EscalationPolicyId),
}

/// A record recipients may name.
#[derive(Debug, Clone, Copy)]
pub(super) enum Named<'a> {
    Contact(ContactId),
    /// Some entries of a contact.
    ContactEntries(ContactId, &'a [String]),
    List(DistributionListId),
    /// A group (`device_groups.id`).
    Group(i64),
}

/// Most ids bound in one `IN (…)` list.
const CHUNK: usize = 500;

/// The address-book tables a reference may name (the schema's, as `first_referrer`
/// joins them too): what recipients name is this file's to know, not the book's.
const LISTS: &str = "distribution_lists";
const CONTACTS: &str = "address_book_contacts";

impl Store {
    /// Finds every list, contact and group `references` name that is visible from `node`
    /// (own, or shared by an ancestor; groups: own). Inside a write transaction on
    /// PostgreSQL the rows found are share-locked until commit, so they cannot be
    /// deleted, emptied of an entry or un-shared before this transaction's references exist.
    async fn find_referenced(
        &self,
        conn: &mut sqlx::AnyConnection,
        node: &TenantNode,
        references: &[RecipientReference],
    ) -> StoreResult<ReferencedRecords> {
        let mut list_ids = Vec::new();
        let mut contact_ids = Vec::new();
        let mut group_ids = Vec::new();
        for reference in references {
            match &reference.target {
                RecipientTarget::List { id, .. } => list_ids.push(id.get()),
                RecipientTarget::Contact { id, .. } => contact_ids.push(id.get()),
                RecipientTarget::Group { id } => group_ids.push(id.get()),
            }
        }
        let backend = self.backend;
        let lock = backend.share_rows();
        let (code, path) = (backend.placeholders(1, 1), backend.placeholders(2, 1));
        let mut found = ReferencedRecords::default();
        for (table, ids) in [(LISTS, &list_ids), (CONTACTS, &contact_ids)] {
            for chunk in dedup(ids).chunks(CHUNK) {
                let sql = format!(
                    "SELECT x.id, x.tenant_code, x.doc FROM {table} x JOIN tenants o ON o.code = x.tenant_code
                     WHERE (x.tenant_code = {code} OR (x.applies_to_subtenants = 1 AND {path} LIKE o.path || '%'))
                       AND x.id IN ({}){lock}",
                    backend.placeholders(3, chunk.len())
                );
                let mut query = sqlx::query(&sql).bind(node.code.as_str()).bind(&node.path);
                for id in chunk {
                    query = query.bind(*id);
                }
                for row in query.fetch_all(&mut *conn).await? {
                    let OwnerDocRow {
                        id,
                        tenant_code: owner,
                        doc,
                    } = OwnerDocRow::from_row(&row)?;
                    let owner = TenantCode::from_store(owner);
                    if table == LISTS {
                        found.lists.insert(DistributionListId::new(id), owner);
                    } else {
                        let contact: Contact = serde_json::from_str(&doc)
                            .map_err(|e| StoreError::Corrupt(format!("contact doc: {e}")))?;
                        let entries = contact
                            .contact_entries
                            .into_iter()
                            .filter_map(|e| e.entry_id)
                            .collect();
                        let contact = ContactTarget { owner, entries };
                        found.contacts.insert(ContactId::new(id), contact);
                    }
                }
            }
        }
        for chunk in dedup(&group_ids).chunks(CHUNK) {
            let sql = format!(
                "SELECT x.id FROM device_groups x WHERE x.tenant_code = {code} AND x.id IN ({}){lock}",
                backend.placeholders(2, chunk.len())
            );
            let mut query = sqlx::query(&sql).bind(node.code.as_str());
            for id in chunk {
                query = query.bind(*id);
            }
            for row in query.fetch_all(&mut *conn).await? {
                found.groups.insert(GroupId::new(row.try_get("id")?));
            }
        }
        Ok(found)
    }

    /// Finds what `references` name (see `find_referenced`) and refuses the write with
    /// `Invalid` when any does not resolve from `node`.
    pub(super) async fn check_references(
        &self,
        tx: &mut Tx,
        node: &TenantNode,
        references: &[RecipientReference],
    ) -> StoreResult<()> {
        if references.is_empty() {
            return Ok(());
        }
        let found = self.find_referenced(tx, node, references).await?;
        let mut v = Validator::new();
        check_references(references, &found, &mut v);
        v.finish().map_err(StoreError::Invalid)
    }

    /// What `check_references` would answer, read outside any write (nothing is written
    /// or held locked): for checking a record before it is saved.
    pub async fn check_references_now(
        &self,
        node: &TenantNode,
        references: &[RecipientReference],
    ) -> StoreResult<()> {
        if references.is_empty() {
            return Ok(());
        }
        let mut conn = self.pool.acquire().await?;
        let found = self.find_referenced(&mut conn, node, references).await?;
        let mut v = Validator::new();
        check_references(references, &found, &mut v);
        v.finish().map_err(StoreError::Invalid)
    }

    /// Replaces what `referrer` (owned by `tenant_code`) names with `references`.
    pub(super) async fn record_references(
        &self,
        tx: &mut Tx,
        referrer: Referrer,
        tenant_code: &TenantCode,
        references: &[RecipientReference],
    ) -> StoreResult<()> {
        let (column, id) = match referrer {
            Referrer::List(id) => ("from_list_id", id.get()),
            Referrer::Notification(id) => ("from_notification_id", id.get()),
            Referrer::EscalationPolicy(id) => ("from_escalation_policy_id", id.get()),
        };
        sqlx::query(&format!(
            "DELETE FROM recipient_references WHERE {column} = $1"
        ))
        .bind(id)
        .execute(&mut **tx)
        .await?;
        let mut seen = HashSet::new();
        for reference in references {
            if !seen.insert((reference.kind, reference.target.clone())) {
                continue;
            }
            let (contact, entry, list, group) = match &reference.target {
                RecipientTarget::Contact { id, detail_id, .. } => {
                    (Some(id.get()), detail_id.clone(), None, None)
                }
                RecipientTarget::List { id, .. } => (None, None, Some(id.get()), None),
                RecipientTarget::Group { id } => (None, None, None, Some(id.get())),
            };
            sqlx::query(&format!(
                "INSERT INTO recipient_references ({column}, referrer_tenant, recipient_type,
                    to_contact_id, to_entry_id, to_list_id, to_group_id)
                 VALUES ($1, $2, $3, $4, $5, $6, $7)"
            ))
            .bind(id)
            .bind(tenant_code.as_str())
            .bind(reference.kind.as_str())
            .bind(contact)
            .bind(entry)
            .bind(list)
            .bind(group)
            .execute(&mut **tx)
            .await?;
        }
        Ok(())
    }

    /// The first list, notification or escalation policy naming `named` (optionally only
    /// those of tenants other than `except_tenant`), described for a 409.
    pub(super) async fn first_referrer(
        &self,
        tx: &mut Tx,
        named: Named<'_>,
        except_tenant: Option<&TenantCode>,
    ) -> StoreResult<Option<String>> {
        let (column, id, entries): (&str, i64, &[String]) = match named {
            Named::Contact(id) => ("r.to_contact_id", id.get(), &[]),
            Named::ContactEntries(id, entries) => ("r.to_contact_id", id.get(), entries),
            Named::List(id) => ("r.to_list_id", id.get(), &[]),
            Named::Group(id) => ("r.to_group_id", id, &[]),
        };
        if matches!(named, Named::ContactEntries(..)) && entries.is_empty() {
            return Ok(None);
        }
        let entry_filter = if entries.is_empty() {
            String::new()
        } else {
            let entries = self.backend.placeholders(3, entries.len());
            format!(" AND r.to_entry_id IN ({entries})")
        };
        let (named_id, except) = (
            self.backend.placeholders(1, 1),
            self.backend.placeholders(2, 1),
        );
        let sql = format!(
            "SELECT l.id AS list_id, l.doc AS list_doc, n.id AS notification_id, n.doc AS notification_doc,
                p.id AS policy_id, p.name AS policy_name
             FROM recipient_references r
             LEFT JOIN distribution_lists l ON l.id = r.from_list_id
             LEFT JOIN event_notifications n ON n.id = r.from_notification_id
             LEFT JOIN escalation_policies p ON p.id = r.from_escalation_policy_id
             WHERE {column} = {named_id} AND r.referrer_tenant <> {except}{entry_filter}
             ORDER BY r.id LIMIT 1"
        );
        // '' is no tenant code: without an exception every referrer counts.
        let mut query = sqlx::query(&sql)
            .bind(id)
            .bind(except_tenant.map_or("", TenantCode::as_str));
        for entry in entries {
            query = query.bind(entry.as_str());
        }
        let Some(row) = query.fetch_optional(&mut **tx).await? else {
            return Ok(None);
        };
        let name_in = |doc: Option<String>, field: &str| -> String {
            doc.and_then(|d| serde_json::from_str::<serde_json::Value>(&d).ok())
                .and_then(|v| v[field].as_str().map(str::to_string))
                .unwrap_or_default()
        };
        let row = ReferrerRow::from_row(&row)?;
        if let Some(list) = row.list_id {
            let name = name_in(row.list_doc, "ListName");
            return Ok(Some(format!("distribution list {name} ({list})")));
        }
        if let Some(policy) = row.policy_id {
            let name = row.policy_name.unwrap_or_default();
            return Ok(Some(format!("escalation policy {name} ({policy})")));
        }
        let notification = row.notification_id;
        let name = name_in(row.notification_doc, "NotificationName");
        Ok(Some(format!(
            "event notification {name} ({})",
            notification.unwrap_or_default()
        )))
    }

    /// Ids of the contacts and lists that lists visible from `node` name in device
    /// recipients (`DeviceContact`, `DeviceList`): what devices keep in sync.
    pub async fn synced_to_devices(
        &self,
        node: &TenantNode,
    ) -> StoreResult<(HashSet<ContactId>, HashSet<DistributionListId>)> {
        let sql = format!(
            "SELECT r.to_contact_id, r.to_list_id FROM recipient_references r
             JOIN distribution_lists x ON x.id = r.from_list_id
             JOIN tenants o ON o.code = x.tenant_code
             WHERE (x.tenant_code = $1 OR (x.applies_to_subtenants = 1 AND $2 LIKE o.path || '%'))
               AND r.recipient_type IN ({}, {})",
            RecipientType::DeviceContact.sql(),
            RecipientType::DeviceList.sql(),
        );
        let rows = sqlx::query(&sql)
            .bind(node.code.as_str())
            .bind(&node.path)
            .fetch_all(&self.pool)
            .await?;
        let mut contacts = HashSet::new();
        let mut lists = HashSet::new();
        for row in rows {
            let row = SyncedRow::from_row(&row)?;
            if let Some(id) = row.to_contact_id {
                contacts.insert(ContactId::new(id));
            }
            if let Some(id) = row.to_list_id {
                lists.insert(DistributionListId::new(id));
            }
        }
        Ok((contacts, lists))
    }
}

fn dedup(ids: &[i64]) -> Vec<i64> {
    let mut seen = HashSet::new();
    ids.iter().filter(|id| seen.insert(**id)).copied().collect()
}
