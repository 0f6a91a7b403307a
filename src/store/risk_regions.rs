//! Risk regions. A tenant sees its own and those of its ancestors marked
//! `AppliesToSubtenants`; only the owner changes them. Every write rescores the
//! itineraries the region could touch, in the same transaction (`itinerary_risk.rs`).

use sqlx::any::AnyRow;
use sqlx::{FromRow, Row};

use super::audit_log::record;
use super::stored_time;
use super::{
    Key, Store, StoreError, StoreResult, Tx, VersionedRow, conflict_on_duplicate, new_etag, to_doc,
    to_micros,
};
use crate::domain::audit::{Audit, AuditAction, ResourceType};
use crate::domain::ids::{GeometryId, RiskRegionId, TenantCode};
use crate::domain::risk_region::{RegionPolygon, RegionShape, RiskRegion, RiskRegionFields};
use crate::domain::time::now;

/// A risk region with its internal id and owning tenant.
#[derive(Debug, Clone)]
pub struct StoredRiskRegion {
    pub id: RiskRegionId,
    pub tenant_code: TenantCode,
    pub region: RiskRegion,
}

const COLUMNS: &str = "r.id, r.tenant_code, r.geometry_id, r.name, r.risk_level, \
     r.applies_to_subtenants, r.doc, r.etag, r.updated_at";

/// Visible from tenant `$1` with path `$2`: own, or an ancestor's shared one.
const VISIBLE: &str = "FROM risk_regions r JOIN tenants o ON o.code = r.tenant_code
     WHERE (r.tenant_code = $1 OR (r.applies_to_subtenants = 1 AND $2 LIKE o.path || '%'))";

const DUPLICATE: &str = "a risk region with this GeometryId in this tenant";

/// A `risk_regions` row as selected by `COLUMNS`.
#[derive(sqlx::FromRow)]
struct RiskRegionRow {
    id: i64,
    tenant_code: String,
    geometry_id: String,
    name: String,
    risk_level: i64,
    applies_to_subtenants: i64,
    doc: String,
    etag: String,
    updated_at: i64,
}

impl RiskRegionRow {
    fn into_stored(self) -> StoreResult<StoredRiskRegion> {
        let stored: RegionPolygon = serde_json::from_str(&self.doc)
            .map_err(|e| StoreError::Corrupt(format!("risk region document: {e}")))?;
        let risk_level = i32::try_from(self.risk_level)
            .map_err(|_| StoreError::Corrupt(format!("risk level {}", self.risk_level)))?;
        let timestamp = stored_time(self.updated_at)?;
        Ok(StoredRiskRegion {
            id: RiskRegionId::new(self.id),
            tenant_code: TenantCode::from_store(self.tenant_code),
            region: RiskRegion {
                geometry_id: GeometryId::from_store(self.geometry_id),
                name: self.name,
                risk_level,
                applies_to_subtenants: self.applies_to_subtenants != 0,
                timestamp,
                etag: self.etag,
                polygon: stored.polygon,
            },
        })
    }
}

fn region_from_row(row: &AnyRow) -> StoreResult<StoredRiskRegion> {
    RiskRegionRow::from_row(row)?.into_stored()
}

/// The polygon is the document; the other fields have columns.
fn region_doc(region: &RiskRegionFields) -> StoreResult<String> {
    to_doc(&RegionPolygon {
        polygon: region.polygon.clone(),
    })
}

/// The union of two bounding boxes.
fn union([a, b, c, d]: [f64; 4], [e, f, g, h]: [f64; 4]) -> [f64; 4] {
    [a.min(e), b.max(f), c.min(g), d.max(h)]
}

/// The columns of a region's row a write compares against.
#[derive(sqlx::FromRow)]
struct OldRegionRow {
    geometry_id: String,
    applies_to_subtenants: i64,
    min_lat: f64,
    max_lat: f64,
    min_lon: f64,
    max_lon: f64,
}

/// What a region write needs to know about the row it changes.
struct OldRegion {
    geometry_id: GeometryId,
    shared: bool,
    bbox: [f64; 4],
}

/// A risk region replaced (PUT): its tenant (code and path), its id, the new record and
/// its shape.
pub struct RiskRegionUpdate<'a> {
    pub tenant_code: &'a TenantCode,
    pub tenant_path: &'a str,
    pub id: RiskRegionId,
    pub region: &'a RiskRegionFields,
    pub shape: &'a RegionShape,
}

