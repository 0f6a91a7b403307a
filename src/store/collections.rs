//! Cross-tenant collections (`collections`).

use std::collections::{BTreeMap, BTreeSet};

use sqlx::any::AnyRow;
use sqlx::{FromRow, Row};

use super::audit_log::record;
use super::{
    Key, Store, StoreError, StoreResult, VersionedRow, from_micros, new_etag, to_doc, to_micros,
};
use crate::domain::audit::{Audit, AuditAction, ResourceType};
use crate::domain::ids::TenantCode;
use crate::domain::report::collection::Collection;
use crate::domain::time::now;

const COLUMNS: &str = "c.id, c.tenant_code, c.name, c.device_ids, c.etag, c.updated_at";

/// A `collections` row as selected by `COLUMNS`.
#[derive(sqlx::FromRow)]
struct CollectionRow {
    id: i64,
    tenant_code: String,
    name: String,
    device_ids: String,
    etag: String,
    updated_at: i64,
}

impl CollectionRow {
    fn into_collection(self) -> StoreResult<Collection> {
        Ok(Collection {
            collection_id: Some(self.id.to_string()),
            tenant_code: Some(TenantCode::from_store(self.tenant_code)),
            name: Some(self.name),
            device_ids: serde_json::from_str(&self.device_ids)
                .map_err(|e| StoreError::Corrupt(format!("collection device ids: {e}")))?,
            timestamp: from_micros(Some(self.updated_at))?,
            etag: Some(self.etag),
        })
    }
}

/// A device of a collection and the tenant it belongs to.
#[derive(sqlx::FromRow)]
struct DeviceTenantRow {
    device_id: String,
    tenant_code: String,
}

fn collection_from_row(row: &AnyRow) -> StoreResult<Collection> {
    CollectionRow::from_row(row)?.into_collection()
}

impl Store {
    pub async fn list_collections(&self, tenant_code: &TenantCode) -> StoreResult<Vec<Collection>> {
        let sql =
            format!("SELECT {COLUMNS} FROM collections c WHERE c.tenant_code = $1 ORDER BY c.id");
        let rows = sqlx::query(&sql)
            .bind(tenant_code.as_str())
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(collection_from_row).collect()
    }

    /// A collection owned by exactly this tenant.
    pub async fn get_collection(
        &self,
        tenant_code: &TenantCode,
        id: i64,
    ) -> StoreResult<Option<Collection>> {
        let sql =
            format!("SELECT {COLUMNS} FROM collections c WHERE c.id = $1 AND c.tenant_code = $2");
        let row = sqlx::query(&sql)
            .bind(id)
            .bind(tenant_code.as_str())
            .fetch_optional(&self.pool)
            .await?;
        row.as_ref().map(collection_from_row).transpose()
    }

    /// A collection a report may use: owned by a tenant in the subtree at `tenant_path`,
    /// or one of `named` (the caller's `CrossTenantCollections`), wherever it lives.
    pub async fn usable_collection(
        &self,
        tenant_path: &str,
        id: i64,
        named: bool,
    ) -> StoreResult<Option<Collection>> {
        let sql = format!(
            "SELECT {COLUMNS} FROM collections c JOIN tenants t ON t.code = c.tenant_code
             WHERE c.id = $1 AND ($2 = 1 OR t.path LIKE $3)"
        );
        let row = sqlx::query(&sql)
            .bind(id)
            .bind(i64::from(named))
            .bind(format!("{tenant_path}%"))
            .fetch_optional(&self.pool)
            .await?;
        row.as_ref().map(collection_from_row).transpose()
    }

