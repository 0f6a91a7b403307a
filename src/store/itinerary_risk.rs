//! The derived columns of itineraries — `start_at`, `end_at`, `overall_risk` — rewritten
//! inside every transaction that changes what they derive from: a segment, an attached
//! region, or a risk region itself.
//!
//! Locking (PostgreSQL; SQLite's `BEGIN IMMEDIATE` already runs writers one at a time):
//! a write that rescores one itinerary share-locks the rows of its tenant and every
//! ancestor; a risk-region write locks its own tenant's row exclusively (`FOR NO KEY
//! UPDATE`, which leaves foreign-key checks alone). Each therefore waits for the other
//! whenever the region could be visible to the itinerary, so a rescore never reads a
//! region that is about to change, and a region write never misses a segment being
//! added. Both take the tenant locks first, so they cannot deadlock on each other.

use std::collections::HashMap;

use sqlx::FromRow;

use super::itineraries::{parse_doc, placeholders};
use super::{Backend, Store, StoreError, StoreResult, Tx, new_etag, to_micros};
use crate::domain::ids::TenantCode;
use crate::domain::risk_region::{RegionPolygon, RegionShape, overall_risk};
use crate::domain::time::now;

/// An itinerary to rescore: id, tenant code, tenant path.
pub(super) struct Scored<'a> {
    pub id: i64,
    pub tenant_code: &'a TenantCode,
    pub tenant_path: &'a str,
}

/// A segment's positions (null where the segment has none).
#[derive(sqlx::FromRow)]
struct SegmentPointsRow {
    itinerary_id: i64,
    lat1: Option<f64>,
    lon1: Option<f64>,
    lat2: Option<f64>,
    lon2: Option<f64>,
}

/// The level of a region attached to an itinerary.
#[derive(sqlx::FromRow)]
struct AttachedLevelRow {
    itinerary_id: i64,
    risk_level: i64,
}

/// A region that may cover an itinerary's positions, with its owner's path.
#[derive(sqlx::FromRow)]
struct AreaRow {
    tenant_code: String,
    path: String,
    applies_to_subtenants: i64,
    risk_level: i64,
    doc: String,
}

impl AreaRow {
    fn into_area(self) -> StoreResult<Area> {
        let region: RegionPolygon = parse_doc(&self.doc, "risk region")?;
        let shape = region
            .stored_shape()
            .ok_or_else(|| StoreError::Corrupt("risk region without a polygon".into()))?;
        Ok(Area {
            owner: TenantCode::from_store(self.tenant_code),
            owner_path: self.path,
            shared: self.applies_to_subtenants != 0,
            level: self.risk_level as i32,
            shape,
        })
    }
}

/// An itinerary a region write may rescore, with its tenant's path and current risk.
#[derive(sqlx::FromRow)]
struct CandidateRow {
    id: i64,
    tenant_code: String,
    path: String,
    overall_risk: i64,
}

/// A candidate region: owner, owner's path, shared below, level, shape.
struct Area {
    owner: TenantCode,
    owner_path: String,
    shared: bool,
    level: i32,
    shape: RegionShape,
}

impl Area {
    /// The visibility rule of regions: own, or an ancestor's shared one.
    fn visible_from(&self, tenant_code: &TenantCode, tenant_path: &str) -> bool {
        self.owner == *tenant_code || (self.shared && tenant_path.starts_with(&self.owner_path))
    }
}

/// (min lat, max lat, min lon, max lon) covering every point; `None` without points.
fn bounding_box(points: impl IntoIterator<Item = (f64, f64)>) -> Option<[f64; 4]> {
    points.into_iter().fold(None, |bbox, (lat, lon)| {
        Some(match bbox {
            None => [lat, lat, lon, lon],
            Some([a, b, c, d]) => [a.min(lat), b.max(lat), c.min(lon), d.max(lon)],
        })
    })
}

impl Store {
    /// PostgreSQL: share-locks the tenant at `path` and its ancestors (see the module
    /// comment).
    pub(super) async fn lock_tenant_chain(&self, tx: &mut Tx, path: &str) -> StoreResult<()> {
        if self.backend == Backend::Postgres {
            sqlx::query(
                "SELECT code FROM tenants WHERE $1 LIKE path || '%' ORDER BY path FOR SHARE",
            )
            .bind(path)
            .fetch_all(&mut **tx)
            .await?;
        }
        Ok(())
    }

