//! The sub-resources of an itinerary: segments (flights, journeys, hotels), travelers
//! and attached risk regions. Every write locks the itinerary's row (`check_version`,
//! honouring `If-Match` against the itinerary's version), changes the part, and
//! rewrites the itinerary's derived columns and version in the same transaction.

use serde::Serialize;
use serde::de::DeserializeOwned;
use sqlx::{FromRow, Row};

use super::itineraries::PartRow;
use super::itinerary_risk::Scored;
use super::{
    Backend, Float, Key, Store, StoreError, StoreResult, Tx, VersionedRow, conflict_on_duplicate,
    new_etag, to_doc, to_micros,
};
use crate::domain::ids::{GeometryId, TenantCode};
use crate::domain::itinerary::{
    MAX_REGIONS, MAX_SEGMENTS, MAX_TRAVELERS, Region, Segment, SegmentKind, Traveler,
};
use crate::domain::time::now;

/// The itinerary a sub-resource write addresses: id, and its tenant (code and path).
#[derive(Debug, Clone, Copy)]
pub struct ItineraryKey<'a> {
    pub id: i64,
    pub tenant_code: &'a TenantCode,
    pub tenant_path: &'a str,
}

impl ItineraryKey<'_> {
    fn scored(&self) -> Scored<'_> {
        Scored {
            id: self.id,
            tenant_code: self.tenant_code,
            tenant_path: self.tenant_path,
        }
    }
}

/// An attached region's names.
#[derive(sqlx::FromRow)]
struct RegionNameRow {
    geometry_id: String,
    name: String,
}

impl Store {
    /// Opens the transaction of a sub-resource write: the tenant chain (PostgreSQL, see
    /// `itinerary_risk.rs`) and then the itinerary's row are locked, its version
    /// checked against `if_match`.
    async fn begin_part_write(
        &self,
        itinerary: ItineraryKey<'_>,
        if_match: Option<&str>,
    ) -> StoreResult<Tx> {
        let mut tx = self.begin_write().await?;
        self.lock_tenant_chain(&mut tx, itinerary.tenant_path)
            .await?;
        let keys = [Key::Id(itinerary.id), Key::Text(itinerary.tenant_code)];
        self.check_version(&mut tx, VersionedRow::by_id("itineraries", &keys), if_match)
            .await?;
        Ok(tx)
    }

    /// A new version for the itinerary whose part changed without touching its
    /// derived fields (travelers).
    async fn touch_itinerary(&self, tx: &mut Tx, id: i64) -> StoreResult<()> {
        sqlx::query("UPDATE itineraries SET etag = $1, updated_at = $2 WHERE id = $3")
            .bind(new_etag())
            .bind(to_micros(now()))
            .bind(id)
            .execute(&mut **tx)
            .await?;
        Ok(())
    }

    // ---- segments ------------------------------------------------------------------

    /// The itinerary's segments of one kind, by start time then id.
    pub async fn list_segments<T: Segment + DeserializeOwned>(
        &self,
        itinerary_id: i64,
    ) -> StoreResult<Vec<T>> {
        let rows = sqlx::query(
            "SELECT id, doc FROM itinerary_segments WHERE itinerary_id = $1 AND kind = $2
             ORDER BY start_at, id",
        )
        .bind(itinerary_id)
        .bind(T::KIND.as_str())
        .fetch_all(&self.pool)
        .await?;
        rows.iter()
            .map(|row| PartRow::from_row(row)?.into_segment())
            .collect()
    }

    pub async fn get_segment<T: Segment + DeserializeOwned>(
        &self,
        itinerary_id: i64,
        id: i64,
    ) -> StoreResult<Option<T>> {
        let row = sqlx::query(
            "SELECT id, doc FROM itinerary_segments WHERE id = $1 AND itinerary_id = $2 AND kind = $3",
        )
        .bind(id)
        .bind(itinerary_id)
        .bind(T::KIND.as_str())
        .fetch_optional(&self.pool)
        .await?;
        row.map(|row| PartRow::from_row(&row)?.into_segment())
            .transpose()
    }