    /// Which of `device_ids` are devices of tenants in the subtree at `tenant_path`.
    /// `Conflict` when one of them names devices of two tenants there: ids are unique per
    /// tenant, and a collection names its devices by id alone, so it cannot tell which.
    pub async fn devices_in_subtree(
        &self,
        tenant_path: &str,
        device_ids: &[String],
    ) -> StoreResult<std::collections::HashSet<String>> {
        // Each id's tenants (a set: an id repeated in two chunks is read twice).
        let mut tenants: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for chunk in device_ids.chunks(500) {
            let sql = devices_in_subtree_sql(self.backend, chunk.len());
            let mut query = sqlx::query(&sql).bind(format!("{tenant_path}%"));
            for id in chunk {
                query = query.bind(id.as_str());
            }
            for row in query.fetch_all(&self.pool).await? {
                let row = DeviceTenantRow::from_row(&row)?;
                tenants
                    .entry(row.device_id)
                    .or_default()
                    .insert(row.tenant_code);
            }
        }
        if let Some((id, codes)) = tenants.iter().find(|(_, codes)| codes.len() > 1) {
            let codes: Vec<&str> = codes.iter().map(String::as_str).collect();
            return Err(StoreError::Conflict(format!(
                "DeviceId '{id}' names a device in each of the tenants {}: address each \
                 tenant's device under its own tenant",
                codes.join(", ")
            )));
        }
        Ok(tenants.into_keys().collect())
    }

    pub async fn create_collection(
        &self,
        tenant_code: &TenantCode,
        collection: &Collection,
        audit: &Audit,
    ) -> StoreResult<i64> {
        let mut tx = self.begin_write().await?;
        let row = sqlx::query(
            "INSERT INTO collections (tenant_code, name, device_ids, etag, updated_at)
             VALUES ($1, $2, $3, $4, $5) RETURNING id",
        )
        .bind(tenant_code.as_str())
        .bind(collection.name.as_deref().unwrap_or_default())
        .bind(to_doc(&collection.device_ids)?)
        .bind(new_etag())
        .bind(to_micros(now()))
        .fetch_one(&mut *tx)
        .await?;
        let id: i64 = row.try_get("id")?;
        record(
            &mut tx,
            audit,
            AuditAction::Create,
            ResourceType::Collection,
            id,
        )
        .await?;
        tx.commit().await?;
        Ok(id)
    }

    pub async fn update_collection(
        &self,
        tenant_code: &TenantCode,
        id: i64,
        collection: &Collection,
        if_match: Option<&str>,
        audit: &Audit,
    ) -> StoreResult<()> {
        let keys = [Key::Id(id), Key::Text(tenant_code)];
        let entry = audit.entry(AuditAction::Update, ResourceType::Collection, id);
        self.write_versioned(
            VersionedRow::by_id("collections", &keys),
            if_match,
            sqlx::query(
                "UPDATE collections SET name = $1, device_ids = $2, etag = $3, updated_at = $4
                 WHERE id = $5",
            )
            .bind(collection.name.clone().unwrap_or_default())
            .bind(to_doc(&collection.device_ids)?)
            .bind(new_etag())
            .bind(to_micros(now()))
            .bind(id),
            Some(&entry),
        )
        .await
    }

    pub async fn delete_collection(
        &self,
        tenant_code: &TenantCode,
        id: i64,
        if_match: Option<&str>,
        audit: &Audit,
    ) -> StoreResult<()> {
        let keys = [Key::Id(id), Key::Text(tenant_code)];
        let entry = audit.entry(AuditAction::Delete, ResourceType::Collection, id);
        self.write_versioned(
            VersionedRow::by_id("collections", &keys),
            if_match,
            sqlx::query("DELETE FROM collections WHERE id = $1").bind(id),
            Some(&entry),
        )
        .await
    }
}

/// `devices_in_subtree`' statement for `count` ids: each id's devices in every tenant
/// (`devices_device_tenant` leads with the id), kept when their tenant is in the subtree.
pub(super) fn devices_in_subtree_sql(backend: super::Backend, count: usize) -> String {
    format!(
        "SELECT d.device_id, d.tenant_code FROM devices d JOIN tenants t ON t.code = d.tenant_code
         WHERE t.path LIKE {} AND d.device_id IN ({})",
        backend.placeholders(1, 1),
        backend.placeholders(2, count)
    )
}
