//! Address book contacts and distribution lists. Both tables have the same shape, and
//! both share the visibility rule: a tenant sees its own records plus those of its
//! ancestors marked `applies_to_subtenants`.

use jiff::Timestamp;
use serde::Serialize;
use serde::de::DeserializeOwned;
use sqlx::any::AnyRow;
use sqlx::{FromRow, Row};

use super::audit_log::record;
use super::references::{Named, Referrer};
use super::{
    Key, Store, StoreError, StoreResult, VersionedRow, from_micros, new_etag, to_doc, to_micros,
};
use crate::domain::address_book::{Contact, DistributionList};
use crate::domain::audit::{Audit, AuditAction, ResourceType};
use crate::domain::ids::{ContactId, DistributionListId, NotificationId, TenantCode};
use crate::domain::notification::EventNotification;
use crate::domain::recipient::RecipientReference;
use crate::domain::tenant::TenantNode;
use crate::domain::time::now;

/// The table of an address-book record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AddressBook {
    Contacts,
    Lists,
}

impl AddressBook {
    fn resource(self) -> ResourceType {
        match self {
            AddressBook::Contacts => ResourceType::Contact,
            AddressBook::Lists => ResourceType::DistributionList,
        }
    }

    fn table(self) -> &'static str {
        match self {
            AddressBook::Contacts => "address_book_contacts",
            AddressBook::Lists => "distribution_lists",
        }
    }

    /// The record of this book with row id `id`, as references name it.
    fn named(self, id: i64) -> Named<'static> {
        match self {
            AddressBook::Contacts => Named::Contact(ContactId::new(id)),
            AddressBook::Lists => Named::List(DistributionListId::new(id)),
        }
    }

    fn noun(self) -> &'static str {
        match self {
            AddressBook::Contacts => "contact",
            AddressBook::Lists => "list",
        }
    }
}

/// A record kept as a document in a row with an owner and a version, and the id of
/// its rows.
pub trait OwnedRecord: DeserializeOwned {
    type Id: Copy;

    /// The id of the row `raw`.
    fn id(raw: i64) -> Self::Id;

    /// The row's number, for binding in SQL.
    fn raw(id: Self::Id) -> i64;
}

/// Contacts and distribution lists: owned records of the address book.
pub trait BookRecord: OwnedRecord + Serialize {
    const BOOK: AddressBook;
}

impl OwnedRecord for Contact {
    type Id = ContactId;

    fn id(raw: i64) -> ContactId {
        ContactId::new(raw)
    }

    fn raw(id: ContactId) -> i64 {
        id.get()
    }
}

impl BookRecord for Contact {
    const BOOK: AddressBook = AddressBook::Contacts;
}

impl OwnedRecord for DistributionList {
    type Id = DistributionListId;

    fn id(raw: i64) -> DistributionListId {
        DistributionListId::new(raw)
    }

    fn raw(id: DistributionListId) -> i64 {
        id.get()
    }
}

impl BookRecord for DistributionList {
    const BOOK: AddressBook = AddressBook::Lists;
}

impl OwnedRecord for EventNotification {
    type Id = NotificationId;

    fn id(raw: i64) -> NotificationId {
        NotificationId::new(raw)
    }

    fn raw(id: NotificationId) -> i64 {
        id.get()
    }
}

/// A create or update of an address-book record.
pub struct AddressBookWrite<'a, T> {
    /// The record as stored (read-only fields stripped).
    pub record: &'a T,
    pub applies_to_subtenants: bool,
    /// Lists: what the recipients name, checked and recorded in the same transaction.
    pub references: &'a [RecipientReference],
    /// Contacts: the `EntryId`s this write removes (refused while a recipient names one).
    pub removed_entries: &'a [String],
}

/// A record with who owns it and its version.
#[derive(Debug, Clone)]
pub struct Owned<T: OwnedRecord> {
    pub id: T::Id,
    pub owner: TenantCode,
    pub etag: String,
    pub updated_at: Option<Timestamp>,
    pub record: T,
}

/// A row of a table whose record is a document with an owner and a version (contacts,
/// distribution lists, event notifications), as selected: `id, tenant_code, doc, etag,
/// updated_at`.
#[derive(sqlx::FromRow)]
pub(super) struct OwnedRow {
    id: i64,
    tenant_code: String,
    doc: String,
    etag: String,
    updated_at: i64,
}