impl Store {
    /// Every region visible from the tenant, in id order.
    pub async fn list_risk_regions(
        &self,
        tenant_code: &TenantCode,
        tenant_path: &str,
    ) -> StoreResult<Vec<StoredRiskRegion>> {
        let sql = format!("SELECT {COLUMNS} {VISIBLE} ORDER BY r.id");
        let rows = sqlx::query(&sql)
            .bind(tenant_code.as_str())
            .bind(tenant_path)
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(region_from_row).collect()
    }

    /// The region a tenant means by `geometry_id`: its own, else the nearest ancestor's
    /// shared one.
    pub async fn get_risk_region(
        &self,
        tenant_code: &TenantCode,
        tenant_path: &str,
        geometry_id: &GeometryId,
    ) -> StoreResult<Option<StoredRiskRegion>> {
        let sql = format!(
            "SELECT {COLUMNS} {VISIBLE} AND r.geometry_id = $3
             ORDER BY CASE WHEN r.tenant_code = $1 THEN 0 ELSE 1 END, length(o.path) DESC
             LIMIT 1"
        );
        let row = sqlx::query(&sql)
            .bind(tenant_code.as_str())
            .bind(tenant_path)
            .bind(geometry_id.as_str())
            .fetch_optional(&self.pool)
            .await?;
        row.as_ref().map(region_from_row).transpose()
    }