    /// Adds a segment; `Conflict` beyond `MAX_SEGMENTS`.
    pub async fn create_segment<T: Segment + Serialize>(
        &self,
        itinerary: ItineraryKey<'_>,
        segment: &T,
        if_match: Option<&str>,
    ) -> StoreResult<i64> {
        let mut tx = self.begin_part_write(itinerary, if_match).await?;
        let count: i64 =
            sqlx::query("SELECT COUNT(*) AS n FROM itinerary_segments WHERE itinerary_id = $1")
                .bind(itinerary.id)
                .fetch_one(&mut *tx)
                .await?
                .try_get("n")?;
        if count >= MAX_SEGMENTS {
            return Err(StoreError::Conflict(format!(
                "an itinerary holds at most {MAX_SEGMENTS} flights, journeys and hotels together"
            )));
        }
        let span = segment.span();
        let [p1, p2] = span.points;
        let row = sqlx::query(
            "INSERT INTO itinerary_segments (itinerary_id, kind, start_at, end_at, lat1, lon1,
                lat2, lon2, doc, updated_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING id",
        )
        .bind(itinerary.id)
        .bind(T::KIND.as_str())
        .bind(to_micros(span.start))
        .bind(to_micros(span.end))
        .bind(Float(p1.map(|p| p.0)))
        .bind(Float(p1.map(|p| p.1)))
        .bind(Float(p2.map(|p| p.0)))
        .bind(Float(p2.map(|p| p.1)))
        .bind(to_doc(segment)?)
        .bind(to_micros(now()))
        .fetch_one(&mut *tx)
        .await?;
        let id: i64 = row.try_get("id")?;
        self.refresh_itinerary(&mut tx, itinerary.scored()).await?;
        tx.commit().await?;
        Ok(id)
    }

    /// Replaces a segment of the itinerary; `NotFound` when it has no such segment.
    pub async fn update_segment<T: Segment + Serialize>(
        &self,
        itinerary: ItineraryKey<'_>,
        id: i64,
        segment: &T,
        if_match: Option<&str>,
    ) -> StoreResult<()> {
        let mut tx = self.begin_part_write(itinerary, if_match).await?;
        let span = segment.span();
        let [p1, p2] = span.points;
        let result = sqlx::query(
            "UPDATE itinerary_segments SET start_at = $1, end_at = $2, lat1 = $3, lon1 = $4,
                lat2 = $5, lon2 = $6, doc = $7, updated_at = $8
             WHERE id = $9 AND itinerary_id = $10 AND kind = $11",
        )
        .bind(to_micros(span.start))
        .bind(to_micros(span.end))
        .bind(Float(p1.map(|p| p.0)))
        .bind(Float(p1.map(|p| p.1)))
        .bind(Float(p2.map(|p| p.0)))
        .bind(Float(p2.map(|p| p.1)))
        .bind(to_doc(segment)?)
        .bind(to_micros(now()))
        .bind(id)
        .bind(itinerary.id)
        .bind(T::KIND.as_str())
        .execute(&mut *tx)
        .await?;
        if result.rows_affected() == 0 {
            return Err(StoreError::NotFound);
        }
        self.refresh_itinerary(&mut tx, itinerary.scored()).await?;
        tx.commit().await?;
        Ok(())
    }

    pub async fn delete_segment(
        &self,
        itinerary: ItineraryKey<'_>,
        kind: SegmentKind,
        id: i64,
        if_match: Option<&str>,
    ) -> StoreResult<()> {
        let mut tx = self.begin_part_write(itinerary, if_match).await?;
        let result = sqlx::query(
            "DELETE FROM itinerary_segments WHERE id = $1 AND itinerary_id = $2 AND kind = $3",
        )
        .bind(id)
        .bind(itinerary.id)
        .bind(kind.as_str())
        .execute(&mut *tx)
        .await?;
        if result.rows_affected() == 0 {
            return Err(StoreError::NotFound);
        }
        self.refresh_itinerary(&mut tx, itinerary.scored()).await?;
        tx.commit().await?;
        Ok(())
    }

    // ---- travelers -----------------------------------------------------------------

    /// Adds a validated traveler; `Conflict` when the itinerary already lists the
    /// e-mail address (ignoring case) or holds `MAX_TRAVELERS`.
    pub async fn create_traveler(
        &self,
        itinerary: ItineraryKey<'_>,
        traveler: &Traveler,
        email_key: &str,
        if_match: Option<&str>,
    ) -> StoreResult<i64> {
        let mut tx = self.begin_part_write(itinerary, if_match).await?;
        let count: i64 =
            sqlx::query("SELECT COUNT(*) AS n FROM itinerary_travelers WHERE itinerary_id = $1")
                .bind(itinerary.id)
                .fetch_one(&mut *tx)
                .await?
                .try_get("n")?;
        if count >= MAX_TRAVELERS {
            return Err(StoreError::Conflict(format!(
                "an itinerary lists at most {MAX_TRAVELERS} travelers"
            )));
        }
        let row = sqlx::query(
            "INSERT INTO itinerary_travelers (itinerary_id, email_key, doc)
             VALUES ($1, $2, $3) RETURNING id",
        )
        .bind(itinerary.id)
        .bind(email_key)
        .bind(to_doc(traveler)?)
        .fetch_one(&mut *tx)
        .await
        .map_err(|e| {
            conflict_on_duplicate(e, "a traveler with this EmailAddress on this itinerary")
        })?;
        let id: i64 = row.try_get("id")?;
        self.touch_itinerary(&mut tx, itinerary.id).await?;
        tx.commit().await?;
        Ok(id)
    }