impl OwnedRow {
    pub(super) fn into_owned<T: OwnedRecord>(self) -> StoreResult<Owned<T>> {
        let record = serde_json::from_str(&self.doc)
            .map_err(|e| StoreError::Corrupt(format!("doc: {e}")))?;
        Ok(Owned {
            id: T::id(self.id),
            owner: TenantCode::from_store(self.tenant_code),
            etag: self.etag,
            updated_at: from_micros(Some(self.updated_at))?,
            record,
        })
    }
}

fn owned_from_row<T: OwnedRecord>(row: &AnyRow) -> StoreResult<Owned<T>> {
    OwnedRow::from_row(row)?.into_owned()
}

/// Own records, or an ancestor's shared with subtenants ($1 = tenant code, $2 = its path).
const VISIBLE: &str =
    "(x.tenant_code = $1 OR (x.applies_to_subtenants = 1 AND $2 LIKE o.path || '%'))";

impl Store {
    /// Records visible from `node`: its own first, then inherited ones.
    pub async fn list_address_book<T: BookRecord>(
        &self,
        node: &TenantNode,
    ) -> StoreResult<Vec<Owned<T>>> {
        let book = T::BOOK;
        let sql = format!(
            "SELECT x.id, x.tenant_code, x.doc, x.etag, x.updated_at FROM {} x
             JOIN tenants o ON o.code = x.tenant_code WHERE {VISIBLE}
             ORDER BY CASE WHEN x.tenant_code = $1 THEN 0 ELSE 1 END, x.id",
            book.table()
        );
        let rows = sqlx::query(&sql)
            .bind(node.code.as_str())
            .bind(&node.path)
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(owned_from_row).collect()
    }

    /// Records owned by any tenant of the subtree rooted at `path` (for reference checks).
    pub async fn list_address_book_in_subtree<T: BookRecord>(
        &self,
        path: &str,
    ) -> StoreResult<Vec<Owned<T>>> {
        let book = T::BOOK;
        let sql = format!(
            "SELECT x.id, x.tenant_code, x.doc, x.etag, x.updated_at FROM {} x
             JOIN tenants o ON o.code = x.tenant_code WHERE o.path LIKE $1 ORDER BY x.id",
            book.table()
        );
        let rows = sqlx::query(&sql)
            .bind(format!("{path}%"))
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(owned_from_row).collect()
    }

    /// One record visible from `node`.
    pub async fn get_address_book<T: BookRecord>(
        &self,
        node: &TenantNode,
        id: T::Id,
    ) -> StoreResult<Option<Owned<T>>> {
        let book = T::BOOK;
        let sql = format!(
            "SELECT x.id, x.tenant_code, x.doc, x.etag, x.updated_at FROM {} x
             JOIN tenants o ON o.code = x.tenant_code WHERE {VISIBLE} AND x.id = $3",
            book.table()
        );
        let row = sqlx::query(&sql)
            .bind(node.code.as_str())
            .bind(&node.path)
            .bind(T::raw(id))
            .fetch_optional(&self.pool)
            .await?;
        row.as_ref().map(owned_from_row).transpose()
    }

    /// Creates a record owned by `node`; a list's recipients' references are checked
    /// and recorded in the same transaction.
    pub async fn create_address_book<T: BookRecord>(
        &self,
        node: &TenantNode,
        write: AddressBookWrite<'_, T>,
        audit: &Audit,
    ) -> StoreResult<T::Id> {
        let book = T::BOOK;
        let mut tx = self.begin_write().await?;
        self.check_references(&mut tx, node, write.references)
            .await?;
        let sql = format!(
            "INSERT INTO {} (tenant_code, applies_to_subtenants, doc, etag, updated_at)
             VALUES ($1, $2, $3, $4, $5) RETURNING id",
            book.table()
        );
        let row = sqlx::query(&sql)
            .bind(node.code.as_str())
            .bind(write.applies_to_subtenants as i64)
            .bind(to_doc(write.record)?)
            .bind(new_etag())
            .bind(to_micros(now()))
            .fetch_one(&mut *tx)
            .await?;
        let id: i64 = row.try_get("id")?;
        if book == AddressBook::Lists {
            let referrer = Referrer::List(DistributionListId::new(id));
            self.record_references(&mut tx, referrer, &node.code, write.references)
                .await?;
        }
        record(&mut tx, audit, AuditAction::Create, book.resource(), id).await?;
        tx.commit().await?;
        Ok(T::id(id))
    }

