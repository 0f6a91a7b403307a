//! Address book contacts and distribution lists. Both tables have the same shape, and
//! both share the visibility rule: a tenant sees its own records plus those of its
//! ancestors marked `applies_to_subtenants`.

use jiff::Timestamp;
use serde::Serialize;
use serde::de::DeserializeOwned;
use sqlx::Row;
use sqlx::any::AnyRow;

use super::{Store, StoreResult, from_doc, new_etag, parse_time, time_text, to_doc};
use crate::domain::tenant::TenantNode;
use crate::domain::time::now;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AddressBook {
    Contacts,
    Lists,
}

impl AddressBook {
    fn table(self) -> &'static str {
        match self {
            AddressBook::Contacts => "address_book_contacts",
            AddressBook::Lists => "distribution_lists",
        }
    }
}

/// A record with who owns it and its version.
#[derive(Debug, Clone)]
pub struct Owned<T> {
    pub id: i64,
    pub owner: String,
    pub etag: String,
    pub updated_at: Option<Timestamp>,
    pub record: T,
}

fn owned_from_row<T: DeserializeOwned>(row: &AnyRow) -> StoreResult<Owned<T>> {
    Ok(Owned {
        id: row.try_get("id")?,
        owner: row.try_get("tenant_code")?,
        etag: row.try_get("etag")?,
        updated_at: parse_time(row.try_get("updated_at")?)?,
        record: from_doc(row, "doc")?,
    })
}

/// Own records, or an ancestor's shared with subtenants ($1 = tenant code, $2 = its path).
const VISIBLE: &str =
    "(x.tenant_code = $1 OR (x.applies_to_subtenants = 1 AND $2 LIKE o.path || '%'))";

impl Store {
    /// Records visible from `node`: its own first, then inherited ones.
    pub async fn list_address_book<T: DeserializeOwned>(
        &self,
        book: AddressBook,
        node: &TenantNode,
    ) -> StoreResult<Vec<Owned<T>>> {
        let sql = format!(
            "SELECT x.id, x.tenant_code, x.doc, x.etag, x.updated_at FROM {} x
             JOIN tenants o ON o.code = x.tenant_code WHERE {VISIBLE}
             ORDER BY CASE WHEN x.tenant_code = $1 THEN 0 ELSE 1 END, x.id",
            book.table()
        );
        let rows = sqlx::query(&sql)
            .bind(&node.code)
            .bind(&node.path)
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(owned_from_row).collect()
    }

    /// Records owned by any tenant of the subtree rooted at `path` (for reference checks).
    pub async fn list_address_book_in_subtree<T: DeserializeOwned>(
        &self,
        book: AddressBook,
        path: &str,
    ) -> StoreResult<Vec<Owned<T>>> {
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
    pub async fn get_address_book<T: DeserializeOwned>(
        &self,
        book: AddressBook,
        node: &TenantNode,
        id: i64,
    ) -> StoreResult<Option<Owned<T>>> {
        let sql = format!(
            "SELECT x.id, x.tenant_code, x.doc, x.etag, x.updated_at FROM {} x
             JOIN tenants o ON o.code = x.tenant_code WHERE {VISIBLE} AND x.id = $3",
            book.table()
        );
        let row = sqlx::query(&sql)
            .bind(&node.code)
            .bind(&node.path)
            .bind(id)
            .fetch_optional(&self.pool)
            .await?;
        row.as_ref().map(owned_from_row).transpose()
    }

    pub async fn create_address_book<T: Serialize>(
        &self,
        book: AddressBook,
        tenant_code: &str,
        applies_to_subtenants: bool,
        record: &T,
    ) -> StoreResult<i64> {
        let sql = format!(
            "INSERT INTO {} (tenant_code, applies_to_subtenants, doc, etag, updated_at)
             VALUES ($1, $2, $3, $4, $5) RETURNING id",
            book.table()
        );
        let row = sqlx::query(&sql)
            .bind(tenant_code)
            .bind(applies_to_subtenants as i64)
            .bind(to_doc(record)?)
            .bind(new_etag())
            .bind(time_text(now()))
            .fetch_one(&self.pool)
            .await?;
        Ok(row.try_get("id")?)
    }

    /// Replaces a record the tenant owns.
    pub async fn update_address_book<T: Serialize>(
        &self,
        book: AddressBook,
        tenant_code: &str,
        id: i64,
        applies_to_subtenants: bool,
        record: &T,
        if_match: Option<&str>,
    ) -> StoreResult<()> {
        let select = format!(
            "SELECT etag FROM {} WHERE id = $1 AND tenant_code = $2",
            book.table()
        );
        let update = format!(
            "UPDATE {} SET applies_to_subtenants = $1, doc = $2, etag = $3, updated_at = $4 WHERE id = $5",
            book.table()
        );
        let change = sqlx::query(&update)
            .bind(applies_to_subtenants as i64)
            .bind(to_doc(record)?)
            .bind(new_etag())
            .bind(time_text(now()))
            .bind(id);
        self.write_versioned(
            sqlx::query(&select).bind(id).bind(tenant_code),
            if_match,
            change,
        )
        .await
    }

    /// Deletes a record the tenant owns.
    pub async fn delete_address_book(
        &self,
        book: AddressBook,
        tenant_code: &str,
        id: i64,
        if_match: Option<&str>,
    ) -> StoreResult<()> {
        let select = format!(
            "SELECT etag FROM {} WHERE id = $1 AND tenant_code = $2",
            book.table()
        );
        let delete = format!("DELETE FROM {} WHERE id = $1", book.table());
        self.write_versioned(
            sqlx::query(&select).bind(id).bind(tenant_code),
            if_match,
            sqlx::query(&delete).bind(id),
        )
        .await
    }
}