    pub async fn delete_traveler(
        &self,
        itinerary: ItineraryKey<'_>,
        id: i64,
        if_match: Option<&str>,
    ) -> StoreResult<()> {
        let mut tx = self.begin_part_write(itinerary, if_match).await?;
        let result =
            sqlx::query("DELETE FROM itinerary_travelers WHERE id = $1 AND itinerary_id = $2")
                .bind(id)
                .bind(itinerary.id)
                .execute(&mut *tx)
                .await?;
        if result.rows_affected() == 0 {
            return Err(StoreError::NotFound);
        }
        self.touch_itinerary(&mut tx, itinerary.id).await?;
        tx.commit().await?;
        Ok(())
    }

    // ---- attached risk regions -----------------------------------------------------

    /// The regions attached to the itinerary, by GeometryId.
    pub async fn list_attached_regions(&self, itinerary_id: i64) -> StoreResult<Vec<Region>> {
        let rows = sqlx::query(
            "SELECT r.geometry_id, r.name FROM itinerary_regions ir
             JOIN risk_regions r ON r.id = ir.region_id
             WHERE ir.itinerary_id = $1 ORDER BY r.geometry_id, r.id",
        )
        .bind(itinerary_id)
        .fetch_all(&self.pool)
        .await?;
        rows.iter()
            .map(|row| {
                let row = RegionNameRow::from_row(row)?;
                Ok(Region {
                    name: Some(row.name),
                    geometry_id: Some(GeometryId::from_store(row.geometry_id)),
                })
            })
            .collect()
    }

    /// Attaches the risk region named `geometry_id` as the itinerary's tenant sees it
    /// (its own region first, else the nearest ancestor's shared one). Attaching an
    /// attached region changes nothing (`Ok(false)`). `NotFound` for an unknown region.
    pub async fn attach_region(
        &self,
        itinerary: ItineraryKey<'_>,
        geometry_id: &GeometryId,
        if_match: Option<&str>,
    ) -> StoreResult<bool> {
        let mut tx = self.begin_part_write(itinerary, if_match).await?;
        // The region's row is share-locked: it cannot be deleted or unshared before
        // this transaction commits, and a change under way is waited for.
        let lock = match self.backend {
            Backend::Sqlite => "",
            Backend::Postgres => " FOR SHARE OF r",
        };
        let sql = format!(
            "SELECT r.id FROM risk_regions r JOIN tenants o ON o.code = r.tenant_code
             WHERE r.geometry_id = $1
               AND (r.tenant_code = $2 OR (r.applies_to_subtenants = 1 AND $3 LIKE o.path || '%'))
             ORDER BY CASE WHEN r.tenant_code = $2 THEN 0 ELSE 1 END, length(o.path) DESC
             LIMIT 1{lock}"
        );
        let region_id: i64 = sqlx::query(&sql)
            .bind(geometry_id.as_str())
            .bind(itinerary.tenant_code.as_str())
            .bind(itinerary.tenant_path)
            .fetch_optional(&mut *tx)
            .await?
            .ok_or(StoreError::NotFound)?
            .try_get("id")?;
        let inserted = sqlx::query(
            "INSERT INTO itinerary_regions (itinerary_id, region_id) VALUES ($1, $2)
             ON CONFLICT (itinerary_id, region_id) DO NOTHING",
        )
        .bind(itinerary.id)
        .bind(region_id)
        .execute(&mut *tx)
        .await?
        .rows_affected();
        if inserted == 0 {
            return Ok(false);
        }
        let count: i64 =
            sqlx::query("SELECT COUNT(*) AS n FROM itinerary_regions WHERE itinerary_id = $1")
                .bind(itinerary.id)
                .fetch_one(&mut *tx)
                .await?
                .try_get("n")?;
        if count > MAX_REGIONS {
            return Err(StoreError::Conflict(format!(
                "an itinerary has at most {MAX_REGIONS} risk regions attached"
            )));
        }
        self.refresh_itinerary(&mut tx, itinerary.scored()).await?;
        tx.commit().await?;
        Ok(true)
    }

    /// Detaches the region with this GeometryId; `NotFound` when none is attached.
    pub async fn detach_region(
        &self,
        itinerary: ItineraryKey<'_>,
        geometry_id: &GeometryId,
        if_match: Option<&str>,
    ) -> StoreResult<()> {
        let mut tx = self.begin_part_write(itinerary, if_match).await?;
        let result = sqlx::query(
            "DELETE FROM itinerary_regions WHERE itinerary_id = $1
               AND region_id IN (SELECT id FROM risk_regions WHERE geometry_id = $2)",
        )
        .bind(itinerary.id)
        .bind(geometry_id.as_str())
        .execute(&mut *tx)
        .await?;
        if result.rows_affected() == 0 {
            return Err(StoreError::NotFound);
        }
        self.refresh_itinerary(&mut tx, itinerary.scored()).await?;
        tx.commit().await?;
        Ok(())
    }
}