    /// Replaces a record `node` owns. Refused (`Conflict`) when it would stop sharing a
    /// record a subtenant's list, notification or escalation policy names, or remove a
    /// contact entry one names.
    pub async fn update_address_book<T: BookRecord>(
        &self,
        node: &TenantNode,
        id: T::Id,
        write: AddressBookWrite<'_, T>,
        if_match: Option<&str>,
        audit: &Audit,
    ) -> StoreResult<()> {
        let book = T::BOOK;
        let id = T::raw(id);
        let mut tx = self.begin_write().await?;
        let keys = [Key::Id(id), Key::Text(&node.code)];
        self.check_version(&mut tx, VersionedRow::by_id(book.table(), &keys), if_match)
            .await?;
        let named = book.named(id);
        if !write.applies_to_subtenants
            && let Some(referrer) = self
                .first_referrer(&mut tx, named, Some(&node.code))
                .await?
        {
            return Err(StoreError::Conflict(format!(
                "the {} is a recipient of {referrer} in a subtenant; it must stay shared \
                 (AppliesToSubtenants) until that changes",
                book.noun()
            )));
        }
        if let Some(referrer) = self
            .first_referrer(
                &mut tx,
                Named::ContactEntries(ContactId::new(id), write.removed_entries),
                None,
            )
            .await?
        {
            return Err(StoreError::Conflict(format!(
                "a removed entry of the contact is a recipient of {referrer}; remove it there first"
            )));
        }
        self.check_references(&mut tx, node, write.references)
            .await?;
        let update = format!(
            "UPDATE {} SET applies_to_subtenants = $1, doc = $2, etag = $3, updated_at = $4 WHERE id = $5",
            book.table()
        );
        sqlx::query(&update)
            .bind(write.applies_to_subtenants as i64)
            .bind(to_doc(write.record)?)
            .bind(new_etag())
            .bind(to_micros(now()))
            .bind(id)
            .execute(&mut *tx)
            .await?;
        if book == AddressBook::Lists {
            let referrer = Referrer::List(DistributionListId::new(id));
            self.record_references(&mut tx, referrer, &node.code, write.references)
                .await?;
        }
        record(&mut tx, audit, AuditAction::Update, book.resource(), id).await?;
        tx.commit().await?;
        Ok(())
    }

    /// Deletes a record the tenant owns; `Conflict` while a list, notification or escalation
    /// policy names it.
    pub async fn delete_address_book<T: BookRecord>(
        &self,
        tenant_code: &TenantCode,
        id: T::Id,
        if_match: Option<&str>,
        audit: &Audit,
    ) -> StoreResult<()> {
        let book = T::BOOK;
        let id = T::raw(id);
        let mut tx = self.begin_write().await?;
        let keys = [Key::Id(id), Key::Text(tenant_code)];
        self.check_version(&mut tx, VersionedRow::by_id(book.table(), &keys), if_match)
            .await?;
        let named = book.named(id);
        let in_use = |referrer: String| {
            StoreError::Conflict(format!(
                "the {} is a recipient of {referrer}; remove it there first",
                book.noun()
            ))
        };
        if let Some(referrer) = self.first_referrer(&mut tx, named, None).await? {
            return Err(in_use(referrer));
        }
        sqlx::query(&format!("DELETE FROM {} WHERE id = $1", book.table()))
            .bind(id)
            .execute(&mut *tx)
            .await
            // A reference committed after our check: the foreign key refuses.
            .map_err(|e| match &e {
                sqlx::Error::Database(db) if db.is_foreign_key_violation() => {
                    in_use("a list, notification or escalation policy written meanwhile".into())
                }
                _ => StoreError::from(e),
            })?;
        record(&mut tx, audit, AuditAction::Delete, book.resource(), id).await?;
        tx.commit().await?;
        Ok(())
    }
}