    /// Inserts a validated region and rescores the itineraries it covers.
    pub async fn create_risk_region(
        &self,
        tenant_code: &TenantCode,
        tenant_path: &str,
        region: &RiskRegionFields,
        shape: &RegionShape,
        audit: &Audit,
    ) -> StoreResult<RiskRegionId> {
        let mut tx = self.begin_write().await?;
        self.lock_tenant_for_regions(&mut tx, tenant_code).await?;
        let [min_lat, max_lat, min_lon, max_lon] = shape.bbox;
        let row = sqlx::query(
            "INSERT INTO risk_regions (tenant_code, geometry_id, name, risk_level,
                applies_to_subtenants, min_lat, max_lat, min_lon, max_lon, doc, etag, updated_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) RETURNING id",
        )
        .bind(tenant_code.as_str())
        .bind(region.geometry_id.as_str())
        .bind(region.name.clone())
        .bind(i64::from(region.risk_level))
        .bind(region.applies_to_subtenants as i64)
        .bind(min_lat)
        .bind(max_lat)
        .bind(min_lon)
        .bind(max_lon)
        .bind(region_doc(region)?)
        .bind(new_etag())
        .bind(to_micros(now()))
        .fetch_one(&mut *tx)
        .await
        .map_err(|e| conflict_on_duplicate(e, DUPLICATE))?;
        let id: i64 = row.try_get("id")?;
        self.rescore_for_region(
            &mut tx,
            tenant_code,
            tenant_path,
            id,
            region.applies_to_subtenants,
            shape.bbox,
        )
        .await?;
        let (action, kind) = (AuditAction::Create, ResourceType::RiskRegion);
        record(&mut tx, audit, action, kind, &region.geometry_id).await?;
        tx.commit().await?;
        Ok(RiskRegionId::new(id))
    }

    /// Locks and checks the version of one of the tenant's regions; returns what the
    /// write needs of it.
    async fn lock_region(
        &self,
        tx: &mut Tx,
        tenant_code: &TenantCode,
        id: i64,
        if_match: Option<&str>,
    ) -> StoreResult<OldRegion> {
        self.lock_tenant_for_regions(tx, tenant_code).await?;
        let keys = [Key::Id(id), Key::Text(tenant_code)];
        self.check_version(tx, VersionedRow::by_id("risk_regions", &keys), if_match)
            .await?;
        let row: OldRegionRow = sqlx::query_as(
            "SELECT geometry_id, applies_to_subtenants, min_lat, max_lat, min_lon, max_lon
             FROM risk_regions WHERE id = $1",
        )
        .bind(id)
        .fetch_one(&mut **tx)
        .await?;
        Ok(OldRegion {
            geometry_id: GeometryId::from_store(row.geometry_id),
            shared: row.applies_to_subtenants != 0,
            bbox: [row.min_lat, row.max_lat, row.min_lon, row.max_lon],
        })
    }

    /// How many itineraries of other tenants than `owner` have the region attached.
    async fn attached_elsewhere(
        &self,
        tx: &mut Tx,
        owner: &TenantCode,
        id: i64,
    ) -> StoreResult<i64> {
        Ok(sqlx::query(
            "SELECT COUNT(*) AS n FROM itinerary_regions ir
             JOIN itineraries i ON i.id = ir.itinerary_id
             WHERE ir.region_id = $1 AND i.tenant_code <> $2",
        )
        .bind(id)
        .bind(owner.as_str())
        .fetch_one(&mut **tx)
        .await?
        .try_get("n")?)
    }

    /// Replaces a region of the tenant (the GeometryId stays). Unsharing a region that
    /// a subtenant's itinerary has attached is a `Conflict`.
    pub async fn update_risk_region(
        &self,
        update: RiskRegionUpdate<'_>,
        if_match: Option<&str>,
        audit: &Audit,
    ) -> StoreResult<()> {
        let RiskRegionUpdate {
            tenant_code,
            tenant_path,
            id,
            region,
            shape,
        } = update;
        let id = id.get();
        let mut tx = self.begin_write().await?;
        let old = self.lock_region(&mut tx, tenant_code, id, if_match).await?;
        if old.shared && !region.applies_to_subtenants {
            let n = self.attached_elsewhere(&mut tx, tenant_code, id).await?;
            if n > 0 {
                return Err(StoreError::Conflict(format!(
                    "AppliesToSubtenants cannot be turned off: {n} itinerary(ies) of subtenants have this region attached"
                )));
            }
        }
        let [min_lat, max_lat, min_lon, max_lon] = shape.bbox;
        sqlx::query(
            "UPDATE risk_regions SET name = $1, risk_level = $2, applies_to_subtenants = $3,
                min_lat = $4, max_lat = $5, min_lon = $6, max_lon = $7, doc = $8, etag = $9,
                updated_at = $10
             WHERE id = $11",
        )
        .bind(region.name.clone())
        .bind(i64::from(region.risk_level))
        .bind(region.applies_to_subtenants as i64)
        .bind(min_lat)
        .bind(max_lat)
        .bind(min_lon)
        .bind(max_lon)
        .bind(region_doc(region)?)
        .bind(new_etag())
        .bind(to_micros(now()))
        .bind(id)
        .execute(&mut *tx)
        .await?;
        self.rescore_for_region(
            &mut tx,
            tenant_code,
            tenant_path,
            id,
            old.shared || region.applies_to_subtenants,
            union(old.bbox, shape.bbox),
        )
        .await?;
        let (action, kind) = (AuditAction::Update, ResourceType::RiskRegion);
        record(&mut tx, audit, action, kind, &old.geometry_id).await?;
        tx.commit().await?;
        Ok(())
    }

    /// Deletes a region of the tenant; `Conflict` while an itinerary has it attached.
    pub async fn delete_risk_region(
        &self,
        tenant_code: &TenantCode,
        tenant_path: &str,
        id: RiskRegionId,
        if_match: Option<&str>,
        audit: &Audit,
    ) -> StoreResult<()> {
        let id = id.get();
        let mut tx = self.begin_write().await?;
        let old = self.lock_region(&mut tx, tenant_code, id, if_match).await?;
        let attached: i64 =
            sqlx::query("SELECT COUNT(*) AS n FROM itinerary_regions WHERE region_id = $1")
                .bind(id)
                .fetch_one(&mut *tx)
                .await?
                .try_get("n")?;
        let in_use = || {
            StoreError::Conflict(format!(
                "the risk region is attached to {attached} itinerary(ies); detach it first"
            ))
        };
        if attached > 0 {
            return Err(in_use());
        }
        // The foreign key has the last word (checked at commit): an attachment that
        // slipped in after the count is refused the same way.
        let refused = |e: sqlx::Error| match &e {
            sqlx::Error::Database(db) if db.is_foreign_key_violation() => in_use(),
            _ => StoreError::from(e),
        };
        sqlx::query("DELETE FROM risk_regions WHERE id = $1")
            .bind(id)
            .execute(&mut *tx)
            .await
            .map_err(refused)?;
        self.rescore_for_region(&mut tx, tenant_code, tenant_path, id, old.shared, old.bbox)
            .await?;
        let (action, kind) = (AuditAction::Delete, ResourceType::RiskRegion);
        record(&mut tx, audit, action, kind, &old.geometry_id).await?;
        tx.commit().await.map_err(refused)?;
        Ok(())
    }
}