    /// PostgreSQL: locks one tenant's row against rescoring writes below it.
    pub(super) async fn lock_tenant_for_regions(
        &self,
        tx: &mut Tx,
        tenant_code: &TenantCode,
    ) -> StoreResult<()> {
        if self.backend == Backend::Postgres {
            sqlx::query("SELECT code FROM tenants WHERE code = $1 FOR NO KEY UPDATE")
                .bind(tenant_code.as_str())
                .fetch_optional(&mut **tx)
                .await?
                .ok_or(StoreError::NotFound)?;
        }
        Ok(())
    }

    /// The OverallRisk of each itinerary as its segments, attachments and the regions
    /// visible from its tenant stand inside `tx`. `root_path` is a tenant whose subtree
    /// holds every itinerary given.
    pub(super) async fn risk_levels(
        &self,
        tx: &mut Tx,
        root_path: &str,
        itineraries: &[Scored<'_>],
    ) -> StoreResult<HashMap<i64, i32>> {
        let mut points: HashMap<i64, Vec<(f64, f64)>> = HashMap::new();
        let mut attached: HashMap<i64, Vec<i32>> = HashMap::new();
        let ids: Vec<i64> = itineraries.iter().map(|i| i.id).collect();
        for chunk in ids.chunks(500) {
            let list = placeholders(1, chunk.len());
            let sql = format!(
                "SELECT itinerary_id, lat1, lon1, lat2, lon2 FROM itinerary_segments
                 WHERE itinerary_id IN ({list})"
            );
            let mut query = sqlx::query(&sql);
            for id in chunk {
                query = query.bind(*id);
            }
            for row in query.fetch_all(&mut **tx).await? {
                let row = SegmentPointsRow::from_row(&row)?;
                let entry = points.entry(row.itinerary_id).or_default();
                for (lat, lon) in [(row.lat1, row.lon1), (row.lat2, row.lon2)] {
                    if let (Some(lat), Some(lon)) = (lat, lon) {
                        entry.push((lat, lon));
                    }
                }
            }
            let sql = format!(
                "SELECT ir.itinerary_id, r.risk_level FROM itinerary_regions ir
                 JOIN risk_regions r ON r.id = ir.region_id WHERE ir.itinerary_id IN ({list})"
            );
            let mut query = sqlx::query(&sql);
            for id in chunk {
                query = query.bind(*id);
            }
            for row in query.fetch_all(&mut **tx).await? {
                let row = AttachedLevelRow::from_row(&row)?;
                attached
                    .entry(row.itinerary_id)
                    .or_default()
                    .push(row.risk_level as i32);
            }
        }
        let areas = match bounding_box(points.values().flatten().copied()) {
            Some(bbox) => self.candidate_areas(tx, root_path, bbox).await?,
            None => Vec::new(),
        };
        Ok(itineraries
            .iter()
            .map(|it| {
                let visible: Vec<(i32, &RegionShape)> = areas
                    .iter()
                    .filter(|a| a.visible_from(it.tenant_code, it.tenant_path))
                    .map(|a| (a.level, &a.shape))
                    .collect();
                let risk = overall_risk(
                    points.get(&it.id).map_or(&[][..], Vec::as_slice),
                    attached.get(&it.id).map_or(&[][..], Vec::as_slice),
                    &visible,
                );
                (it.id, risk)
            })
            .collect())
    }

    /// Regions owned within `root_path`'s subtree or by its ancestors whose bounding box
    /// meets `bbox`.
    async fn candidate_areas(
        &self,
        tx: &mut Tx,
        root_path: &str,
        [min_lat, max_lat, min_lon, max_lon]: [f64; 4],
    ) -> StoreResult<Vec<Area>> {
        let rows = sqlx::query(
            "SELECT r.tenant_code, o.path, r.applies_to_subtenants, r.risk_level, r.doc
             FROM risk_regions r JOIN tenants o ON o.code = r.tenant_code
             WHERE r.max_lat >= $1 AND r.min_lat <= $2 AND r.max_lon >= $3 AND r.min_lon <= $4
               AND (o.path LIKE $5 OR $6 LIKE o.path || '%')",
        )
        .bind(min_lat)
        .bind(max_lat)
        .bind(min_lon)
        .bind(max_lon)
        .bind(format!("{root_path}%"))
        .bind(root_path)
        .fetch_all(&mut **tx)
        .await?;
        rows.iter()
            .map(|row| AreaRow::from_row(row)?.into_area())
            .collect()
    }

    /// After a change to one itinerary's segments or attachments: its Start/End and
    /// OverallRisk from what `tx` now holds, and a new version.
    pub(super) async fn refresh_itinerary(
        &self,
        tx: &mut Tx,
        itinerary: Scored<'_>,
    ) -> StoreResult<()> {
        let levels = self
            .risk_levels(tx, itinerary.tenant_path, std::slice::from_ref(&itinerary))
            .await?;
        let risk = levels.get(&itinerary.id).copied().unwrap_or(0);
        sqlx::query(
            "UPDATE itineraries SET
                start_at = (SELECT MIN(s.start_at) FROM itinerary_segments s WHERE s.itinerary_id = $1),
                end_at = (SELECT MAX(s.end_at) FROM itinerary_segments s WHERE s.itinerary_id = $1),
                overall_risk = $2, etag = $3, updated_at = $4
             WHERE id = $1",
        )
        .bind(itinerary.id)
        .bind(i64::from(risk))
        .bind(new_etag())
        .bind(to_micros(now()))
        .execute(&mut **tx)
        .await?;
        Ok(())
    }

    /// After a risk region of `owner` changed (created, reshaped, re-levelled, shared or
    /// unshared, deleted): rescores the itineraries it could touch — those in the owner
    /// tenant (and its subtree when the region was or is shared) with the region
    /// attached or a position inside `bbox` (old and new bounding boxes together).
    /// Only itineraries whose OverallRisk changes get a new version.
    pub(super) async fn rescore_for_region(
        &self,
        tx: &mut Tx,
        owner: &TenantCode,
        owner_path: &str,
        region_id: i64,
        subtree: bool,
        [min_lat, max_lat, min_lon, max_lon]: [f64; 4],
    ) -> StoreResult<()> {
        let scope = if subtree {
            "t.path LIKE $1"
        } else {
            "i.tenant_code = $1"
        };
        let sql = format!(
            "SELECT i.id, i.tenant_code, t.path, i.overall_risk
             FROM itineraries i JOIN tenants t ON t.code = i.tenant_code
             WHERE {scope} AND (
                 EXISTS (SELECT 1 FROM itinerary_regions ir
                         WHERE ir.itinerary_id = i.id AND ir.region_id = $2)
                 OR EXISTS (SELECT 1 FROM itinerary_segments s WHERE s.itinerary_id = i.id
                    AND ((s.lat1 BETWEEN $3 AND $4 AND s.lon1 BETWEEN $5 AND $6)
                      OR (s.lat2 BETWEEN $3 AND $4 AND s.lon2 BETWEEN $5 AND $6))))
             ORDER BY i.id"
        );
        let rows = sqlx::query(&sql)
            .bind(if subtree {
                format!("{owner_path}%")
            } else {
                owner.to_string()
            })
            .bind(region_id)
            .bind(min_lat)
            .bind(max_lat)
            .bind(min_lon)
            .bind(max_lon)
            .fetch_all(&mut **tx)
            .await?;
        let mut candidates = Vec::with_capacity(rows.len());
        for row in &rows {
            let row = CandidateRow::from_row(row)?;
            let code = TenantCode::from_store(row.tenant_code);
            candidates.push((row.id, code, row.path, row.overall_risk));
        }
        let scored: Vec<Scored<'_>> = candidates
            .iter()
            .map(|(id, code, path, _)| Scored {
                id: *id,
                tenant_code: code,
                tenant_path: path,
            })
            .collect();
        let levels = self.risk_levels(tx, owner_path, &scored).await?;
        let now = to_micros(now());
        for (id, _, _, old) in &candidates {
            let new = i64::from(levels.get(id).copied().unwrap_or(0));
            if new != *old {
                sqlx::query(
                    "UPDATE itineraries SET overall_risk = $1, etag = $2, updated_at = $3 WHERE id = $4",
                )
                .bind(new)
                .bind(new_etag())
                .bind(now)
                .bind(*id)
                .execute(&mut **tx)
                .await?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::bounding_box;

    #[test]
    fn bounding_box_covers_every_point() {
        assert_eq!(bounding_box([]), None);
        assert_eq!(
            bounding_box([(1.0, 5.0), (-2.0, 7.0), (0.5, -3.0)]),
            Some([-2.0, 1.0, -3.0, 7.0])
        );
    }
}
