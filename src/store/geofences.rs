//! Geofences. A tenant sees its own geofences and those of its ancestors marked
//! `AppliesToSubtenants`; only the owning tenant changes them.

use sqlx::any::AnyRow;
use sqlx::{FromRow, Row};

use super::audit_log::record;
use super::stored_time;
use super::{
    Key, Store, StoreError, StoreResult, VersionedRow, WriteTx, conflict_on_duplicate, new_etag,
    to_doc, to_micros,
};
use crate::domain::audit::{Audit, AuditAction, ResourceType};
use crate::domain::geofence::{Geofence, GeofenceFields};
use crate::domain::ids::{GeofenceId, TenantCode};
use crate::domain::time::now;

/// A geofence with the tenant that owns it.
#[derive(Debug, Clone)]
pub struct StoredGeofence {
    pub id: GeofenceId,
    pub tenant_code: TenantCode,
    pub geofence: Geofence,
}

const COLUMNS: &str = "g.id, g.tenant_code, g.doc, g.etag, g.updated_at";

/// Geofences visible from tenant `$1` whose path is `$2`: its own, and inherited ones
/// owned by a tenant whose path is a prefix of `$2` (an ancestor).
const VISIBLE: &str = "FROM geofences g JOIN tenants o ON o.code = g.tenant_code
     WHERE (g.tenant_code = $1 OR (g.applies_to_subtenants = 1 AND $2 LIKE o.path || '%'))";

const DUPLICATE: &str = "a geofence with this Name in this tenant";

/// A `geofences` row as selected by `COLUMNS`.
#[derive(sqlx::FromRow)]
struct GeofenceRow {
    id: i64,
    tenant_code: String,
    doc: String,
    etag: String,
    updated_at: i64,
}

impl GeofenceRow {
    fn into_stored(self) -> StoreResult<StoredGeofence> {
        let fields: GeofenceFields = serde_json::from_str(&self.doc)
            .map_err(|e| StoreError::Corrupt(format!("geofence document: {e}")))?;
        let timestamp = stored_time(self.updated_at)?;
        let id = GeofenceId::new(self.id);
        Ok(StoredGeofence {
            id,
            tenant_code: TenantCode::from_store(self.tenant_code),
            geofence: Geofence::new(id, fields, self.etag, timestamp),
        })
    }
}

fn geofence_from_row(row: &AnyRow) -> StoreResult<StoredGeofence> {
    GeofenceRow::from_row(row)?.into_stored()
}

fn name_key(geofence: &GeofenceFields) -> String {
    geofence.name.trim().to_lowercase()
}

impl WriteTx {
    /// `Store::list_geofences`, read through this transaction's connection.
    pub async fn list_geofences(
        &mut self,
        tenant_code: &TenantCode,
        tenant_path: &str,
    ) -> StoreResult<Vec<StoredGeofence>> {
        geofences_visible(&mut *self.tx, tenant_code, tenant_path).await
    }
}

async fn geofences_visible<'e, E>(
    executor: E,
    tenant_code: &TenantCode,
    tenant_path: &str,
) -> StoreResult<Vec<StoredGeofence>>
where
    E: sqlx::Executor<'e, Database = sqlx::Any>,
{
    let sql = format!("SELECT {COLUMNS} {VISIBLE} ORDER BY g.id");
    let rows = sqlx::query(&sql)
        .bind(tenant_code.as_str())
        .bind(tenant_path)
        .fetch_all(executor)
        .await?;
    rows.iter().map(geofence_from_row).collect()
}

impl Store {
    /// Every geofence visible from the tenant (see `VISIBLE`), in id order.
    pub async fn list_geofences(
        &self,
        tenant_code: &TenantCode,
        tenant_path: &str,
    ) -> StoreResult<Vec<StoredGeofence>> {
        geofences_visible(&self.pool, tenant_code, tenant_path).await
    }

    /// One geofence, if visible from the tenant.
    pub async fn get_geofence(
        &self,
        tenant_code: &TenantCode,
        tenant_path: &str,
        id: GeofenceId,
    ) -> StoreResult<Option<StoredGeofence>> {
        let sql = format!("SELECT {COLUMNS} {VISIBLE} AND g.id = $3");
        let row = sqlx::query(&sql)
            .bind(tenant_code.as_str())
            .bind(tenant_path)
            .bind(id.get())
            .fetch_optional(&self.pool)
            .await?;
        row.as_ref().map(geofence_from_row).transpose()
    }

    /// Inserts a validated geofence; `Conflict` when the tenant already has the name.
    pub async fn create_geofence(
        &self,
        tenant_code: &TenantCode,
        geofence: &GeofenceFields,
        audit: &Audit,
    ) -> StoreResult<GeofenceId> {
        let mut tx = self.begin_write().await?;
        let row = sqlx::query(
            "INSERT INTO geofences (tenant_code, name, name_key, geofence_type,
                applies_to_subtenants, doc, etag, updated_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id",
        )
        .bind(tenant_code.as_str())
        .bind(geofence.name.clone())
        .bind(name_key(geofence))
        .bind(geofence.geofence_type.as_str())
        .bind(geofence.applies_to_subtenants as i64)
        .bind(to_doc(geofence)?)
        .bind(new_etag())
        .bind(to_micros(now()))
        .fetch_one(&mut *tx)
        .await
        .map_err(|e| conflict_on_duplicate(e, DUPLICATE))?;
        let id = GeofenceId::new(row.try_get("id")?);
        record(
            &mut tx,
            audit,
            AuditAction::Create,
            ResourceType::Geofence,
            id,
        )
        .await?;
        tx.commit().await?;
        Ok(id)
    }

    /// Replaces a geofence owned by the tenant.
    pub async fn update_geofence(
        &self,
        tenant_code: &TenantCode,
        id: GeofenceId,
        geofence: &GeofenceFields,
        if_match: Option<&str>,
        audit: &Audit,
    ) -> StoreResult<()> {
        let mut tx = self.begin_write().await?;
        let keys = [Key::Id(id.get()), Key::Text(tenant_code)];
        self.check_version(&mut tx, VersionedRow::by_id("geofences", &keys), if_match)
            .await?;
        sqlx::query(
            "UPDATE geofences SET name = $1, name_key = $2, geofence_type = $3,
                applies_to_subtenants = $4, doc = $5, etag = $6, updated_at = $7
             WHERE id = $8",
        )
        .bind(geofence.name.clone())
        .bind(name_key(geofence))
        .bind(geofence.geofence_type.as_str())
        .bind(geofence.applies_to_subtenants as i64)
        .bind(to_doc(geofence)?)
        .bind(new_etag())
        .bind(to_micros(now()))
        .bind(id.get())
        .execute(&mut *tx)
        .await
        .map_err(|e| conflict_on_duplicate(e, DUPLICATE))?;
        record(
            &mut tx,
            audit,
            AuditAction::Update,
            ResourceType::Geofence,
            id,
        )
        .await?;
        tx.commit().await?;
        Ok(())
    }

    /// Deletes a geofence owned by the tenant.
    pub async fn delete_geofence(
        &self,
        tenant_code: &TenantCode,
        id: GeofenceId,
        if_match: Option<&str>,
        audit: &Audit,
    ) -> StoreResult<()> {
        let delete = sqlx::query("DELETE FROM geofences WHERE id = $1").bind(id.get());
        let keys = [Key::Id(id.get()), Key::Text(tenant_code)];
        let entry = audit.entry(AuditAction::Delete, ResourceType::Geofence, id);
        let row = VersionedRow::by_id("geofences", &keys);
        self.write_versioned(row, if_match, delete, Some(&entry))
            .await
    }
}
